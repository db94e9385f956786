"""Tensor operators per greedy step of each system's state operations, counted on the CPU.

Each operator the dispatcher runs is one kernel launch on a GPU, so this count is what a
transition costs there beyond the scorer when the step is launch-bound (the eager loop), and
the number of kernels a CUDA graph replays per step.  Unlike a timing it is exact and the same
on any machine.  For each system: uniformly random legal walks over ``--sentences`` sentences
of random lengths up to ``--max-length`` words, and for every step the operators of
``features``, ``legal`` and ``apply`` (the three calls of a greedy step), averaged over the
steps; the last column is the total against arc-eager's.  Systems are counted as a GPU runs
them: a graph-safe system through its :meth:`~TransitionSystem.for_graphs` variant, whose
steps never read the host (three-step reads which phases hold configurations on the CPU and
skips the others' operators there).

With ``--checkpoint`` it counts instead the operators of trained parsers' greedy decoding of
a file on the CPU (the library's loop, :func:`~neuralparse.search.greedy.greedy_decode_counted`,
its timer hook naming the parts): encoder, scorer and state operations, per word and per loop
step, as the CPU runs them; for a system whose GPU variant runs other operators, that
variant's count too.

    python -m benchmarks.step_operators [--systems arc_eager three_step] [--json]
        [--two-registers-graphs]
    python -m benchmarks.step_operators --checkpoint CKPT [CKPT ...] [--input FILE] [--json]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from benchmarks.common import shared_split
from neuralparse.io import read_conllu
from neuralparse.model.inputs import EncodedCorpus
from neuralparse.runtime.batching import token_batches
from neuralparse.runtime.checkpoint import LoadedParser, load_parser
from neuralparse.search.greedy import greedy_decode_counted
from neuralparse.systems import SYSTEMS, TransitionSystem, get_system, random_actions

LABELS = ("root", "nsubj", "obj", "det", "amod", "advmod", "case", "nmod", "punct", "conj")
PARTS = ("features", "legal", "apply")
BASELINE = "arc_eager"


class OperatorCount(TorchDispatchMode):
    """Counts the operators dispatched while it is active, per part of the work: the part
    named by :meth:`part` (usable as the ``timer`` hook of the greedy loop), else "other"."""

    def __init__(self) -> None:
        super().__init__()
        self.current = "other"
        self.counts: Counter[str] = Counter()

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @contextmanager
    def part(self, name: str) -> Iterator[None]:
        previous, self.current = self.current, name
        try:
            yield
        finally:
            self.current = previous

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.counts[self.current] += 1
        return func(*args, **(kwargs or {}))


def counted(work: Callable[[], object]) -> int:
    with OperatorCount() as census:
        work()
    return census.total


def as_on_a_gpu(system: TransitionSystem) -> TransitionSystem:
    """The system whose steps a GPU runs: a graph-safe system's :meth:`for_graphs` variant."""
    variant = system.for_graphs() if system.graph_safe else None
    return variant or system


def parse_operators(
    loaded: LoadedParser, system: TransitionSystem, input_path: Path, batch_tokens: int = 8000
) -> dict[str, float]:
    """Operators of the greedy decoding of ``input_path`` by ``loaded``'s model with
    ``system`` (its own, or :func:`as_on_a_gpu` of it) on the CPU, per part: totals, per word,
    and the state's and scorer's per loop step."""
    sentences = read_conllu(input_path, check_tree=False)
    corpus = EncodedCorpus.build(
        sentences, loaded.vocabs, loaded.model.config.max_word_chars, loaded.contextual
    )
    census, loop_steps = OperatorCount(), 0
    with census:
        for ids in token_batches(corpus.lengths, batch_tokens, shuffle=False):
            batch = corpus.batch(ids)
            _, _, steps = greedy_decode_counted(loaded.model, system, batch, timer=census.part)
            loop_steps += int(steps.max())
    words = int(corpus.lengths.sum())
    result: dict[str, float] = {"words": words, "loop_steps": loop_steps}
    for part in ("encoder", "scorer", "state", "other"):  # other: batching, trees out
        result[part] = census.counts[part]
    result["total"] = census.total
    result["per_word"] = census.total / words
    for part in ("scorer", "state"):
        result[f"{part}_per_step"] = census.counts[part] / max(loop_steps, 1)
    return result


