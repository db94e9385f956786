"""Greedy decoding on the engine's state batch, and corpus-level parsing for any decoder.

The encoder runs once per batch; then one loop iteration per transition advances every
sentence of the batch at once: feature gathering, scoring, masking of illegal actions and the
argmax are tensor operations, with no per-sentence Python work.  Illegal-action masking
(every non-terminal configuration has a legal action, and every legal sequence terminates
within ``max_transitions``) guarantees a well-formed tree for every sentence.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from neuralparse.model.inputs import EncodedCorpus, ModelInput
from neuralparse.model.parser import ParserModel, summary_features
from neuralparse.model.scorer import TokenTable, mask_illegal
from neuralparse.systems import State, TransitionSystem
from neuralparse.training.batching import token_batches

TERMINAL_CHECK_EVERY = 16
"""Steps between termination checks on an accelerator (every step on the CPU)."""


@torch.inference_mode()
def greedy_decode(
    model: ParserModel, system: TransitionSystem, batch: ModelInput
) -> tuple[Tensor, Tensor]:
    """Heads and label ids ``[B, n_max + 1]`` (column 0 unused) of the greedy parses of a
    batch already on the model's device."""
    heads, labels, _ = greedy_decode_counted(model, system, batch)
    return heads, labels


def greedy_step(
    model: ParserModel, system: TransitionSystem, table: TokenTable, rows: Tensor, state: State
) -> None:
    """One transition for every configuration of ``state``: the best legal action of each
    (``rows [B]``: each configuration's sentence in ``table``)."""
    summary = summary_features(system, state) if model.n_summary else None
    scores = model.score(table, rows, system.features(state), summary)
    system.apply(state, mask_illegal(scores, system.legal(state)).argmax(1))


@torch.inference_mode()
def greedy_decode_counted(
    model: ParserModel, system: TransitionSystem, batch: ModelInput
) -> tuple[Tensor, Tensor, Tensor]:
    """:func:`greedy_decode` plus the transitions each row actually took ``[B]``: the
    abstract running time of the trained parser (Nivre 2009 §4.1, Figure 5, white dots)."""
    table = model.encode(batch)
    state = system.initial(batch.lengths, batch.lengths.device)
    rows = torch.arange(state.batch_size, device=state.device)
    # Asking whether all are terminal makes the host wait for the device; on a GPU, ask
    # every few steps so that the host can queue steps ahead (extra steps are no-ops).
    check_every = 1 if state.device.type == "cpu" else TERMINAL_CHECK_EVERY
    for step in range(system.max_transitions(state.n_max)):
        if step % check_every == 0 and bool(system.terminal(state).all()):
            break
        greedy_step(model, system, table, rows, state)
    if not bool(system.terminal(state).all()):
        raise RuntimeError(f"{system.name}: greedy decoding did not terminate")
    heads, labels = system.heads_and_labels(state)
    return heads, labels, state.scalars["steps"].clone()


def parse_corpus(
    model: ParserModel,
    system: TransitionSystem,
    corpus: EncodedCorpus,
    decode: Callable[[ModelInput], tuple[Tensor, Tensor]],
    *,
    batch_tokens: int = 8000,
    device: torch.device | str = "cpu",
) -> list[tuple[list[int], list[str | None]]]:
    """``(heads, labels)`` of every sentence of ``corpus``, in corpus order, with ``decode``
    (a batch on the model's device -> heads and label ids ``[B, n_max + 1]``); sentences are
    batched by length (``batch_tokens`` words per batch).  Labels are ``None`` for an
    unlabeled system."""
    device = torch.device(device)
    was_training = model.training
    model.eval()
    results: list[tuple[list[int], list[str | None]]] = [([], [])] * len(corpus)
    try:
        for ids in token_batches(corpus.lengths, batch_tokens, shuffle=False):
            heads, labels = decode(corpus.batch(ids).to(device))
            heads, labels = heads.cpu().tolist(), labels.cpu().tolist()
            for row, sentence_id in enumerate(ids.tolist()):
                n = int(corpus.lengths[sentence_id])
                names = [system.labels[k] if k >= 0 else None for k in labels[row][1 : n + 1]]
                results[sentence_id] = (heads[row][1 : n + 1], names)
    finally:
        model.train(was_training)
    return results


def greedy_parse_corpus(
    model: ParserModel,
    system: TransitionSystem,
    corpus: EncodedCorpus,
    *,
    batch_tokens: int = 8000,
    device: torch.device | str = "cpu",
) -> list[tuple[list[int], list[str | None]]]:
    """Greedy parses of ``corpus`` (see :func:`parse_corpus`)."""
    return parse_corpus(
        model,
        system,
        corpus,
        lambda batch: greedy_decode(model, system, batch),
        batch_tokens=batch_tokens,
        device=device,
    )
