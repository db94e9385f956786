"""Static-oracle statistics and random legal derivations on the engine.

``python -m neuralparse.oracle --system NAME [--oracle eager|lazy] [--json] FILE.conllu``
reports the sentences, those in the system's class, those whose static-oracle sequence run on
the engine (batched) reproduces the gold tree exactly, total transitions and transitions per
word, SWAP count, the least-squares slope and R² of transitions against sentence length
(Nivre 2009 §4.1 reports 2.06n-2.22n on CoNLL-X training data), and the seconds taken.

``python -m neuralparse.oracle --system NAME --random N --length L [--seed S]`` writes, as
CoNLL-U on stdout, N trees over L-word dummy sentences, each derived by a uniformly random
sequence of legal transitions run batched on the engine, so that any independent tool can
check soundness.

Exit status 2 for a bad command line, file or device.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import torch

from neuralparse.errors import InputError
from neuralparse.io import Sentence, read_conllu
from neuralparse.runtime.cli import ArgumentParser, report_error, run_program
from neuralparse.runtime.devices import resolve_device
from neuralparse.systems import SYSTEMS, TransitionSystem, get_system, random_walks, run_oracle


@dataclass
class OracleStats:
    sentences: int
    in_class: int
    reproduced: int
    transitions: int
    words: int
    swaps: int
    slope: float
    intercept: float
    r2: float
    seconds: float


def least_squares(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float, float]:
    """Slope, intercept and R² of the least-squares line ``y = slope * x + intercept``."""
    n = len(xs)
    if n < 2:
        return 0.0, 0.0, 0.0
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0:
        return 0.0, my, 0.0
    slope = sxy / sxx
    r2 = 1.0 if syy == 0 else sxy * sxy / (sxx * syy)
    return slope, my - slope * mx, r2


def system_for(name: str, labels: Sequence[str], oracle: str | None) -> TransitionSystem:
    options = {"oracle": oracle} if oracle is not None else {}
    return get_system(name, labels, **options)


def training_labels(name: str, sentences: Sequence[Sentence]) -> list[str]:
    """The label inventory of the trees the system derives (encoded labels for
    pseudo-projective parsing), read off the in-class sentences."""
    unlabeled = get_system(name)
    return sorted(
        {
            label
            for s in sentences
            if s.heads is not None and unlabeled.in_class(s.heads, s.deprels)
            for label in unlabeled.training_tree(s.heads, s.deprels)[1]
        }
    )


def oracle_stats(
    system: TransitionSystem,
    sentences: Sequence[Sentence],
    *,
    batch_size: int = 256,
    device: str | torch.device = "cpu",
) -> OracleStats:
    """Run the static oracle over every in-class sentence, batched by similar length."""
    start = time.perf_counter()
    members = [s for s in sentences if s.heads is not None and system.in_class(s.heads, s.deprels)]
    members.sort(key=len)
    reproduced = 0
    lengths: list[int] = []
    counts: list[int] = []
    swaps = 0
    has_swap = "SWAP" in system.transitions
    swap_id = system.encode("SWAP") if has_swap else -1
    for lo in range(0, len(members), batch_size):
        batch = members[lo : lo + batch_size]
        targets = [system.training_tree(s.heads, s.deprels) for s in batch]
        result = run_oracle(system, targets, device)
        for sentence, ok, heads, labels in zip(
            batch, result.reproduced, result.heads, result.labels, strict=True
        ):
            n = len(sentence)
            derived = [system.labels[x] for x in labels[1 : n + 1].tolist()]
            final = system.output_tree(heads[1 : n + 1].tolist(), derived)
            reproduced += ok and final == (sentence.heads, sentence.deprels)
        for sentence, actions in zip(batch, result.actions, strict=True):
            lengths.append(len(sentence))
            counts.append(len(actions))
            if has_swap:
                swaps += actions.count(swap_id)
    slope, intercept, r2 = least_squares(lengths, counts)
    return OracleStats(
        sentences=len(sentences),
        in_class=len(members),
        reproduced=reproduced,
        transitions=sum(counts),
        words=sum(lengths),
        swaps=swaps,
        slope=slope,
        intercept=intercept,
        r2=r2,
        seconds=time.perf_counter() - start,
    )


def random_trees(name: str, oracle: str | None, count: int, length: int, seed: int) -> str:
    """CoNLL-U of ``count`` random legal derivations over ``length``-word dummy sentences."""
    system = system_for(name, ("root", "dep"), oracle)
    state, finished = random_walks(
        system, [length] * count, generator=torch.Generator().manual_seed(seed)
    )
    if not finished:
        raise RuntimeError(f"{name}: a random legal walk did not terminate (engine bug)")
    heads, labels = system.heads_and_labels(state)
    blocks = []
    for b in range(count):
        sentence = Sentence.from_words(
            [f"w{i}" for i in range(1, length + 1)],
            heads=heads[b, 1 : length + 1].tolist(),
            deprels=[system.labels[x] for x in labels[b, 1 : length + 1].tolist()],
            sent_id=f"random-{name}-{seed}-{b + 1}",
        )
        blocks.append(sentence.to_conllu())
    return "".join(blocks)


def main(argv: Sequence[str] | None = None) -> int:
    parser = ArgumentParser(prog="python -m neuralparse.oracle", description=__doc__)
    parser.add_argument("--system", required=True, choices=sorted(SYSTEMS))
    parser.add_argument("--oracle", choices=("eager", "lazy"), help="swap oracle (default eager)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--random", type=int, metavar="N", help="write N random derivations")
    parser.add_argument("--length", type=int, metavar="L", help="words per random sentence")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("file", nargs="?", help="CoNLL-U file")
    args = parser.parse_args(argv)
    if args.oracle is not None and args.system != "swap":
        parser.error("--oracle applies to --system swap only")
    if args.batch_size < 1:
        parser.error("--batch-size must be positive")
    if args.random is not None:
        if args.length is None or args.length < 1 or args.random < 1:
            parser.error("--random N needs N >= 1 and --length L with L >= 1")
        text = random_trees(args.system, args.oracle, args.random, args.length, args.seed)
        sys.stdout.write(text)
        return 0
    if args.file is None:
        parser.error("give a CoNLL-U FILE, or --random N --length L")
    try:
        device = resolve_device(args.device, "--device")
        sentences = read_conllu(args.file)
    except (InputError, OSError) as problem:
        return report_error(problem)
    system = system_for(args.system, training_labels(args.system, sentences), args.oracle)
    stats = oracle_stats(system, sentences, batch_size=args.batch_size, device=device)
    if args.json:
        keys = ("sentences", "in_class", "reproduced", "transitions", "swaps", "slope", "r2")
        record = {k: v for k, v in asdict(stats).items() if k in keys}
        record["seconds"] = round(stats.seconds, 3)
        print(json.dumps(record))
        return 0
    per_word = stats.transitions / stats.words if stats.words else 0.0
    print(f"system               {system.name}" + (f" ({args.oracle})" if args.oracle else ""))
    print(f"sentences            {stats.sentences}")
    print(f"in class             {stats.in_class}")
    print(f"reproduced           {stats.reproduced}")
    print(f"transitions          {stats.transitions} ({per_word:.3f} per word)")
    print(f"swaps                {stats.swaps}")
    print(f"transitions ~ length {stats.slope:.3f} n {stats.intercept:+.3f} (R^2 {stats.r2:.4f})")
    print(f"seconds              {stats.seconds:.2f}")
    return 0


if __name__ == "__main__":
    run_program(main)
