"""Time per transition of the engine's state operations alone, against sentence length.

For each system and each length L (default 25, 50, 100, 200, 400) this times, on sentences of
exactly L words:

* greedy: B = 256 configurations; per step the legal mask, one uniformly random legal action
  per configuration, and apply;
* beam: 64 sentences x K = 8 items; one step of the library's beam search
  (:func:`neuralparse.search.beam.beam_decode`, decided sentences kept in the batch) with a
  uniformly random scorer in place of the model: features, the legal mask, the successors'
  scores, the K best successors of each sentence, ``reorder`` to their parents, and apply.
  Terminal items survive with their score (finished hypotheses).

It runs until every configuration is terminal (or ``--max-steps``) and divides the loop's time
by the number of steps; each point is the median of several runs, repeated for short lengths so
that every point covers about as many steps as the longest.  ``--clock cpu`` measures process
CPU time instead of wall time, which is what to use on a shared, busy CPU machine (with
``--threads 1``); on CUDA use the wall clock.  It prints the ratio t(max L) / t(min L) per
system; the target
is <= 1.25 (constant cost per transition).  ``--json`` prints one object with ``greedy_ratio``
and ``beam_ratio`` (the worst over the systems timed), ``per_system`` ratios and the raw
``timings`` (seconds per transition).

    python -m benchmarks.transition_cost [--systems arc_eager swap] [--device cuda] [--json]
    python -m benchmarks.transition_cost --systems two_registers --dead-end-rule exit
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from benchmarks.common import synchronize
from neuralparse.model.scorer import TokenTable
from neuralparse.search.beam import beam_decode
from neuralparse.systems import SYSTEMS, TransitionSystem, get_system, random_actions
from neuralparse.systems.two_registers import DEAD_END_RULES

LABELS = ("root", "nsubj", "obj", "det", "amod", "advmod", "case", "nmod", "punct", "conj")
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def timed(
    work: Callable[[], int], device: torch.device, clock: Callable[[], float]
) -> tuple[float, int]:
    """Seconds per step and steps of ``work``, which returns the steps it took."""
    synchronize(device)
    start = clock()
    steps = work()
    synchronize(device)
    return (clock() - start) / max(steps, 1), steps


def time_greedy(
    system: TransitionSystem,
    length: int,
    batch: int,
    device: torch.device,
    max_steps: int,
    seed: int,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, int]:
    """Seconds per step and number of steps of random greedy walks over ``batch`` sentences."""
    generator = torch.Generator(device=device).manual_seed(seed)
    state = system.initial([length] * batch, device)

    def walk() -> int:
        steps = 0
        while steps < max_steps and not bool(system.terminal(state).all()):
            system.apply(state, random_actions(system.legal(state), generator))
            steps += 1
        return steps

    return timed(walk, device, clock)


@dataclass
class _Lengths:
    """The batch that :func:`~neuralparse.search.beam.beam_decode` reads: its lengths."""

    lengths: Tensor


class RandomScorer:
    """The scorer's place in beam search, without a model: uniformly random action scores
    (the search's cost without the network's); counts its calls (one per transition)."""

    n_summary = 0

    def __init__(self, num_actions: int, generator: torch.Generator) -> None:
        self.num_actions, self.generator, self.calls = num_actions, generator, 0

    def score(self, table: object, rows: Tensor, features: Tensor, summary: object) -> Tensor:
        self.calls += 1
        shape = (rows.shape[0], self.num_actions)
        return torch.rand(shape, generator=self.generator, device=rows.device)


def time_beam(
    system: TransitionSystem,
    length: int,
    sentences: int,
    beam: int,
    device: torch.device,
    max_steps: int,
    seed: int,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, int]:
    """Seconds per step and number of steps of the library's beam search with random scores
    (at most ``max_steps`` steps)."""
    scorer = RandomScorer(system.num_actions, torch.Generator(device=device).manual_seed(seed))
    batch = _Lengths(torch.full((sentences,), length, device=device))

    def search() -> int:
        beam_decode(
            scorer,  # type: ignore[arg-type]  # stands for the model: random scores
            system,
            batch,  # type: ignore[arg-type]  # the lengths are all the search reads
            beam,
            compact=False,
            # The random scorer reads no rows, and the search no arc log-probabilities.
            table=TokenTable(torch.empty(0, device=device), 0),
            max_steps=max_steps,
        )
        return scorer.calls

    return timed(search, device, clock)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--systems", nargs="+", default=sorted(SYSTEMS), choices=sorted(SYSTEMS))
    parser.add_argument("--lengths", nargs="+", type=int, default=[25, 50, 100, 200, 400])
    parser.add_argument("--batch", type=int, default=256, help="greedy configurations")
    parser.add_argument("--beam-sentences", type=int, default=64)
    parser.add_argument("--beam-size", type=int, default=8)
    parser.add_argument("--max-steps", type=int, default=1000, help="steps timed per run")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="runs at the longest length")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    parser.add_argument(
        "--dead-end-rule",
        choices=DEAD_END_RULES,
        default=None,
        help="two_registers only: its dead-end rule (default: the system's default)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    clock = CLOCKS[args.clock]
    timings: dict[str, dict[str, dict[int, float]]] = {}
    per_system: dict[str, dict[str, float]] = {}
    lo, hi = min(args.lengths), max(args.lengths)
    for name in args.systems:
        options: dict[str, object] = {}
        if name == "two_registers" and args.dead_end_rule is not None:
            options["dead_end_rule"] = args.dead_end_rule
        system = get_system(name, LABELS, **options)
        # Warm-up: first calls allocate and compile kernels.
        time_greedy(system, 10, args.batch, device, 20, args.seed)
        time_beam(system, 10, args.beam_sentences, args.beam_size, device, 20, args.seed)
        greedy = {}
        beam = {}
        for length in args.lengths:
            repeats = args.repeats * max(1, hi // length)
            runs = [
                time_greedy(system, length, args.batch, device, args.max_steps, seed, clock)
                for seed in range(args.seed, args.seed + repeats)
            ]
            greedy[length] = statistics.median(t for t, _ in runs)
            g_steps = runs[0][1]
            runs = [
                time_beam(
                    system,
                    length,
                    args.beam_sentences,
                    args.beam_size,
                    device,
                    args.max_steps,
                    seed,
                    clock,
                )
                for seed in range(args.seed, args.seed + repeats)
            ]
            beam[length] = statistics.median(t for t, _ in runs)
            b_steps = runs[0][1]
            if not args.json:
                print(
                    f"{name:13s} L={length:4d}  greedy {greedy[length] * 1e6:8.1f} us/step "
                    f"({g_steps} steps)  beam {beam[length] * 1e6:8.1f} us/step ({b_steps} steps)"
                )
        timings[name] = {"greedy": greedy, "beam": beam}
        per_system[name] = {
            "greedy_ratio": greedy[hi] / greedy[lo],
            "beam_ratio": beam[hi] / beam[lo],
        }
        if not args.json:
            print(
                f"{name:13s} t({hi})/t({lo}): greedy {per_system[name]['greedy_ratio']:.3f}, "
                f"beam {per_system[name]['beam_ratio']:.3f}"
            )
    result = {
        "greedy_ratio": max(r["greedy_ratio"] for r in per_system.values()),
        "beam_ratio": max(r["beam_ratio"] for r in per_system.values()),
        "per_system": per_system,
        "timings": timings,
        "device": str(device),
        "clock": args.clock,
        "threads": torch.get_num_threads(),
        "batch": args.batch,
        "beam": [args.beam_sentences, args.beam_size],
        "dead_end_rule": args.dead_end_rule,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"worst t({hi})/t({lo}): greedy {result['greedy_ratio']:.3f}, "
            f"beam {result['beam_ratio']:.3f} (target <= 1.25; device {device}, "
            f"{result['threads']} threads, {args.clock} clock)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
