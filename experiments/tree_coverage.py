"""Tree-class coverage of every shared UD treebank, with and without punctuation.

The analogue of Pitler & McDonald (2015) Table 1 and Gómez-Rodríguez & Nivre (2013) Table 1:
for each ``UD_*`` treebank under the data root, the percentage of trees that are projective,
planar, 2-planar, 3-planar, 2- and 3-Crossing-Interval, 1-Endpoint-Crossing and ill-nested,
plus the share of non-projective arcs and the largest gap degree.  Both seeds count the
*training* sets, so the default is ``--splits train``; ``--splits train dev test`` pools all
three.  Every row is computed twice: with punctuation, and without it as
:mod:`neuralparse.analyze` removes it (UPOS ``PUNCT`` words dropped, their dependents
re-attached to the nearest kept ancestor), the setting of Pitler & McDonald's Table 1.
Conventions (root arcs, planarity on word-to-word arcs) are those of
:data:`neuralparse.analyze.CONVENTIONS`; the tree-class tests are that module's.

A second table puts the seeds' published figures for the same measures
(``experiments/seed_figures.json``) beside ours, for the languages both have (their data are
CoNLL-X/2007 treebanks, ours UD, so the figures are a reference, not a replication).

    python -m experiments.tree_coverage [--data-root DIR] [--splits train] [--out DIR] [--quick]

Writes ``coverage.{csv,json,md}`` to ``--out`` (default ``experiments/results``) and the bar
chart ``docs/coverage.png`` (``--plot``).  ``--quick`` reads the first 200 sentences of each
split and writes under ``outputs/quick`` unless ``--out``/``--plot`` say otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from datetime import date
from itertools import islice
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt

from experiments.report import publish
from neuralparse.analyze import CoverageRow, analyze_sentences
from neuralparse.datasets import data_root
from neuralparse.io import iter_conllu

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
SEED_FIGURES = ROOT / "experiments" / "seed_figures.json"
QUICK_OUT = ROOT / "outputs" / "quick"
QUICK_SENTENCES = 200

#: Output columns: (our key, CoverageRow attribute or None for a derived value, heading).
CLASSES: tuple[tuple[str, str, str], ...] = (
    ("projective", "projective", "projective"),
    ("planar", "planar", "planar"),
    ("2planar", "planar2", "2-planar"),
    ("3planar", "planar3", "3-planar"),
    ("2ci", "crossing_interval2", "2-CI"),
    ("3ci", "crossing_interval3", "3-CI"),
    ("1ec", "one_endpoint_crossing", "1-EC"),
    ("ill_nested", "well_nested", "ill-nested"),
)


def language(treebank: str) -> str:
    """``UD_English-EWT`` -> ``English`` (how the seeds name their data sets)."""
    return treebank.removeprefix("UD_").split("-")[0]


def coverage_record(treebank: str, splits: Sequence[str], punct: bool, row: CoverageRow) -> dict:
    """One output row: percentages of trees, ill-nested as the complement of well-nested."""
    record: dict[str, object] = {
        "treebank": treebank,
        "splits": "+".join(splits),
        "punctuation": "with" if punct else "without",
        "sentences": row.sentences,
    }
    for key, attribute, _ in CLASSES:
        value = getattr(row, attribute)
        record[key] = round(100.0 - value if key == "ill_nested" else value, 2)
    record["nonproj_arcs"] = round(row.nonprojective_arcs, 2)
    record["max_gap_degree"] = row.max_gap_degree
    return record


def measure(data: Path, splits: Sequence[str], limit: int | None = None) -> list[dict[str, object]]:
    """Coverage rows of every ``UD_*`` treebank under ``data`` that has all ``splits``."""
    records = []
    for directory in sorted(data.glob("UD_*")):
        files = [directory / f"{split}.conllu" for split in splits]
        if not all(f.is_file() for f in files):
            continue
        sentences = [s for f in files for s in islice(iter_conllu(f), limit)]
        for punct in (True, False):
            row = analyze_sentences(sentences, no_punct=not punct, file=directory.name)
            records.append(coverage_record(directory.name, splits, punct, row))
    return records


def seed_comparison(records: Sequence[dict], seeds: dict) -> list[dict[str, object]]:
    """Our figure beside each published one for the same language, measure and punctuation
    setting (Gómez-Rodríguez & Nivre do not say; we compare with our with-punctuation row)."""
    ours = {(language(str(r["treebank"])), r["punctuation"]): r for r in records}
    averages = {
        punct: {
            key: round(sum(float(r[key]) for r in rows) / len(rows), 2) for key, _, _ in CLASSES
        }
        for punct in ("with", "without")
        if (rows := [r for r in records if r["punctuation"] == punct])
    }
    comparison = []
    for figure in seeds["coverage"]:
        punct = "without" if figure["punctuation"] == "excluded" else "with"
        if figure["language"] == "Average":
            if punct not in averages:
                continue
            treebank, value = "average of our treebanks", averages[punct][figure["measure"]]
        elif (figure["language"], punct) in ours:
            row = ours[(figure["language"], punct)]
            treebank, value = str(row["treebank"]), row[figure["measure"]]
        else:
            continue
        comparison.append(
            {
                "language": figure["language"],
                "measure": figure["measure"],
                "punctuation": punct,
                "seed": f"{figure['source']} {figure['table']}",
                "seed_data": figure["data"],
                "seed_value": figure["value"],
                "treebank": treebank,
                "ours": value,
            }
        )
    return comparison


def markdown(header: Sequence[str], rows: Sequence[Sequence[object]], align: str) -> str:
    """A Markdown table; ``align`` has one letter per column, ``l`` (left) or ``r`` (right)."""
    rules = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(rules) + " |"]
    lines += ["| " + " | ".join("–" if v is None else str(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def coverage_markdown(records: Sequence[dict]) -> str:
    header = ["treebank", "punct.", "trees", *(h for _, _, h in CLASSES), "non-proj. arcs"]
    rows = [
        [
            r["treebank"],
            r["punctuation"],
            r["sentences"],
            *(f"{r[key]:.2f}" for key, _, _ in CLASSES),
            f"{r['nonproj_arcs']:.2f}",
        ]
        for r in records
    ]
    return markdown(header, rows, "ll" + "r" * (len(header) - 2))


def comparison_markdown(comparison: Sequence[dict]) -> str:
    header = ["language", "measure", "punct.", "source", "published", "ours (UD)", "treebank"]
    rows = [
        [
            c["language"],
            c["measure"],
            c["punctuation"],
            c["seed"],
            f"{c['seed_value']:.2f}",
            f"{c['ours']:.2f}",
            c["treebank"],
        ]
        for c in comparison
    ]
    return markdown(header, rows, "llllrrl")


def plot(records: Sequence[dict], path: Path) -> None:
    """Per treebank, % of trees in each class (one panel per punctuation setting)."""
    settings = [p for p in ("with", "without") if any(r["punctuation"] == p for r in records)]
    shown = [c for c in CLASSES if c[0] != "ill_nested"]
    figure, axes = plt.subplots(
        1, len(settings), figsize=(7.5 * len(settings), 4.2), squeeze=False, sharey=True
    )
    colors = plt.get_cmap("viridis")
    for axis, punct in zip(axes[0], settings, strict=True):
        rows = [r for r in records if r["punctuation"] == punct]
        width = 0.8 / len(shown)
        for k, (key, _, heading) in enumerate(shown):
            axis.bar(
                [i + (k - (len(shown) - 1) / 2) * width for i in range(len(rows))],
                [r[key] for r in rows],
                width,
                label=heading,
                color=colors(k / max(1, len(shown) - 1)),
            )
        axis.set_xticks(range(len(rows)))
        axis.set_xticklabels(
            [str(r["treebank"]).removeprefix("UD_") for r in rows], rotation=20, fontsize=8
        )
        axis.set_ylim(min(70.0, min(float(r["projective"]) for r in rows) - 5), 100.5)
        axis.set_ylabel("% of trees")
        axis.set_title(f"{punct} punctuation ({rows[0]['splits']})")
        axis.grid(axis="y", linewidth=0.3)
    axes[0][-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    figure.suptitle("Tree-class coverage of the UD treebanks")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-root", type=Path, default=None, help="default: the data root")
    parser.add_argument("--splits", nargs="+", default=["train"], choices=["train", "dev", "test"])
    parser.add_argument("--out", type=Path, default=None, help=f"default: {RESULTS}")
    parser.add_argument("--plot", type=Path, default=None, help="default: docs/coverage.png")
    parser.add_argument("--quick", action="store_true", help=f"first {QUICK_SENTENCES} sentences")
    args = parser.parse_args(argv)
    data = args.data_root or data_root()
    out = args.out or (QUICK_OUT if args.quick else RESULTS)
    png = args.plot or (out / "coverage.png" if args.quick else ROOT / "docs" / "coverage.png")
    start = time.perf_counter()
    records = measure(data, args.splits, QUICK_SENTENCES if args.quick else None)
    if not records:
        print(f"error: no UD_* treebank with {args.splits} under {data}", file=sys.stderr)
        return 1
    seeds = json.loads(SEED_FIGURES.read_text(encoding="utf-8"))
    comparison = seed_comparison(records, seeds)
    arguments = argv if argv is not None else sys.argv[1:]
    command = " ".join(["python -m experiments.tree_coverage", *arguments])
    md = (
        f"Tree-class coverage, % of trees ({'+'.join(args.splits)}; {date.today()}; "
        f"`{command.strip()}`)\n\n"
        + coverage_markdown(records)
        + "\nPublished figures for the same measures (CoNLL-X/2007 data there, UD here)\n\n"
        + comparison_markdown(comparison)
    )
    document = {
        "command": command.strip(),
        "date": str(date.today()),
        "data_root": str(data),
        "splits": args.splits,
        "quick": args.quick,
        "seconds": round(time.perf_counter() - start, 1),
        "rows": records,
        "seed_comparison": comparison,
        "sources": seeds["sources"],
    }
    publish(out, "coverage", records, document, md, png, lambda path: plot(records, path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
