"""MLP action scorer over BiLSTM vectors at a system's feature positions (K&G 2016 §4).

The first MLP layer is linear in the concatenation ``[v_f1; ...; v_fF]`` of the gathered
vectors, i.e. ``sum_f W_f v_f``.  :meth:`Scorer.project` therefore computes ``W_f v`` once per
token and feature slot (Chen & Manning 2014 §3.3's pre-computation trick), and scoring a
configuration only gathers and adds ``F`` rows: the cost per transition is independent of
the BiLSTM width, and a sentence is projected once however many transitions it takes.
Feature index -1 (nothing there) reads a learned null vector.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from neuralparse.model.dropout import Dropout

NEG_INF = float("-inf")


@dataclass
class TokenTable:
    """Projected token vectors of a batch: ``rows [M, F, hidden]`` where row
    ``b * width + t`` is token ``t`` (0 = root) of sentence ``b`` and the last row is null;
    with decoding's arc term, also the arc scorer's head log-probabilities of the batch."""

    rows: Tensor
    width: int
    arc_log_probs: Tensor | None = None
    """``[B, width - 1, width]``: log P(head of word ``i + 1`` is ``h``) in row ``i``, column
    ``h`` (:meth:`neuralparse.model.arcs.ArcScorer.head_log_probs`), or None."""
    arc_weight: float = 0.0
    """The weight of the arc term in decoding (:mod:`neuralparse.search.arc_term`), with
    ``arc_log_probs``."""

    def in_float32(self) -> TokenTable:
        """This table with float32 rows (a projection computed in bfloat16 has bfloat16 rows,
        which the search's sums and scores would round)."""
        if self.rows.dtype == torch.float32:
            return self
        arcs = self.arc_log_probs
        arcs = None if arcs is None else arcs.float()
        return TokenTable(self.rows.float(), self.width, arcs, self.arc_weight)

    @property
    def null_row(self) -> int:
        return self.rows.shape[0] - 1

    def flat_index(self, sentence: Tensor, tokens: Tensor) -> Tensor:
        """Row of each feature: ``sentence [S]`` batch positions, ``tokens [S, F]`` (-1 null)."""
        return torch.where(tokens >= 0, sentence[:, None] * self.width + tokens, self.null_row)


class Scorer(nn.Module):
    """Scores every action of a system from its ``n_features`` feature positions."""

    def __init__(
        self,
        input_dim: int,
        n_features: int,
        hidden: int,
        n_actions: int,
        dropout: float,
        n_summary: int = 0,
    ) -> None:
        super().__init__()
        # Per-configuration summary features (three-step's valency summary) enter the hidden
        # layer linearly, next to the token features.
        self.summary = nn.Linear(n_summary, hidden, bias=False) if n_summary else None
        self.n_features = n_features
        self.hidden = hidden
        self.null = nn.Parameter(torch.randn(input_dim) * 0.1)
        self.first = nn.Linear(input_dim, n_features * hidden, bias=False)
        self.bias = nn.Parameter(torch.zeros(hidden))
        self.dropout = Dropout(dropout)
        self.out = nn.Linear(hidden, n_actions)

    def project(self, encoded: Tensor) -> TokenTable:
        """``encoded [B, W, D]`` BiLSTM vectors -> the :class:`TokenTable`."""
        batch, width, dim = encoded.shape
        flat = torch.cat([encoded.reshape(batch * width, dim), self.null[None]], 0)
        rows = self.first(flat).view(-1, self.n_features, self.hidden)
        return TokenTable(rows, width)

    def forward(
        self,
        table: TokenTable,
        sentence: Tensor,
        tokens: Tensor,
        summary: Tensor | None = None,
        actions: Tensor | None = None,
    ) -> Tensor:
        """``[S, A]`` action scores for configurations of sentence ``sentence [S]`` with
        feature tokens ``tokens [S, F]`` (and summary features ``[S, E]`` when the scorer has
        them); ``[S, A']`` for the actions ``actions [A']`` alone when given."""
        index = table.flat_index(sentence, tokens)
        slots = torch.arange(self.n_features, device=index.device)
        # Gather-and-sum in one fused op (cheaper backward than indexing then summing).
        summed = F.embedding_bag(
            index * self.n_features + slots, table.rows.view(-1, self.hidden), mode="sum"
        )
        if self.summary is not None:
            if summary is None:
                raise ValueError("this scorer needs the system's summary features")
            summed = summed + self.summary(summary)
        hidden = self.dropout(torch.tanh(summed + self.bias))
        if actions is None:
            return self.out(hidden)
        return F.linear(hidden, self.out.weight[actions], self.out.bias[actions])


def mask_illegal(scores: Tensor, legal: Tensor) -> Tensor:
    """Scores with illegal actions at -inf (rows without any legal action are left as they
    are, so a softmax over them stays finite)."""
    has_legal = legal.any(1, keepdim=True)
    return scores.masked_fill(~legal & has_legal, NEG_INF)
