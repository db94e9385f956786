"""Beam search on the engine's state batch.

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

**Decided sentences leave the batch.**  Scores never increase along a derivation, so once a
sentence's best finished item scores strictly above all its unfinished ones, no later step can
change its result.  When a quarter of the batch's sentences are decided, their results are
read off and the state is reordered to the other sentences' items only, so that the steps
left cost nothing for them (a batch of sentences of similar length still has derivations of
different lengths).  The results are those of searching on (``compact=False``), up to the
float rounding that any change of batch shape may bring to the scorer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Unpack

import torch
from torch import Tensor

from neuralparse.model.inputs import EncodedCorpus, ModelInput
from neuralparse.model.parser import ParserModel, summary_features
from neuralparse.model.scorer import TokenTable, mask_illegal
from neuralparse.search.arc_term import with_arc_term
from neuralparse.search.greedy import CorpusOptions, parse_corpus
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


def ranked_successors(successors: Tensor, beam_size: int) -> tuple[Tensor, Tensor]:
    """``(scores [S, K], flat indices [S, K])`` of the ``K`` best of each row of
    ``successors [S, K * A]``, ranked by (score descending, flat index ascending): a stable
    sort of the whole row, with no host synchronisation (what a CUDA graph can record)."""
    exact = successors.sort(dim=1, descending=True, stable=True)
    return exact.values[:, :beam_size], exact.indices[:, :beam_size]


def select_successors(successors: Tensor, beam_size: int) -> tuple[Tensor, Tensor]:
    """:func:`ranked_successors`, cheaper: ``topk`` finds the ``K``-th best value but leaves
    ties at that value in an unspecified order, so only the rows with a *finite* tie across
    the cut (more than ``K`` successors scoring at least the ``K``-th value) are ranked by the
    full stable sort; ties among -inf successors only pick dead items, which never affect the
    result.  Asking whether any row is tied reads a value on the host.
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
        values[rows], index[rows] = ranked_successors(successors[rows], beam_size)
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


def best_finished(scores: Tensor, finished: Tensor, beam_size: int) -> tuple[Tensor, Tensor]:
    """``(item [S], score [S])`` of each sentence's best finished item (the first of equal
    ones; score -inf where none is finished)."""
    done = torch.where(finished, scores, NEG_INF).view(-1, beam_size)
    item = done.argmax(1)  # the first maximal item: ties go to the earlier one
    return item, done.gather(1, item[:, None])[:, 0]


def decided(scores: Tensor, finished: Tensor, beam_size: int) -> Tensor:
    """``[S]`` whether a sentence's best finished item scores strictly above every unfinished
    item of its beam (dead items score -inf), so that its result can no longer change."""
    _, best = best_finished(scores, finished, beam_size)
    pending = torch.where(finished, NEG_INF, scores).view(-1, beam_size).max(1).values
    return best > pending


