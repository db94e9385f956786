"""Beam search on the engine's state batch (issue 6).

Fixed-width beam search as Gómez-Rodríguez & Nivre (2013, §2.3) describe it: expand every
configuration of the beam by all permissible transitions, keep the ``K`` highest-scoring ones,
stop when all are terminal and return the highest-scoring one; ``K = 1`` is greedy 1-best
search.  A batch of ``S`` sentences is searched as one state batch of ``S x K``
configurations: item ``k`` of sentence ``s`` is configuration ``s * K + k``.  The score of a
derivation is the sum of its actions' log-probabilities, each a log-softmax over the *legal*
actions of the configuration it was taken in (the greedy parser's locally normalised scorer).
Per transition, for the whole batch at once:

1. score every item (the encoder ran once per batch; only the scorer runs per step), mask
   the illegal actions and add the log-probabilities to the item's score: ``K x A``
   successors per sentence;
2. a finished (terminal) item has exactly one successor, itself with its score unchanged, so
   complete derivations of different lengths compete on their final scores;
3. keep the ``K`` best successors of each sentence, ``reorder`` the state to their parents
   (O(1) per configuration on the engine: persistent stacks, back-pointers in the arc log)
   and apply their actions.

**Tie-breaking** is deterministic and device-independent: successors are ranked by (score
descending, parent item ascending, action id ascending), i.e. the first in flat ``parent * A +
action`` order wins a tie, and the kept items are stored in that order (item 0 is the best).
With ``K = 1`` this is exactly the greedy decoder's ``argmax`` (first maximal action).  Scores
are accumulated in float64, so that adding a log-probability to a running total never merges
two successors whose float32 action scores differ (the ranking is the raw scores' ranking).

**The greedy derivation stays in the beam.**  Plain beam search can lose to greedy decoding:
the greedy prefix may fall out of the beam behind prefixes that later finish worse (log-
probabilities are <= 0, so a score only decreases along a derivation).  The beam therefore
tracks the item that continues the greedy derivation and, when it is not among the ``K`` best
successors, it replaces the ``K``-th; the returned derivation never scores below greedy's.

Items with score -inf (fewer than ``K`` live successors, e.g. at the start, when only the
first copy of each sentence is live) are dead: they are frozen (``apply(..., where=alive)``,
so no illegal action ever reaches the engine), never become live and are never returned.  The
loop stops when every live item is terminal, within ``max_transitions`` steps.
"""

from __future__ import annotations

import torch
from torch import Tensor

from neuralparse.model.inputs import EncodedCorpus, ModelInput
from neuralparse.model.parser import ParserModel, summary_features
from neuralparse.model.scorer import mask_illegal
from neuralparse.search.greedy import parse_corpus
from neuralparse.systems import State, TransitionSystem

NEG_INF = float("-inf")


def successor_scores(
    scores: Tensor, raw: Tensor, legal: Tensor, finished: Tensor
) -> tuple[Tensor, Tensor]:
    """``(successors [N, A], masked raw scores [N, A])`` of ``N`` items with float64
    ``scores [N]``, action scores ``raw [N, A]``, ``legal [N, A]`` and ``finished [N]``.

    A live item's successor by a legal action scores ``score + log p(action)`` (log-softmax
    over the legal actions); illegal actions give -inf.  A finished item has one successor,
    in column 0, with its own score (``apply`` ignores terminal configurations).
    """
    masked = mask_illegal(raw, legal)
    successors = scores[:, None] + masked.double().log_softmax(1)
    # Terminal rows have no legal action: mask_illegal left them finite, blank them here.
    successors.masked_fill_(finished[:, None], NEG_INF)
    successors[:, 0] = torch.where(finished, scores, successors[:, 0])
    return successors, masked


def select_successors(successors: Tensor, beam_size: int) -> tuple[Tensor, Tensor]:
    """``(scores [S, K], flat indices [S, K])`` of the ``K`` best of each row of
    ``successors [S, K * A]``, ranked by (score descending, flat index ascending).

    ``topk`` finds the ``K``-th best value cheaply but leaves ties at that value in an
    unspecified order, so rows with a *finite* tie across the cut (more than ``K`` successors
    scoring at least the ``K``-th value) are re-ranked with a stable full sort; ties among -inf
    successors only pick dead items, which never affect the result.
    """
    values, index = successors.topk(beam_size, dim=1)
    kth = values[:, -1:]
    # Order the kept successors by (score desc, index asc): sort by index, then stable-sort
    # by score (K elements per row).
    by_index = index.argsort(dim=1)
    index, values = index.gather(1, by_index), values.gather(1, by_index)
    by_score = values.sort(dim=1, descending=True, stable=True).indices
    index, values = index.gather(1, by_score), values.gather(1, by_score)
    tied = ((successors >= kth).sum(1) > beam_size) & torch.isfinite(kth[:, 0])
    if bool(tied.any()):
        rows = tied.nonzero()[:, 0]
        exact = successors[rows].sort(dim=1, descending=True, stable=True)
        index[rows] = exact.indices[:, :beam_size]
        values[rows] = exact.values[:, :beam_size]
    return values, index


