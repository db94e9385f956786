"""Abstract running time: transitions against sentence length (Nivre 2009 §4.1, Figure 5).

Nivre (2009) counts the transitions ``m`` a derivation takes for a sentence of ``n`` words,
"abstracting over the actual time needed to compute each oracle prediction and transition",
and fits ``m = a n`` by least squares (Arabic: 2.06n, R² 0.97 on training data with the oracle;
2.02n, R² 0.98 on test data with the trained parser).  This script does the same for every
``UD_*`` treebank under the data root:

* oracle, training data: the static oracle's derivation of each *in-class* training tree
  (trees the system cannot derive are left out and counted, not lifted), for swap with the
  eager oracle (Nivre 2009 Figure 4) and the lazy one (Nivre, Kuhlmann & Hall 2009), and for
  two-registers (Pitler & McDonald 2015 §5.2) and 2-planar (Gómez-Rodríguez & Nivre 2013 §5.1);
  ``--systems`` adds others (``name`` or ``name:oracle``);
* trained parser, test data: each ``--checkpoint`` parses its treebank's test set greedily and
  the transitions each sentence actually took are counted
  (:func:`neuralparse.search.greedy.greedy_decode_counted`).  By default the accuracy
  study's checkpoints ``outputs/study/{hu_szeged,got_proiel}/{swap,two_registers,
  two_planar}/seed2`` are used when present (``experiments/accuracy_study.py`` makes them;
  absent ones are skipped with a message).

Per system and treebank: sentences, words, transitions, transitions per word, the
least-squares line ``m = slope n + intercept`` with R² (:func:`neuralparse.oracle.least_squares`,
the fit behind ``python -m neuralparse.oracle``) and the largest ``m / n``.  Note: Nivre fits
through the points without saying whether an intercept is used; we report both terms.

    python -m experiments.running_time [--data-root DIR] [--checkpoint PATH ...] [--no-parser]
        [--test-limit N] [--out DIR] [--plot PNG] [--quick]
    python -m experiments.running_time --replot experiments/results/running_time.json

Writes ``running_time.{csv,json,md}`` (the JSON keeps every (n, m) point with its count, so
the plot can be redrawn) to ``--out`` (default ``experiments/results``) and
``docs/running_time.png``.  ``--quick`` takes 200 training sentences per treebank, parses at
most 50 test sentences and writes under ``outputs/quick``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from functools import partial
from itertools import islice
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt
import torch

from benchmarks.common import oracle_derivations
from experiments.report import publish
from neuralparse.datasets import data_root, treebank_paths
from neuralparse.errors import InputError
from neuralparse.io import Sentence, iter_conllu, read_conllu
from neuralparse.model.inputs import EncodedCorpus
from neuralparse.oracle import least_squares
from neuralparse.runtime.batching import token_batches
from neuralparse.runtime.checkpoint import LoadedParser, load_checkpoint, rebuild
from neuralparse.search.greedy import greedy_decode_counted
from neuralparse.systems import SYSTEMS, get_system

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
QUICK_OUT = ROOT / "outputs" / "quick"
SEED_FIGURES = ROOT / "experiments" / "seed_figures.json"
DEFAULT_SYSTEMS = ("swap:eager", "swap:lazy", "two_registers", "two_planar")
DEFAULT_CHECKPOINTS = tuple(  # the accuracy study's (experiments/accuracy_study.py)
    ROOT / "outputs" / "study" / data / system / "seed2" / "checkpoint.pt"
    for data in ("hu_szeged", "got_proiel")
    for system in ("swap", "two_registers", "two_planar")
)
QUICK_TRAIN, QUICK_TEST = 200, 50


@dataclass(frozen=True)
class Spec:
    """A system and, for swap, its static oracle."""

    system: str
    oracle: str | None = None

    @classmethod
    def parse(cls, text: str) -> Spec:
        name, _, oracle = text.partition(":")
        if name not in SYSTEMS:
            raise argparse.ArgumentTypeError(f"unknown system {name!r}; known: {sorted(SYSTEMS)}")
        return cls(name, oracle or None)

    @property
    def label(self) -> str:
        return f"{self.system} ({self.oracle})" if self.oracle else self.system

    def options(self) -> dict[str, str]:
        return {"oracle": self.oracle} if self.oracle else {}


Points = Counter[tuple[int, int]]
"""How many sentences of length ``n`` took ``m`` transitions, by ``(n, m)``."""


def oracle_points(
    spec: Spec, sentences: Sequence[Sentence], batch_size: int = 256
) -> tuple[Points, int, int]:
    """``(n, m)`` counts of the static oracle's derivations of the in-class trees, the number
    of trees outside the class, and of in-class trees the oracle failed to reproduce.

    The system is unlabeled: labels do not change the transitions a derivation takes, and
    fewer actions make the batched oracle faster."""
    system = get_system(spec.system, (), **spec.options())
    members = sorted(
        (s for s in sentences if s.heads is not None and system.in_class(s.heads, s.deprels)),
        key=len,
    )
    trees = [(s.heads, None) for s in members]
    derivations = oracle_derivations(system, trees, batch_size=batch_size)
    points: Points = Counter(
        (len(sentence), len(actions))
        for sentence, (actions, ok) in zip(members, derivations, strict=True)
        if ok
    )
    failed = sum(not ok for _, ok in derivations)
    return points, len(sentences) - len(members), failed


def parser_points(parser: LoadedParser, sentences: Sequence[Sentence]) -> Points:
    """``(n, m)`` counts of the transitions the trained parser's greedy search took."""
    model = parser.model.eval()
    corpus = EncodedCorpus.build(
        sentences, parser.vocabs, model.config.max_word_chars, parser.contextual
    )
    points: Points = Counter()
    for ids in token_batches(corpus.lengths, 4000, shuffle=False):
        _, _, steps = greedy_decode_counted(model, parser.system, corpus.batch(ids))
        for n, m in zip(corpus.lengths[ids].tolist(), steps.tolist(), strict=True):
            points[(n, m)] += 1
    return points


