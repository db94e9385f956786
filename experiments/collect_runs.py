"""Table of the test-set scores of finished training runs.

Each run directory (Hydra's output of ``train.py``) holds ``config.yaml`` and
``metrics.jsonl``, whose last line is the test evaluation. Prints a Markdown table with one row
per run: treebank, system, epochs, minutes, best dev LAS, test UAS / LAS and the precision and
recall of non-projective arcs (Gómez-Rodríguez & Nivre 2013 §5.2).

    python experiments/collect_runs.py outputs/nonproj/*/*
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml


def row(run: Path) -> list[str] | None:
    metrics = run / "metrics.jsonl"
    config = run / "config.yaml"
    if not metrics.is_file() or not config.is_file():
        return None
    records = [json.loads(line) for line in metrics.read_text().splitlines() if line.strip()]
    test = next((r for r in records if r.get("split") == "test"), None)
    epochs = [r for r in records if "epoch" in r]
    if test is None or not epochs:
        return None
    cfg = yaml.safe_load(config.read_text())

    def score(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.2f}"

    return [
        str(cfg["data"]["treebank"]),
        str(cfg["system"]["name"]),
        str(len(epochs)),
        f"{epochs[-1]['elapsed_seconds'] / 60:.1f}",
        score(epochs[-1]["best_las"]),
        score(test["uas"]),
        score(test["las"]),
        score(test["nonproj_precision"]),
        score(test["nonproj_recall"]),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run directories")
    args = parser.parse_args(argv)
    header = [
        "treebank",
        "system",
        "epochs",
        "minutes",
        "best dev LAS",
        "test UAS",
        "test LAS",
        "non-proj. P",
        "non-proj. R",
    ]
    rows = [r for r in (row(run) for run in args.runs) if r is not None]
    print("| " + " | ".join(header) + " |")
    print("| --- | --- | " + " | ".join("---:" for _ in header[2:]) + " |")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
