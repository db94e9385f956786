"""Time per transition of the engine's state operations alone, against sentence length.

For each system and each length L (default 25, 50, 100, 200, 400) this times, on sentences of
exactly L words:

* greedy: B = 256 configurations; per step the legal mask, one uniformly random legal action
  per configuration, and apply;
* beam: 64 sentences x K = 8 items; per step the legal mask, random scores for every legal
  successor, the K best successors of each sentence (top-k over K x A), ``reorder`` to their
  parents, and apply.  Terminal items survive with their score (finished hypotheses).

It runs until every configuration is terminal (or ``--max-steps``) and divides the loop's time
by the number of steps; each point is the median of several runs, repeated for short lengths so
that every point covers about as many steps as the longest.  ``--clock cpu`` measures process
CPU time instead of wall time, which is what to use on a shared, busy CPU machine (with
``--threads 1``); on CUDA use the wall clock.  It prints the ratio t(max L) / t(min L) per
system; the target
is <= 1.25 (constant cost per transition).  ``--json`` prints one object with ``greedy_ratio``
and ``beam_ratio`` (the worst over the systems timed), ``per_system`` ratios and the raw
``timings`` (seconds per transition).

    python benchmarks/transition_cost.py [--systems arc_eager swap] [--device cuda] [--json]
    python benchmarks/transition_cost.py --systems two_registers --dead-end-rule exit
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Sequence

import torch

from neuralparse.systems import SYSTEMS, TransitionSystem, get_system, random_actions
from neuralparse.systems.state import State
from neuralparse.systems.two_registers import DEAD_END_RULES

LABELS = ("root", "nsubj", "obj", "det", "amod", "advmod", "case", "nmod", "punct", "conj")


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def time_greedy(
    system: TransitionSystem,
    length: int,
    batch: int,
    device: torch.device,
    max_steps: int,
    seed: int,
    clock=time.perf_counter,
) -> tuple[float, int]:
    """Seconds per step and number of steps of random greedy walks over ``batch`` sentences."""
    generator = torch.Generator(device=device).manual_seed(seed)
    state = system.initial([length] * batch, device)
    synchronize(device)
    start = clock()
    steps = 0
    while steps < max_steps and not bool(system.terminal(state).all()):
        legal = system.legal(state)
        system.apply(state, random_actions(legal, generator))
        steps += 1
    synchronize(device)
    return (clock() - start) / max(steps, 1), steps


def beam_step(
    system: TransitionSystem,
    state: State,
    scores: torch.Tensor,
    sentences: int,
    beam: int,
    generator: torch.Generator,
) -> tuple[State, torch.Tensor]:
    """One beam step with random action scores: returns the reordered, advanced state."""
    legal = system.legal(state)
    actions = legal.shape[1]
    step_scores = torch.rand(legal.shape, generator=generator, device=legal.device).log()
    candidate = torch.where(legal, scores[:, None] + step_scores, float("-inf"))
    # A finished item keeps exactly one successor: itself (action 0 is ignored by apply).
    finished = system.terminal(state)
    candidate[:, 0] = torch.where(finished, scores, candidate[:, 0])
    best, index = candidate.view(sentences, beam * actions).topk(beam, dim=1)
    offsets = torch.arange(sentences, device=legal.device)[:, None] * beam
    parent = (offsets + index // actions).flatten()
    state = system.reorder(state, parent)
    # Fewer than K live successors leave dead (-inf) items: they take any legal action, never
    # an illegal one (two-registers refuses illegal moves).
    chosen = torch.where(
        torch.isfinite(best.flatten()),
        (index % actions).flatten(),
        legal[parent].long().argmax(1),
    )
    system.apply(state, chosen)
    return state, best.flatten()


def time_beam(
    system: TransitionSystem,
    length: int,
    sentences: int,
    beam: int,
    device: torch.device,
    max_steps: int,
    seed: int,
    clock=time.perf_counter,
) -> tuple[float, int]:
    """Seconds per step and number of steps of a random-score beam search."""
    generator = torch.Generator(device=device).manual_seed(seed)
    state = system.initial([length] * (sentences * beam), device)
    # Only the first copy of each sentence is live at the start.
    scores = torch.full((sentences, beam), float("-inf"), device=device)
    scores[:, 0] = 0.0
    scores = scores.flatten()
    synchronize(device)
    start = clock()
    steps = 0
    while steps < max_steps and not bool(system.terminal(state).all()):
        state, scores = beam_step(system, state, scores, sentences, beam, generator)
        steps += 1
    synchronize(device)
    return (clock() - start) / max(steps, 1), steps


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