def step_operators(
    name: str, sentences: int, max_length: int, seed: int, graph_rule: str | None = None
) -> dict[str, float]:
    """Mean operators per step of ``features``, ``legal`` and ``apply`` of system ``name`` (as
    a GPU runs them: :func:`as_on_a_gpu`).  With ``graph_rule`` (two-registers), ``legal`` is
    that of the CUDA-graph variant with this ``graph_rule``, on the walk of the eager system
    (the variant's abandoning is undone after each count, so the walk goes on)."""
    system = as_on_a_gpu(get_system(name, LABELS))
    graph = None
    if graph_rule is not None:
        graph = get_system(name, LABELS, graph_rule=graph_rule).for_graphs()
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
        if graph is None:
            totals["legal"] += counted(lambda: system.legal(state))
        else:
            totals["legal"] += counted(lambda: graph.legal(state))
            state.scalars["abandoned"].zero_()
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
    parser.add_argument(
        "--two-registers-graphs",
        action="store_true",
        help="also count two-registers' CUDA-graph variants (graph_rule abandon and tensor)",
    )
    parser.add_argument("--checkpoint", nargs="+", type=Path, help="count trained parsers' parses")
    parser.add_argument("--input", type=Path, help="CoNLL-U to parse (default: EWT test)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.checkpoint:
        return _main_parses(args.checkpoint, args.input, args.json)
    names = list(dict.fromkeys([BASELINE, *args.systems]))
    rows = {
        name: step_operators(name, args.sentences, args.max_length, args.seed) for name in names
    }
    if args.two_registers_graphs:
        for rule in ("abandon", "tensor"):
            rows[f"two_registers graphs, {rule}"] = step_operators(
                "two_registers", args.sentences, args.max_length, args.seed, graph_rule=rule
            )
    base = sum(rows[BASELINE].values())
    for row in rows.values():
        row["total"] = sum(row[part] for part in PARTS)
        row["total_to_arc_eager"] = row["total"] / base
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    width = max(len(name) for name in rows)
    header = ("features", 9), ("legal", 7), ("apply", 7), ("total", 7), ("/AE", 5)
    print(f"{'system':{width}s} " + " ".join(f"{name:>{w}s}" for name, w in header))
    for name, row in rows.items():
        cells = " ".join(f"{row[part]:{w}.0f}" for part, w in zip(PARTS, (9, 7, 7), strict=True))
        print(f"{name:{width}s} {cells} {row['total']:7.0f} {row['total_to_arc_eager']:5.2f}")
    print(
        f"operators per greedy step, random legal walks over {args.sentences} sentences of "
        f"1-{args.max_length} words"
    )
    return 0


def _main_parses(checkpoints: Sequence[Path], input_path: Path | None, as_json: bool) -> int:
    source = input_path or shared_split("UD_English-EWT", "test")
    rows = []
    for checkpoint in checkpoints:
        loaded = load_parser(checkpoint)
        system, on_a_gpu = loaded.system, as_on_a_gpu(loaded.system)
        rows.append({"parser": system.name, "checkpoint": str(checkpoint)})
        rows[-1].update(parse_operators(loaded, system, source))
        if on_a_gpu is not system:
            rows.append({"parser": f"{system.name}, GPU steps", "checkpoint": str(checkpoint)})
            rows[-1].update(parse_operators(loaded, on_a_gpu, source))
    if as_json:
        print(json.dumps({"input": str(source), "parsers": rows}, indent=1))
        return 0
    columns = ("encoder", "scorer", "state", "other", "total", "per_word")
    columns += ("scorer_per_step", "state_per_step")
    print(f"{'parser':24s} " + " ".join(f"{c:>15s}" for c in columns))
    for row in rows:
        print(f"{row['parser']:24s} " + " ".join(f"{row[c]:15,.1f}" for c in columns))
    print(f"operators of greedy parsing of {source} on the CPU, one thread")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