def fit(points: Points) -> dict[str, float | int]:
    """Least-squares line, transitions per word and the largest ``m / n`` of the points."""
    xs = [n for (n, _), count in points.items() for _ in range(count)]
    ys = [m for (_, m), count in points.items() for _ in range(count)]
    slope, intercept, r2 = least_squares(xs, ys)
    return {
        "sentences": len(xs),
        "words": sum(xs),
        "transitions": sum(ys),
        "per_word": round(sum(ys) / sum(xs), 4) if xs else 0.0,
        "slope": round(slope, 4),
        "intercept": round(intercept, 3),
        "r2": round(r2, 4),
        "max_ratio": round(max((m / n for n, m in points), default=0.0), 3),
    }


def checkpoint_run(
    path: Path, data: Path, limit: int | None, test_file: Path | None
) -> dict[str, object]:
    """Parse a checkpoint's test set (its config's treebank under ``data``) and count."""
    checkpoint = load_checkpoint(path)
    parser = rebuild(checkpoint, "cpu")
    config = checkpoint.get("config") or {}
    treebank = (config.get("data") or {}).get("treebank")
    if test_file is None:
        if not treebank:
            raise ValueError(f"{path}: no data.treebank in its config; give --test-file")
        test_file = treebank_paths(treebank, data, ("test",), download=False)["test"]
    sentences = read_conllu(test_file)[:limit]
    options = checkpoint.get("system_options") or {}
    spec = Spec(parser.system.name, options.get("oracle"))
    if spec.system == "swap" and spec.oracle is None:
        spec = Spec("swap", "eager")  # the system's default oracle
    start = time.perf_counter()
    points = parser_points(parser, sentences)
    return {
        "treebank": Path(test_file).parent.name if treebank is None else _ud_dir(treebank),
        "spec": spec,
        "checkpoint": str(path),
        "points": points,
        "seconds": time.perf_counter() - start,
    }


def _ud_dir(treebank: str) -> str:
    return treebank if treebank.startswith("UD_") else f"UD_{treebank}"


def record(treebank: str, spec: Spec, source: str, points: Points, **extra: object) -> dict:
    return {
        "treebank": treebank,
        "system": spec.system,
        "oracle": spec.oracle or "",
        "source": source,
        **fit(points),
        **extra,
    }


