"""Tensor operators per greedy step of each system's state operations, counted on the CPU.

Each operator the dispatcher runs is one kernel launch on a GPU, so this count is what a
transition costs there beyond the scorer when the step is launch-bound (the eager loop), and
the number of kernels a CUDA graph replays per step.  Unlike a timing it is exact and the same
on any machine.  For each system: uniformly random legal walks over ``--sentences`` sentences
of random lengths up to ``--max-length`` words, and for every step the operators of
``features``, ``legal`` and ``apply`` (the three calls of a greedy step), averaged over the
steps; the last column is the total against arc-eager's.

    python -m benchmarks.step_operators [--systems arc_eager three_step] [--json]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from neuralparse.systems import SYSTEMS, get_system, random_actions

LABELS = ("root", "nsubj", "obj", "det", "amod", "advmod", "case", "nmod", "punct", "conj")
PARTS = ("features", "legal", "apply")
BASELINE = "arc_eager"


class OperatorCount(TorchDispatchMode):
    """Counts the operators dispatched while it is active."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.count += 1
        return func(*args, **(kwargs or {}))


def counted(work: Callable[[], object]) -> int:
    with OperatorCount() as census:
        work()
    return census.count


def step_operators(name: str, sentences: int, max_length: int, seed: int) -> dict[str, float]:
    """Mean operators per step of ``features``, ``legal`` and ``apply`` of system ``name``."""
    system = get_system(name, LABELS)
    generator = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, max_length + 1, (sentences,), generator=generator)
    state = system.initial(lengths, n_max=max_length)
    totals = dict.fromkeys(PARTS, 0)
    steps = 0
    for _ in range(system.max_transitions(max_length)):
        if bool(system.terminal(state).all()):
            break
        actions = random_actions(system.legal(state), generator)
        totals["features"] += counted(lambda: system.features(state))
        totals["legal"] += counted(lambda: system.legal(state))
        totals["apply"] += counted(lambda: system.apply(state, actions))  # noqa: B023
        steps += 1
    return {part: totals[part] / max(steps, 1) for part in PARTS}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--systems", nargs="+", default=sorted(SYSTEMS), choices=sorted(SYSTEMS))
    parser.add_argument("--sentences", type=int, default=16)
    parser.add_argument("--max-length", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    names = list(dict.fromkeys([BASELINE, *args.systems]))
    rows = {
        name: step_operators(name, args.sentences, args.max_length, args.seed) for name in names
    }
    base = sum(rows[BASELINE].values())
    for row in rows.values():
        row["total"] = sum(row[part] for part in PARTS)
        row["total_to_arc_eager"] = row["total"] / base
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'system':14s} {'features':>9s} {'legal':>7s} {'apply':>7s} {'total':>7s} {'/AE':>5s}")
    for name, row in rows.items():
        cells = " ".join(f"{row[part]:{w}.0f}" for part, w in zip(PARTS, (9, 7, 7), strict=True))
        print(f"{name:14s} {cells} {row['total']:7.0f} {row['total_to_arc_eager']:5.2f}")
    print(
        f"operators per greedy step, random legal walks over {args.sentences} sentences of "
        f"1-{args.max_length} words"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
