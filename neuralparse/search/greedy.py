"""Greedy decoding on the engine's state batch, and corpus-level parsing for any decoder.

The encoder runs once per batch; then one loop iteration per transition advances every
sentence of the batch at once: feature gathering, scoring, masking of illegal actions and the
argmax are tensor operations, with no per-sentence Python work.  Illegal-action masking
(every non-terminal configuration has a legal action, and every legal sequence terminates
within ``max_transitions``) guarantees a well-formed tree for every sentence.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TypedDict, Unpack

import torch
from torch import Tensor

from neuralparse.model.inputs import EncodedCorpus, ModelInput
from neuralparse.model.parser import ParserModel, summary_features
from neuralparse.model.scorer import TokenTable, mask_illegal
from neuralparse.runtime.batching import token_batches
from neuralparse.runtime.devices import batch_to_device
from neuralparse.search.arc_term import with_arc_term
from neuralparse.systems import State, TransitionSystem

TERMINAL_CHECK_EVERY = 16
"""Steps between termination checks on an accelerator (every step on the CPU)."""

Timer = Callable[[str], AbstractContextManager[object]]
"""A hook that times the parts of decoding: ``timer(part)`` is a context manager around the
work of ``part`` (``"encoder"``, ``"scorer"`` or ``"state"``), e.g. a profiler's."""

_NOT_TIMED = nullcontext()


def _not_timed(part: str) -> AbstractContextManager[object]:
    return _NOT_TIMED


@torch.inference_mode()
def greedy_decode(
    model: ParserModel, system: TransitionSystem, batch: ModelInput, table: TokenTable | None = None
) -> tuple[Tensor, Tensor]:
    """Heads and label ids ``[B, n_max + 1]`` (column 0 unused) of the greedy parses of a
    batch already on the model's device (``table``: the batch already encoded)."""
    heads, labels, _ = greedy_decode_counted(model, system, batch, table)
    return heads, labels


def greedy_step(
    model: ParserModel,
    system: TransitionSystem,
    table: TokenTable,
    rows: Tensor,
    state: State,
    timer: Timer = _not_timed,
) -> None:
    """One transition for every configuration of ``state``: the best legal action of each
    (``rows [B]``: each configuration's sentence in ``table``); ``timer`` times its parts."""
    with timer("state"):
        summary = summary_features(system, state) if model.n_summary else None
        features = system.features(state)
        scored = system.scored_actions(state)
    with timer("scorer"):
        scores = model.score(table, rows, features, summary, scored)
    with timer("state"):
        legal = system.legal(state)
        if scored is not None:
            legal = legal.index_select(1, scored)
    with timer("scorer"):
        if table.arc_log_probs is not None:
            weight = table.arc_weight
            scores = with_arc_term(system, table, rows, features, scores, legal, weight, scored)
        best = mask_illegal(scores, legal).argmax(1)
        actions = best if scored is None else scored[best]
    with timer("state"):
        system.apply(state, actions)