def markdown(rows: Sequence[dict]) -> str:
    header = [
        "treebank",
        "system",
        "derivations",
        "sentences",
        "left out",
        "transitions / word",
        "m = a n + b",
        "R²",
        "max m/n",
    ]
    lines = ["| " + " | ".join(header) + " |", "| --- | --- | --- |" + " ---: |" * 6]
    for r in rows:
        left_out = r.get("not_in_class", 0) + r.get("not_reproduced", 0)
        name = f"{r['system']} ({r['oracle']})" if r["oracle"] else r["system"]
        lines.append(
            f"| {r['treebank']} | {name} "
            f"| {r['source']} | {r['sentences']} | {left_out} | {r['per_word']:.3f} "
            f"| {r['slope']:.2f}n {r['intercept']:+.2f} | {r['r2']:.3f} | {r['max_ratio']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def plot(runs: Sequence[dict], path: Path) -> None:
    """Figure 5 analogue: one panel per system (rows) and treebank (columns); black dots are
    oracle derivations of training trees, white dots the trained parser on test, each with
    its least-squares line; the dashed line is 2n (a projective arc-standard derivation)."""
    specs = list(dict.fromkeys(r["spec"] for r in runs))
    treebanks = sorted({r["treebank"] for r in runs})
    figure, axes = plt.subplots(
        len(specs),
        len(treebanks),
        figsize=(3.1 * len(treebanks), 2.6 * len(specs)),
        squeeze=False,
    )
    styles = {"oracle, train": ("black", "black", "-"), "parser, test": ("white", "tab:red", "--")}
    for i, spec in enumerate(specs):
        for j, treebank in enumerate(treebanks):
            axis = axes[i][j]
            top = 1
            for run in runs:
                if run["spec"] != spec or run["treebank"] != treebank or not run["points"]:
                    continue
                face, edge, line = styles[run["source"]]
                xs = [n for n, _ in run["points"]]
                ys = [m for _, m in run["points"]]
                sizes = [4 + 2 * min(count, 20) for count in run["points"].values()]
                axis.scatter(
                    xs, ys, s=sizes, facecolors=face, edgecolors=edge, linewidths=0.4, alpha=0.7
                )
                line_fit = fit(run["points"])
                top = max(top, max(xs))
                axis.plot(
                    [0, top],
                    [line_fit["intercept"], line_fit["intercept"] + line_fit["slope"] * top],
                    color=edge,
                    linestyle=line,
                    linewidth=1,
                    label=f"{run['source']}: {line_fit['slope']:.2f}n (R² {line_fit['r2']:.2f})",
                )
            axis.plot([0, top], [0, 2 * top], color="grey", linewidth=0.7, linestyle=":")
            if i == 0:
                axis.set_title(treebank.removeprefix("UD_"), fontsize=9)
            if j == 0:
                axis.set_ylabel(f"{spec.label}\ntransitions m", fontsize=8)
            if i == len(specs) - 1:
                axis.set_xlabel("sentence length n", fontsize=8)
            axis.tick_params(labelsize=7)
            if axis.get_legend_handles_labels()[0]:
                axis.legend(fontsize=6, loc="upper left")
    figure.suptitle(
        "Abstract running time (cf. Nivre 2009, Figure 5): black dots = oracle on train, "
        "open red circles = trained parser on test (marker size ~ sentences); dotted = 2n",
        fontsize=10,
    )
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)


