"""Transitions and time per transition against sentence length, with matplotlib plots.

Two measurements, each saved as a PNG with its JSON beside it (default under ``docs/``):

``transitions``: transitions per sentence against its length for every system (the analogue
of Nivre 2009, Figure 5 and §4.1: "m = 2.06n (R² = 0.97)" for training sentences parsed with
the oracle and test sentences parsed with a classifier).  The static oracle runs batched
(:func:`neuralparse.systems.run_oracle`) on the training trees the system is trained to derive
(``training_tree``: lifted into the system's class when needed) of a treebank's training set,
``--limit`` sentences by default for speed.  Each ``--checkpoint`` adds its system's greedy
parses of the test set (transitions actually taken by the trained parser).  Per system the
JSON holds the points and the least-squares line with R².

``time``: seconds per transition against sentence length (default 25..400) on synthetic
sentences of exactly that length, batches of ``--batch`` sentences:

* end to end: encoder + scorer + greedy search with an *untrained* model of the default size
  (speed depends on the sizes, not the weights): the library's greedy loop
  (:func:`neuralparse.search.greedy.greedy_decode_counted`, timed through its hooks), its time
  (encoder included) divided by its transitions;
* state operations alone: random legal greedy walks, timed by
  :func:`benchmarks.transition_cost.time_greedy`.

A random scorer can make swap-like systems take many more transitions than a trained one, so
an end-to-end run stops after ``--steps-per-word`` x length iterations (enough for a whole
derivation of every system, so the encoder's cost is spread over all of it) and a state-ops
run after ``--max-steps``; the per-step time stays meaningful.  The JSON also splits the
end-to-end time per step into encoder, scorer and state operations.

    python -m benchmarks.length_scaling transitions [--treebank UD_Hungarian-Szeged]
        [--limit 2000] [--checkpoint outputs/study/hu_szeged/arc_eager/seed2/checkpoint.pt]
    python -m benchmarks.length_scaling time [--lengths 25 50 100 200 400] [--systems ...]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt
import torch

from benchmarks.common import (
    ROOT,
    Timers,
    oracle_derivations,
    shared_split,
    synchronize,
    training_trees,
    untrained_parser,
)
from benchmarks.transition_cost import time_greedy
from neuralparse.errors import InputError
from neuralparse.io import Sentence, read_conllu
from neuralparse.model.inputs import EncodedCorpus
from neuralparse.oracle import least_squares
from neuralparse.runtime.batching import token_batches
from neuralparse.runtime.checkpoint import load_parser
from neuralparse.search.greedy import greedy_decode_counted
from neuralparse.systems import SYSTEMS, get_system

DOCS = ROOT / "docs"
UPOS = ("NOUN", "VERB", "ADJ", "DET", "ADP", "PRON", "ADV", "PUNCT")


# -- transitions against length ---------------------------------------------------------------


def oracle_points(
    name: str, sentences: Sequence[Sentence], batch_size: int = 256
) -> list[tuple[int, int]]:
    """``(length, transitions)`` of system ``name``'s static-oracle derivation of each
    sentence's training tree (sentences the oracle does not reproduce are left out)."""
    ordered = sorted((s for s in sentences if s.heads is not None), key=len)
    # Lifting keeps the labels (pseudo-projective encoding changes them): the inventory is
    # that of the trees the system derives, out-of-class sentences included.
    system, targets = training_trees(name, ordered)
    derivations = oracle_derivations(system, targets, batch_size=batch_size)
    return [
        (len(s), len(actions)) for s, (actions, ok) in zip(ordered, derivations, strict=True) if ok
    ]


def parser_points(
    checkpoint: Path, sentences: Sequence[Sentence], batch_tokens: int = 2000
) -> tuple[str, list[tuple[int, int]]]:
    """The checkpoint's system and ``(length, transitions)`` of its greedy parses."""
    parser = load_parser(checkpoint, "cpu")
    corpus = EncodedCorpus.build(
        sentences, parser.vocabs, parser.model.config.max_word_chars, parser.contextual
    )
    points: list[tuple[int, int]] = []
    for ids in token_batches(corpus.lengths, batch_tokens, shuffle=False):
        _, _, steps = greedy_decode_counted(parser.model, parser.system, corpus.batch(ids))
        points.extend(zip(corpus.lengths[ids].tolist(), steps.tolist(), strict=True))
    return parser.system.name, points


def fit(points: Sequence[tuple[int, int]]) -> dict[str, float]:
    slope, intercept, r2 = least_squares([p[0] for p in points], [p[1] for p in points])
    return {"slope": slope, "intercept": intercept, "r2": r2, "sentences": len(points)}


