"""An auxiliary arc scorer on the encoder's top layer: a training signal, and a second opinion
in decoding.

A transition scorer learns from the few words its features read at each configuration
(s0, s1, s2, b0 for arc-eager).  Dozat & Manning's (2017) biaffine scorer asks every word's
vector which word is its head and by which relation; trained beside the transition scorer
(``model.arc_loss_weight``), it makes the shared BiLSTM encode each word's attachment, which
the transition scorer then reads.  The trees still come from the transition system; with
``model.arc_decoding_weight`` its head probabilities also weigh the transitions that build
arcs (:mod:`neuralparse.search.arc_term`).
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor, nn

from neuralparse.model.dropout import Dropout

RELATION_HIDDEN = 128
"""Width of the head and dependent MLPs of the relation scores."""


class ArcScores(NamedTuple):
    arcs: Tensor
    """``[B, T, T + 1]``: the score of each word (row ``i`` = word ``i + 1``) taking each
    position as its head (column 0 = the root)."""
    relations: Tensor
    """``[B, T, R]``: the score of each relation for each word and its gold head."""


def _mlp(input_dim: int, hidden: int, dropout: float) -> nn.Sequential:
    return nn.Sequential(nn.Linear(input_dim, hidden), nn.ReLU(), Dropout(dropout))


class ArcScorer(nn.Module):
    """Biaffine head scores and relation scores given the gold head (Dozat & Manning 2017,
    §2.2; the relations are scored from the two words' MLP vectors side by side)."""

    def __init__(
        self, input_dim: int, n_relations: int, dropout: float, arc_hidden: int = 256
    ) -> None:
        """``arc_hidden``: width of the head and dependent MLPs of the biaffine arc scores."""
        super().__init__()
        self.dependent = _mlp(input_dim, arc_hidden, dropout)
        self.head = _mlp(input_dim, arc_hidden, dropout)
        # Zero-initialised, as Dozat & Manning do: every head starts equally likely.
        self.bilinear = nn.Parameter(torch.zeros(arc_hidden, arc_hidden))
        self.head_bias = nn.Parameter(torch.zeros(arc_hidden))
        self.relation_dependent = _mlp(input_dim, RELATION_HIDDEN, dropout)
        self.relation_head = _mlp(input_dim, RELATION_HIDDEN, dropout)
        self.relation_out = nn.Linear(2 * RELATION_HIDDEN, n_relations)

    def forward(self, vectors: Tensor, heads: Tensor) -> ArcScores:
        """Scores for the encoder's ``vectors [B, T + 1, D]`` (row 0: the root) and the gold
        ``heads [B, T]`` (any value where a batch row is padding)."""
        words = vectors[:, 1:]
        relation_head = self.relation_head(vectors)
        index = heads.clamp(0, vectors.shape[1] - 1)[..., None].expand(-1, -1, RELATION_HIDDEN)
        pair = torch.cat([self.relation_dependent(words), relation_head.gather(1, index)], 2)
        return ArcScores(self._arc_scores(vectors), self.relation_out(pair))

    def _arc_scores(self, vectors: Tensor) -> Tensor:
        dependent = self.dependent(vectors[:, 1:])
        head = self.head(vectors)
        return dependent @ self.bilinear @ head.transpose(1, 2) + (head @ self.head_bias)[:, None]

    def head_log_probs(self, vectors: Tensor, lengths: Tensor) -> Tensor:
        """``[B, T, T + 1]`` log P(head of word ``i + 1`` is ``h``), normalised over the root
        and the words of the sentence (``lengths [B]``); padding heads get -inf."""
        return only_sentence_heads(self._arc_scores(vectors), lengths).log_softmax(2)


def only_sentence_heads(arcs: Tensor, lengths: Tensor) -> Tensor:
    """Arc scores ``[B, T, T + 1]`` with -inf for the heads beyond each sentence's words
    (``lengths [B]``): a word's head is the root or a word of its sentence, never padding."""
    positions = torch.arange(arcs.shape[2], device=arcs.device)
    return arcs.masked_fill(positions[None, None, :] > lengths[:, None, None], float("-inf"))
