"""Driving a transition system along whole transition sequences, batched on the engine.

The static oracle's run over a batch of trees (:func:`run_oracle`: what training examples,
``python -m neuralparse.oracle`` and the oracle tests read), the replay of given action
sequences (:func:`replay`) and uniformly random legal walks (:func:`random_walks`, the
soundness checks' and benchmarks' source of configurations).  Each step is the system's own
``legal``/``apply`` on :class:`~neuralparse.systems.state.State`, so these cost what parsing
costs per transition.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import Tensor

from neuralparse.systems.state import State

if TYPE_CHECKING:
    from neuralparse.systems.base import TransitionSystem


@dataclass
class OracleResult:
    """Outcome of :func:`run_oracle` for a batch of trees."""

    actions: list[list[int]]
    reproduced: list[bool]
    """The oracle's actions were all legal, it reached a terminal configuration, and the
    heads and labels built equal the gold tree."""
    heads: Tensor
    labels: Tensor


def run_oracle(
    system: TransitionSystem,
    trees: Sequence[tuple[Sequence[int], Sequence[str] | None]],
    device: torch.device | str = "cpu",
) -> OracleResult:
    """Run the static oracle on the engine for a whole batch of trees at once.

    Each step asks ``system.oracle_actions`` for one action per configuration, checks it
    against the legal mask (an illegal choice marks the tree as not reproduced and is replaced
    by the first legal action so that the batch still terminates), applies it, and counts the
    attached dependents from the newest arc-log entry.  Stops when every configuration is
    terminal; ``max_transitions`` bounds the loop.
    """
    device = torch.device(device)
    lengths = [len(h) for h, _ in trees]
    state = system.initial(lengths, device)
    gold = system.gold(trees, device)
    batch = len(trees)
    ok = torch.ones(batch, dtype=torch.bool, device=device)
    taken: list[Tensor] = []
    active_log: list[Tensor] = []
    rows = torch.arange(batch, device=device)
    limit = system.max_transitions(max(lengths, default=0))
    for _ in range(limit):
        active = ~system.terminal(state)
        if not bool(active.any()):
            break
        legal = system.legal(state)
        actions = system.oracle_actions(state, gold)
        chosen_ok = legal[rows, actions.clamp(0, system.num_actions - 1)]
        ok = ok & (chosen_ok | ~active)
        actions = torch.where(chosen_ok, actions, legal.long().argmax(1))
        before = state.log
        system.apply(state, actions)
        entry = state.log
        while entry is not before and entry is not None:  # the step's new log cells
            if entry.kind == "arc":
                dep, head, _ = entry.tensors
                built = dep >= 0
                gold.attached[rows[built], head[built].clamp(min=0)] += 1
            entry = entry.previous
        taken.append(actions)
        active_log.append(active)
    ok = ok & system.terminal(state)
    heads, labels = state.heads_and_labels()
    width = gold.heads.shape[1]
    same = (heads[:, :width] == gold.heads).all(1)
    if system.labels:
        same = same & (labels[:, :width] == gold.labels).all(1)
    ok = ok & same
    if taken:
        actions_t = torch.stack(taken, 1).cpu()
        active_t = torch.stack(active_log, 1).cpu()
        sequences = [actions_t[b][active_t[b]].tolist() for b in range(batch)]
    else:
        sequences = [[] for _ in range(batch)]
    return OracleResult(sequences, ok.cpu().tolist(), heads.cpu(), labels.cpu())


def replay(
    system: TransitionSystem,
    sequences: Sequence[Sequence[int]],
    lengths: Sequence[int],
    device: torch.device | str = "cpu",
) -> tuple[State, list[bool]]:
    """Apply given action sequences on the engine, batched; returns the final state and, per
    configuration, whether every action was legal where it was applied (check
    ``system.terminal`` on the state for whether the sequences were complete)."""
    device = torch.device(device)
    state = system.initial(lengths, device)
    batch = len(sequences)
    steps = max((len(s) for s in sequences), default=0)
    padded = torch.zeros((batch, steps), dtype=torch.long)
    for b, seq in enumerate(sequences):
        padded[b, : len(seq)] = torch.tensor(list(seq), dtype=torch.long)
    padded = padded.to(device)
    seq_len = torch.tensor([len(s) for s in sequences], device=device)
    ok = torch.ones(batch, dtype=torch.bool, device=device)
    rows = torch.arange(batch, device=device)
    for t in range(steps):
        within = seq_len > t
        legal = system.legal(state)
        # An action past the end of a sequence is never legal: terminal states have none.
        ok = ok & (legal[rows, padded[:, t]] | ~within)
        system.apply(state, padded[:, t], within)
    return state, ok.cpu().tolist()


def random_actions(legal: Tensor, generator: torch.Generator | None = None) -> Tensor:
    """One uniformly random legal action per row (0 where no action is legal)."""
    noise = torch.rand(legal.shape, generator=generator, device=legal.device)
    return torch.where(legal, noise, torch.full_like(noise, -1.0)).argmax(1)


def random_walks(
    system: TransitionSystem,
    lengths: Sequence[int] | Tensor,
    *,
    generator: torch.Generator | None = None,
    device: torch.device | str = "cpu",
) -> tuple[State, bool]:
    """Uniformly random legal transition sequences, batched; returns the final state and
    whether every configuration became terminal within ``max_transitions`` (also checking
    that every non-terminal configuration met on the way had a legal action)."""
    state = system.initial(lengths, torch.device(device))
    n_max = int(state.lengths.max().item()) if state.batch_size else 0
    for _ in range(system.max_transitions(n_max)):
        terminal = system.terminal(state)
        if bool(terminal.all()):
            return state, True
        legal = system.legal(state)
        if not bool((legal.any(1) | terminal).all()):
            return state, False
        system.apply(state, random_actions(legal, generator))
    return state, bool(system.terminal(state).all())