def transitions_study(args: argparse.Namespace) -> dict[str, object]:
    train_file = shared_split(args.treebank, "train")
    train = read_conllu(train_file)[: args.limit]
    result: dict[str, object] = {
        "treebank": train_file.parent.name,
        "train_sentences": len(train),
        "systems": {},
    }
    systems: dict[str, dict[str, object]] = result["systems"]  # type: ignore[assignment]
    for name in args.systems:
        start = time.perf_counter()
        points = oracle_points(name, train)
        systems[name] = {"oracle": {"points": points, **fit(points)}}
        line = systems[name]["oracle"]
        print(
            f"{name:14s} oracle  m = {line['slope']:.2f}n {line['intercept']:+.2f} "
            f"(R² {line['r2']:.3f}, {len(points)} sentences, "
            f"{time.perf_counter() - start:.1f}s)",
            flush=True,
        )
    if args.checkpoint:
        test = read_conllu(shared_split(args.treebank, "test"))[: args.limit]
        for path in args.checkpoint:
            name, points = parser_points(path, test)
            entry = systems.setdefault(name, {})
            entry["parser"] = {"checkpoint": str(path), "points": points, **fit(points)}
            line = entry["parser"]
            print(
                f"{name:14s} parser  m = {line['slope']:.2f}n {line['intercept']:+.2f} "
                f"(R² {line['r2']:.3f}, {len(points)} test sentences)",
                flush=True,
            )
    return result


def plot_transitions(result: dict[str, object], path: Path) -> None:
    systems: dict[str, dict[str, dict]] = result["systems"]  # type: ignore[assignment]
    names = sorted(systems)
    columns = min(3, len(names))
    rows = (len(names) + columns - 1) // columns
    figure, axes = plt.subplots(
        rows, columns, figsize=(4 * columns, 3.4 * rows), squeeze=False, sharex=True
    )
    styles = {
        "oracle": ("black", "black", "oracle, train"),
        "parser": ("white", "black", "parser, test"),
    }
    for axis, name in zip(axes.flat, names, strict=False):
        top = 1
        for kind in ("oracle", "parser"):
            data = systems[name].get(kind)
            if not data or not data["points"]:
                continue
            xs, ys = zip(*data["points"], strict=True)
            face, edge, label = styles[kind]
            axis.scatter(
                xs,
                ys,
                s=8,
                facecolors=face,
                edgecolors=edge,
                linewidths=0.5,
                label=f"{label}: {data['slope']:.2f}n (R² {data['r2']:.2f})",
            )
            top = max(top, max(xs))
        axis.plot([0, top], [0, 2 * top], color="grey", linewidth=0.8, linestyle="--", label="2n")
        axis.set_title(name)
        axis.set_xlabel("sentence length n")
        axis.set_ylabel("transitions m")
        axis.legend(fontsize=7, loc="upper left")
    for axis in list(axes.flat)[len(names) :]:
        axis.set_visible(False)
    figure.suptitle(f"Transitions vs sentence length ({result['treebank']})")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


# -- time per transition against length -------------------------------------------------------


def synthetic_sentences(count: int, length: int, seed: int) -> list[Sentence]:
    """``count`` sentences of exactly ``length`` words over a small vocabulary, each with a
    chain tree (so that they can also serve as a label inventory: ``root`` and ``dep``)."""
    rng = random.Random(seed)
    return [
        Sentence.from_words(
            [f"w{rng.randrange(500)}" for _ in range(length)],
            upos=[rng.choice(UPOS) for _ in range(length)],
            heads=list(range(length)),
            deprels=["root"] + ["dep"] * (length - 1),
        )
        for _ in range(count)
    ]