@torch.inference_mode()
def beam_decode(
    model: ParserModel,
    system: TransitionSystem,
    batch: ModelInput,
    beam_size: int,
    *,
    compact: bool = True,
    table: TokenTable | None = None,
    max_steps: int | None = None,
    sentences: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Heads and label ids ``[S, n_max + 1]`` (column 0 unused) of the best derivation found
    for each of the ``S`` sentences of a batch already on the model's device, and its score
    ``[S]`` (float64 sum of action log-probabilities).  See the module docstring;
    ``compact=False`` keeps decided sentences in the batch (the same results, slower);
    ``table`` is the batch already encoded; ``sentences`` (indices into the batch) searches
    only those, one result each in that order.  ``max_steps``, a hook for measurements
    (:mod:`benchmarks`), stops after that many transitions, finished or not (sentences with
    no finished item then score -inf, and no error is raised)."""
    if beam_size < 1:
        raise ValueError(f"beam_size must be positive, got {beam_size}")
    table = table if table is not None else model.encode(batch)
    device = batch.lengths.device
    rows = torch.arange(batch.lengths.shape[0], device=device) if sentences is None else sentences
    k = beam_size
    state: State = system.initial(batch.lengths[rows].repeat_interleave(k), device)
    n_max = state.n_max
    results = _Results(rows.shape[0], n_max, device)
    # The searched sentences (their places in ``rows``) still searched, in order.
    searched = torch.arange(rows.shape[0], device=device)
    beam = _Beam.start(rows, k)
    limit = system.max_transitions(n_max)
    for _ in range(limit if max_steps is None else min(limit, max_steps)):
        finished = system.terminal(state)
        if bool((finished | torch.isinf(beam.scores)).all()):
            break
        if compact:
            ready = decided(beam.scores, finished, k)
            if 4 * int(ready.sum()) >= searched.shape[0]:
                results.store(system, state, searched[ready], beam.scores, finished, ready, k)
                keep = ~ready
                items = (beam.first_item[keep, None] + torch.arange(k, device=device)).flatten()
                state, finished = system.reorder(state, items), finished[items]
                searched, beam = searched[keep], beam.keep(keep, items)
                if not searched.shape[0]:
                    break
        state = beam.step(model, system, table, state, finished, select_successors)
    if searched.shape[0]:
        finished = system.terminal(state)
        everyone = torch.ones_like(searched, dtype=torch.bool)
        results.store(system, state, searched, beam.scores, finished, everyone, k)
    if max_steps is None and not bool(torch.isfinite(results.scores).all()):
        raise RuntimeError(f"{system.name}: beam search did not terminate")
    return results.heads, results.labels, results.scores


def fixed_length_beam(
    model: ParserModel, system: TransitionSystem, table: TokenTable, lengths: Tensor, beam_size: int
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """:func:`beam_decode` for exactly ``max_transitions(table.width - 1)`` steps, with no
    host synchronisation (the body that a CUDA graph records): heads and label ids
    ``[S, table.width]``, scores ``[S]``, and ``[S]`` whether a sentence is still undecided
    (:func:`decided`).  The extra steps change nothing (a finished item is its own only
    successor, dead items stay frozen), and the successors are ranked by the same order, so
    the results of the decided sentences are those of ``beam_decode(..., compact=False)``.
    Only a :meth:`~neuralparse.systems.TransitionSystem.for_graphs` variant leaves sentences
    undecided: swap's, whose budget of swaps can leave an unfinished item above the best
    finished one, and two-registers', which gives up an item where its mask would need the
    host.  A sentence is decided only if its best finished item also scores strictly above
    every item ever given up: scores never increase along a derivation, so the eager search's
    items scoring at least as high are the same at every step (a given-up item's successors
    score below them and can only displace lower items), hence its best finished item too.
    The results of undecided sentences are unfinished."""
    device = lengths.device
    state = system.initial(lengths.repeat_interleave(beam_size), device, n_max=table.width - 1)
    beam = _Beam.start(torch.arange(lengths.shape[0], device=device), beam_size)
    for _ in range(system.max_transitions(state.n_max)):
        finished = system.terminal(state)
        state = beam.step(model, system, table, state, finished, ranked_successors)
    finished = system.terminal(state)
    item, score = best_finished(beam.scores, finished, beam_size)
    heads, labels = system.heads_and_labels(system.reorder(state, beam.first_item + item))
    outscored = beam.abandoned_score >= score  # an item given up might have won
    return heads, labels, score, ~decided(beam.scores, finished, beam_size) | outscored


@dataclass
class _Beam:
    """The search's book-keeping beside the state batch: each item's score (float64), its
    sentence's row in the encoded table, each sentence's first item, where the greedy
    derivation is in each beam, and the best score of an item of the sentence given up so far
    (:meth:`~neuralparse.systems.TransitionSystem.abandoned`; -inf when none was)."""

    beam_size: int
    scores: Tensor
    rows: Tensor
    first_item: Tensor
    greedy_item: Tensor
    abandoned_score: Tensor

    @classmethod
    def start(cls, rows: Tensor, beam_size: int) -> _Beam:
        """The beams of the sentences at ``rows [S]`` of the encoded table."""
        sentences, device = rows.shape[0], rows.device
        scores = torch.full((sentences, beam_size), NEG_INF, dtype=torch.float64, device=device)
        scores[:, 0] = 0.0  # only the first copy of each sentence is live at the start
        return cls(
            beam_size,
            scores.flatten(),
            rows.repeat_interleave(beam_size),
            torch.arange(sentences, device=device) * beam_size,
            torch.zeros(sentences, dtype=torch.long, device=device),
            torch.full((sentences,), NEG_INF, dtype=torch.float64, device=device),
        )

    def keep(self, sentences: Tensor, items: Tensor) -> _Beam:
        """The beams of the ``sentences [S]`` (bool) kept, whose items are ``items``."""
        kept = int(sentences.sum())
        first_item = torch.arange(kept, device=items.device) * self.beam_size
        return _Beam(
            self.beam_size,
            self.scores[items],
            self.rows[items],
            first_item,
            self.greedy_item[sentences],
            self.abandoned_score[sentences],
        )

    def step(
        self,
        model: ParserModel,
        system: TransitionSystem,
        table: TokenTable,
        state: State,
        finished: Tensor,
        select: Callable[[Tensor, int], tuple[Tensor, Tensor]],
    ) -> State:
        """One transition of the search (steps 1-3 of the module docstring), ranking the
        successors with ``select``; returns the new state and updates the book-keeping."""
        k, n_actions = self.beam_size, system.num_actions
        legal = system.legal(state)
        # A for_graphs variant gives up the items whose mask it cannot decide without the
        # host: each becomes its own only successor, and its score is remembered.
        given_up = system.abandoned(state) & ~finished
        finished = finished | given_up
        lost = torch.where(given_up, self.scores, NEG_INF).view(-1, k).max(1).values
        self.abandoned_score = torch.maximum(self.abandoned_score, lost)
        summary = summary_features(system, state) if model.n_summary else None
        features = system.features(state)
        raw = model.score(table, self.rows, features, summary)
        if table.arc_log_probs is not None:
            raw = with_arc_term(system, table, self.rows, features, raw, legal, table.arc_weight)
        successors, masked = successor_scores(self.scores, raw, legal, finished)
        # The greedy derivation's next action: greedy_decode's argmax (column 0 when done).
        greedy_rows = self.first_item + self.greedy_item
        greedy_action = torch.where(finished[greedy_rows], 0, masked[greedy_rows].argmax(1))
        greedy_successor = self.greedy_item * n_actions + greedy_action
        successors = successors.view(-1, k * n_actions)
        greedy_score = successors.gather(1, greedy_successor[:, None])[:, 0]
        values, index = select(successors, k)
        values, index, self.greedy_item = keep_greedy(values, index, greedy_successor, greedy_score)
        state = system.reorder(state, (self.first_item[:, None] + index // n_actions).flatten())
        self.scores = values.flatten()
        system.apply(state, (index % n_actions).flatten(), torch.isfinite(self.scores))
        return state


class _Results:
    """The best derivations of a batch's sentences, filled as sentences are decided."""

    def __init__(self, sentences: int, n_max: int, device: torch.device) -> None:
        self.heads = torch.full((sentences, n_max + 1), -1, dtype=torch.long, device=device)
        self.labels = self.heads.clone()
        self.scores = torch.full((sentences,), NEG_INF, dtype=torch.float64, device=device)

    def store(
        self,
        system: TransitionSystem,
        state: State,
        sentences: Tensor,
        scores: Tensor,
        finished: Tensor,
        chosen: Tensor,
        beam_size: int,
    ) -> None:
        """Record the best finished item of the ``chosen [S']`` sentences of ``state``
        (batch sentences ``sentences``)."""
        item, score = best_finished(scores, finished, beam_size)
        first = torch.arange(chosen.shape[0], device=chosen.device)[chosen] * beam_size
        best = system.reorder(state, first + item[chosen])
        heads, labels = system.heads_and_labels(best)
        self.heads[sentences, : heads.shape[1]] = heads
        self.labels[sentences, : labels.shape[1]] = labels
        self.scores[sentences] = score[chosen]


def beam_parse_corpus(
    model: ParserModel,
    system: TransitionSystem,
    corpus: EncodedCorpus,
    *,
    beam_size: int = 8,
    **options: Unpack[CorpusOptions],
) -> list[tuple[list[int], list[str | None]]]:
    """Beam-search parses of ``corpus``, as :func:`~neuralparse.search.greedy.parse_corpus`
    returns them (its ``batch_tokens`` counts words before the ``beam_size`` copies)."""
    return parse_corpus(
        model,
        system,
        corpus,
        lambda batch, table: beam_decode(model, system, batch, beam_size, table=table)[:2],
        **options,
    )