@torch.inference_mode()
def greedy_decode_counted(
    model: ParserModel,
    system: TransitionSystem,
    batch: ModelInput,
    table: TokenTable | None = None,
    *,
    timer: Timer | None = None,
    max_steps: int | None = None,
    sentences: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """:func:`greedy_decode` plus the transitions each row actually took ``[B]``: the
    abstract running time of the trained parser (Nivre 2009 §4.1, Figure 5, white dots).
    ``sentences`` (indices into the batch) decodes only those, one row each in that order.

    Hooks for measurements (:mod:`benchmarks`): ``timer`` times the encoder, the scorer and
    the state operations (:data:`Timer`); ``max_steps`` stops after that many transitions,
    finished or not (the trees are then incomplete, and no error is raised)."""
    timed = timer or _not_timed
    if table is None:
        with timed("encoder"):
            table = model.encode(batch)
    lengths = batch.lengths if sentences is None else batch.lengths[sentences]
    with timed("state"):
        state = system.initial(lengths, lengths.device)
    rows = torch.arange(state.batch_size, device=state.device) if sentences is None else sentences
    # Asking whether all are terminal makes the host wait for the device; on a GPU, ask
    # every few steps so that the host can queue steps ahead (extra steps are no-ops).
    check_every = 1 if state.device.type == "cpu" else TERMINAL_CHECK_EVERY
    limit = system.max_transitions(state.n_max)
    for step in range(limit if max_steps is None else min(limit, max_steps)):
        if step % check_every == 0:
            with timed("state"):
                done = bool(system.terminal(state).all())
            if done:
                break
        greedy_step(model, system, table, rows, state, timed)
    if max_steps is None and not bool(system.terminal(state).all()):
        raise RuntimeError(f"{system.name}: greedy decoding did not terminate")
    heads, labels = system.heads_and_labels(state)
    return heads, labels, state.scalars["steps"].clone()


@dataclass(frozen=True)
class CorpusParse:
    """One sentence parsed by :func:`parse_corpus_with_tags`: heads and label names (``None``
    for an unlabeled system) of words 1..n, and ``{column: class index}`` lists of the tags
    the model predicts (empty for a gold-tag model)."""

    heads: list[int]
    labels: list[str | None]
    tags: dict[str, list[int]]


Decoder = Callable[[ModelInput, TokenTable], tuple[Tensor, Tensor]]
"""A decoder of :func:`parse_corpus`: a batch on the model's device and its encoded token
table -> heads and label ids ``[B, n_max + 1]``."""


class CorpusOptions(TypedDict, total=False):
    """Keyword options of the corpus parsers (:func:`parse_corpus_with_tags`)."""

    batch_tokens: int
    """Words per batch (default 8000)."""
    device: torch.device | str
    """Where to parse (default the CPU)."""


@torch.inference_mode()
def parse_corpus_with_tags(
    model: ParserModel,
    system: TransitionSystem,
    corpus: EncodedCorpus,
    decode: Decoder | None = None,
    *,
    batch_tokens: int = 8000,
    device: torch.device | str = "cpu",
) -> list[CorpusParse]:
    """Trees and predicted tags of every sentence of ``corpus``, in corpus order, with
    ``decode`` (default: greedy decoding); sentences are batched by length (``batch_tokens``
    words per batch) and each batch is encoded once for the tagger and the decoder."""
    decode = decode or greedy_decoder(model, system)
    device = torch.device(device)
    was_training = model.training
    model.eval()
    results: list[CorpusParse | None] = [None] * len(corpus)
    try:
        char_vectors = model.char_vectors(corpus, device)
        for ids in token_batches(corpus.lengths, batch_tokens, shuffle=False):
            batch = batch_to_device(corpus.batch(ids, char_vectors), device)
            table, tag_scores = model.encode_and_tag(batch)
            heads, labels = decode(batch, table)
            heads, labels = heads.cpu().tolist(), labels.cpu().tolist()
            tags = {name: t.cpu().tolist() for name, t in model.best_tags(tag_scores).items()}
            for row, sentence_id in enumerate(ids.tolist()):
                n = int(corpus.lengths[sentence_id])
                names = [system.labels[k] if k >= 0 else None for k in labels[row][1 : n + 1]]
                results[sentence_id] = CorpusParse(
                    heads[row][1 : n + 1], names, {c: t[row][:n] for c, t in tags.items()}
                )
    finally:
        model.train(was_training)
    return results  # type: ignore[return-value]  # every index was filled by some batch


def parse_corpus(
    model: ParserModel,
    system: TransitionSystem,
    corpus: EncodedCorpus,
    decode: Decoder | None = None,
    **options: Unpack[CorpusOptions],
) -> list[tuple[list[int], list[str | None]]]:
    """``(heads, labels)`` of every sentence of ``corpus`` (see
    :func:`parse_corpus_with_tags`)."""
    parses = parse_corpus_with_tags(model, system, corpus, decode, **options)
    return [(p.heads, p.labels) for p in parses]


def greedy_parse_corpus(
    model: ParserModel,
    system: TransitionSystem,
    corpus: EncodedCorpus,
    **options: Unpack[CorpusOptions],
) -> list[tuple[list[int], list[str | None]]]:
    """Greedy parses of ``corpus`` (:func:`parse_corpus` with its default decoder)."""
    return parse_corpus(model, system, corpus, **options)


def greedy_decoder(model: ParserModel, system: TransitionSystem) -> Decoder:
    """:func:`greedy_decode` as a :data:`Decoder` of :func:`parse_corpus`."""
    return lambda batch, table: greedy_decode(model, system, batch, table)