def end_to_end_step_time(
    name: str, vocab: Sequence[Sentence], length: int, args: argparse.Namespace
) -> tuple[float, int, dict[str, float]]:
    """Seconds per loop iteration (encoder included; median of repeats), the iterations, and
    the seconds per iteration of each part (encoder, scorer, state) of the median run."""
    device = torch.device(args.device)
    parser = untrained_parser(name, vocab, device)
    corpus = EncodedCorpus.build(synthetic_sentences(args.batch, length, args.seed), parser.vocabs)
    batch = corpus.batch(torch.arange(args.batch)).to(device)
    # The encoder's O(n) cost must be spread over a whole derivation (about 2n-4n steps):
    # cap only runaway derivations of a random scorer.
    cap = args.steps_per_word * length
    greedy_decode_counted(parser.model, parser.system, batch, max_steps=5)  # warm-up
    runs = []
    for _ in range(args.repeats):
        timers = Timers(device)
        synchronize(device)
        start = time.perf_counter()
        taken = greedy_decode_counted(
            parser.model, parser.system, batch, timer=timers, max_steps=cap
        )
        synchronize(device)
        iterations = int(taken[2].max())
        steps = max(iterations, 1)
        parts = {part: seconds / steps for part, seconds in timers.seconds.items()}
        runs.append(((time.perf_counter() - start) / steps, iterations, parts))
    runs.sort(key=lambda run: run[0])
    return runs[len(runs) // 2]


def time_study(args: argparse.Namespace) -> dict[str, object]:
    device = torch.device(args.device)
    vocab = synthetic_sentences(200, 20, args.seed + 1)
    timings: dict[str, dict[str, dict[int, float]]] = {}
    breakdown: dict[str, dict[int, dict[str, float]]] = {}
    for name in args.systems:
        end_to_end: dict[int, float] = {}
        state_only: dict[int, float] = {}
        parts: dict[int, dict[str, float]] = {}
        system = get_system(name, ("root", "dep"))
        for length in args.lengths:
            end_to_end[length], steps, parts[length] = end_to_end_step_time(
                name, vocab, length, args
            )
            state_only[length] = statistics.median(
                time_greedy(system, length, args.batch, device, args.max_steps, seed)[0]
                for seed in range(args.repeats)
            )
            print(
                f"{name:14s} L={length:4d}  end to end {end_to_end[length] * 1e6:8.1f} us/step "
                f"({steps} steps)  state ops {state_only[length] * 1e6:8.1f} us/step",
                flush=True,
            )
        timings[name] = {"end_to_end": end_to_end, "state_ops": state_only}
        breakdown[name] = parts
    return {
        "batch": args.batch,
        "lengths": args.lengths,
        "max_steps_state_ops": args.max_steps,
        "max_steps_end_to_end": f"{args.steps_per_word} x length",
        "device": str(device),
        "threads": torch.get_num_threads(),
        "model": "untrained (default ModelConfig)",
        "seconds_per_step": timings,
        "end_to_end_parts_per_step": breakdown,
    }


def plot_time(result: dict[str, object], path: Path) -> None:
    timings: dict[str, dict[str, dict[int, float]]] = result["seconds_per_step"]  # type: ignore
    figure, axes = plt.subplots(1, 2, figsize=(12.5, 4), sharex=True)
    for axis, kind, title in (
        (axes[0], "end_to_end", "end to end (encoder + scorer + search)"),
        (axes[1], "state_ops", "state operations alone"),
    ):
        for name, series in sorted(timings.items()):
            # Keys are ints when fresh and strings when read back from the JSON.
            lengths = sorted(series[kind], key=int)
            axis.plot(
                [int(n) for n in lengths],
                [series[kind][n] * 1e6 for n in lengths],
                marker="o",
                label=name,
            )
        axis.set_xscale("log", base=2)
        axis.set_xlabel("sentence length")
        axis.set_ylabel(f"µs per transition (batch of {result['batch']})")
        axis.set_title(title)
        axis.set_yscale("log")  # systems differ by orders of magnitude
    axes[1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5))
    figure.suptitle(
        f"Time per transition vs length ({result['device']}, {result['threads']} threads)"
    )
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("study", choices=("transitions", "time"))
    parser.add_argument("--systems", nargs="+", default=sorted(SYSTEMS), choices=sorted(SYSTEMS))
    parser.add_argument(
        "--treebank", default="UD_Hungarian-Szeged", help="name under the data root, or a path"
    )
    parser.add_argument("--limit", type=int, default=2000, help="sentences per split")
    parser.add_argument("--checkpoint", type=Path, nargs="*", default=[])
    parser.add_argument("--lengths", nargs="+", type=int, default=[25, 50, 100, 200, 400])
    parser.add_argument("--batch", type=int, default=16, help="sentences per timed batch")
    parser.add_argument("--max-steps", type=int, default=300, help="state-ops steps per run")
    parser.add_argument(
        "--steps-per-word", type=int, default=5, help="end-to-end cap: this many x length"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (0: default)")
    parser.add_argument("--out-dir", type=Path, default=DOCS)
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if args.study == "transitions":
        try:
            train_file = shared_split(args.treebank, "train")
        except InputError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        if not train_file.is_file():
            print(f"error: no {train_file}", file=sys.stderr)
            return 2
        result = transitions_study(args)
        stem, plot = "transitions_vs_length", plot_transitions
    else:
        result = time_study(args)
        stem, plot = "time_per_transition", plot_time
    png, data = args.out_dir / f"{stem}.png", args.out_dir / f"{stem}.json"
    plot(result, png)
    data.write_text(json.dumps(result) + "\n", encoding="utf-8")
    print(f"saved {png} and {data}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