def runs_from_json(document: dict) -> list[dict]:
    """The plot's input back from a ``running_time.json`` (for ``--replot``)."""
    return [
        {
            "treebank": entry["treebank"],
            "spec": Spec(entry["system"], entry["oracle"] or None),
            "source": entry["source"],
            "points": Counter({(n, m): count for n, m, count in entry["n_m_count"]}),
        }
        for entry in document["points"]
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-root", type=Path, default=None, help="default: the data root")
    parser.add_argument("--systems", nargs="+", type=Spec.parse, default=None)
    parser.add_argument("--treebanks", nargs="+", default=None, help="UD_* directory names")
    parser.add_argument("--checkpoint", type=Path, nargs="+", default=None)
    parser.add_argument("--test-file", type=Path, default=None, help="test set of checkpoints")
    parser.add_argument("--no-parser", action="store_true", help="oracle derivations only")
    parser.add_argument("--train-limit", type=int, default=None, help="training sentences")
    parser.add_argument("--test-limit", type=int, default=None, help="test sentences parsed")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help=f"default: {RESULTS}")
    parser.add_argument("--plot", type=Path, default=None, help="default: docs/running_time.png")
    parser.add_argument("--quick", action="store_true", help="CI-sized smoke run")
    parser.add_argument("--replot", type=Path, help="only redraw the plot from this JSON")
    args = parser.parse_args(argv)
    if args.replot is not None:
        png = args.plot or ROOT / "docs" / "running_time.png"
        plot(runs_from_json(json.loads(args.replot.read_text(encoding="utf-8"))), png)
        print(f"saved {png}", file=sys.stderr)
        return 0
    torch.set_num_threads(args.threads)
    data = args.data_root or data_root()
    out = args.out or (QUICK_OUT if args.quick else RESULTS)
    png = args.plot or (
        out / "running_time.png" if args.quick else ROOT / "docs" / "running_time.png"
    )
    specs = args.systems or [Spec.parse(s) for s in DEFAULT_SYSTEMS]
    train_limit = args.train_limit or (QUICK_TRAIN if args.quick else None)
    test_limit = args.test_limit or (QUICK_TEST if args.quick else None)
    if args.no_parser:
        checkpoints: list[Path] = []
    elif args.checkpoint is not None:
        checkpoints = list(args.checkpoint)
    else:
        checkpoints = [] if args.quick else [p for p in DEFAULT_CHECKPOINTS if p.is_file()]
        missing = [] if args.quick else [p for p in DEFAULT_CHECKPOINTS if not p.is_file()]
        for path in missing:
            print(f"skipping absent checkpoint {path}", file=sys.stderr)
    treebanks = [
        d
        for d in sorted(data.glob("UD_*"))
        if (d / "train.conllu").is_file() and (args.treebanks is None or d.name in args.treebanks)
    ]
    if not treebanks:
        print(f"error: no UD_*/train.conllu under {data}", file=sys.stderr)
        return 1
    runs: list[dict] = []
    rows: list[dict] = []
    for directory in treebanks:
        train = list(islice(iter_conllu(directory / "train.conllu"), train_limit))
        for spec in specs:
            start = time.perf_counter()
            points, outside, failed = oracle_points(spec, train)
            seconds = time.perf_counter() - start
            runs.append({"treebank": directory.name, "spec": spec, "source": "oracle, train"})
            runs[-1]["points"] = points
            rows.append(
                record(
                    directory.name,
                    spec,
                    "oracle, train",
                    points,
                    not_in_class=outside,
                    not_reproduced=failed,
                    seconds=round(seconds, 1),
                )
            )
            print(f"{directory.name} {spec.label}: {rows[-1]}", file=sys.stderr, flush=True)
    for path in checkpoints:
        try:
            run = checkpoint_run(path, data, test_limit, args.test_file)
        except (InputError, ValueError) as error:
            print(f"skipping checkpoint {path}: {error}", file=sys.stderr)
            continue
        run["source"] = "parser, test"
        runs.append(run)
        rows.append(
            record(
                run["treebank"],
                run["spec"],
                "parser, test",
                run["points"],
                checkpoint=str(path),
                seconds=round(run["seconds"], 1),
            )
        )
        print(f"{path}: {rows[-1]}", file=sys.stderr, flush=True)
    arguments = argv if argv is not None else sys.argv[1:]
    command = " ".join(["python -m experiments.running_time", *arguments])
    seeds = json.loads(SEED_FIGURES.read_text(encoding="utf-8"))["running_time"]
    published = "\n".join(
        f"- {s['source']} {s['table']}: {s['system_in_paper']}, {s['language']} {s['split']}: "
        f"m = {s['slope']}n" + (f" (R² {s['r2']})" if s["r2"] is not None else "")
        for s in seeds
    )
    md = (
        f"Abstract running time: transitions m against sentence length n "
        f"({date.today()}; `{command}`)\n\n"
        + markdown(rows)
        + f"\nPublished (CoNLL-X data there, UD here):\n\n{published}\n"
    )
    document = {
        "command": command,
        "date": str(date.today()),
        "data_root": str(data),
        "train_limit": train_limit,
        "test_limit": test_limit,
        "rows": rows,
        "points": [
            {
                "treebank": run["treebank"],
                "system": run["spec"].system,
                "oracle": run["spec"].oracle or "",
                "source": run["source"],
                "n_m_count": sorted([n, m, c] for (n, m), c in run["points"].items()),
            }
            for run in runs
        ],
        "published": seeds,
    }
    draw = partial(plot, runs)
    publish(out, "running_time", rows, document, md, png, draw, indent=None)  # every point
    return 0


if __name__ == "__main__":
    sys.exit(main())