def keep_greedy(
    values: Tensor, index: Tensor, greedy_successor: Tensor, greedy_score: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """Put each row's greedy successor (flat index ``greedy_successor [S]``, score
    ``greedy_score [S]``) in place of the ``K``-th kept one when it was not kept; returns
    ``(values, index, position of the greedy successor [S])``.  Its score is at most the
    ``K``-th kept score, so the row stays sorted."""
    missing = ~(index == greedy_successor[:, None]).any(1)
    index[:, -1] = torch.where(missing, greedy_successor, index[:, -1])
    values[:, -1] = torch.where(missing, greedy_score, values[:, -1])
    position = (index == greedy_successor[:, None]).long().argmax(1)
    return values, index, position


@torch.inference_mode()
def beam_decode(
    model: ParserModel, system: TransitionSystem, batch: ModelInput, beam_size: int
) -> tuple[Tensor, Tensor, Tensor]:
    """Heads and label ids ``[S, n_max + 1]`` (column 0 unused) of the best derivation found
    for each of the ``S`` sentences of a batch already on the model's device, and its score
    ``[S]`` (float64 sum of action log-probabilities).  See the module docstring."""
    if beam_size < 1:
        raise ValueError(f"beam_size must be positive, got {beam_size}")
    table = model.encode(batch)
    sentences, device = batch.lengths.shape[0], batch.lengths.device
    k = beam_size
    state: State = system.initial(batch.lengths.repeat_interleave(k), device)
    # Items never leave their sentence, so each item's row in the encoded table is fixed.
    rows = torch.arange(sentences, device=device).repeat_interleave(k)
    first_item = torch.arange(sentences, device=device) * k
    scores = torch.full((sentences, k), NEG_INF, dtype=torch.float64, device=device)
    scores[:, 0] = 0.0  # only the first copy of each sentence is live at the start
    scores = scores.flatten()
    greedy_item = torch.zeros(sentences, dtype=torch.long, device=device)
    n_actions = system.num_actions
    for _ in range(system.max_transitions(state.n_max)):
        finished = system.terminal(state)
        if bool((finished | torch.isinf(scores)).all()):
            break
        legal = system.legal(state)
        summary = summary_features(system, state) if model.n_summary else None
        raw = model.score(table, rows, system.features(state), summary)
        successors, masked = successor_scores(scores, raw, legal, finished)
        # The greedy derivation's next action: greedy_decode's argmax (column 0 when done).
        greedy_rows = first_item + greedy_item
        greedy_action = torch.where(finished[greedy_rows], 0, masked[greedy_rows].argmax(1))
        greedy_successor = greedy_item * n_actions + greedy_action
        successors = successors.view(sentences, k * n_actions)
        greedy_score = successors.gather(1, greedy_successor[:, None])[:, 0]
        values, index = select_successors(successors, k)
        values, index, greedy_item = keep_greedy(values, index, greedy_successor, greedy_score)
        state = system.reorder(state, (first_item[:, None] + index // n_actions).flatten())
        scores = values.flatten()
        system.apply(state, (index % n_actions).flatten(), torch.isfinite(scores))
    finished = system.terminal(state)
    done = torch.where(finished, scores, NEG_INF).view(sentences, k)
    # argmax returns the first maximal item: ties go to the earlier item in the beam's order.
    best_item = done.argmax(1)
    best_score = done.gather(1, best_item[:, None])[:, 0]
    if not bool(torch.isfinite(best_score).all()):
        raise RuntimeError(f"{system.name}: beam search did not terminate")
    best = system.reorder(state, first_item + best_item)
    heads, labels = system.heads_and_labels(best)
    return heads, labels, best_score


def beam_parse_corpus(
    model: ParserModel,
    system: TransitionSystem,
    corpus: EncodedCorpus,
    *,
    beam_size: int = 8,
    batch_tokens: int = 8000,
    device: torch.device | str = "cpu",
) -> list[tuple[list[int], list[str | None]]]:
    """Beam-search parses of ``corpus``, as :func:`~neuralparse.search.greedy.parse_corpus`
    returns them (``batch_tokens`` counts words before the ``beam_size`` copies)."""
    return parse_corpus(
        model,
        system,
        corpus,
        lambda batch: beam_decode(model, system, batch, beam_size)[:2],
        batch_tokens=batch_tokens,
        device=device,
    )
