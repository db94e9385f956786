"""How many test words carry a tag value that the training set never shows, per tag column.

A tagging head that predicts a whole column value as one class (the default model's UPOS,
XPOS and FEATS heads) can never produce a value it did not see in training; a FEATS head that
predicts each feature on its own could.  For every ``UD_*`` treebank under the data root this
counts, for UPOS, XPOS and FEATS, the distinct values of the training set and the share of
test words whose value is not among them: an upper bound on what such per-feature heads can
win on that count alone.

    python -m experiments.tag_coverage [--data-root DIR] [--out DIR]

Writes ``tag_coverage.{csv,json,md}`` to ``--out`` (default ``experiments/results``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from datetime import date
from pathlib import Path

from experiments.report import write_results
from neuralparse.datasets import data_root
from neuralparse.io import Sentence, iter_conllu

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
COLUMNS = ("upos", "xpos", "feats")


def column_values(sentences: Iterable[Sentence], column: str) -> list[str]:
    """The values of one tag column, word by word (``_`` included: it is a value too)."""
    return [value for sentence in sentences for value in getattr(sentence, column)]


def unseen_share(train: Sequence[str], test: Sequence[str]) -> float:
    """Percentage of ``test`` values that ``train`` never has (0 for an empty test)."""
    seen = set(train)
    return 100.0 * sum(value not in seen for value in test) / len(test) if test else 0.0


def measure(data: Path) -> list[dict]:
    """One row per treebank with train and test files under ``data``."""
    rows = []
    for treebank in sorted(data.glob("UD_*")):
        if not ((treebank / "train.conllu").is_file() and (treebank / "test.conllu").is_file()):
            continue
        train = list(iter_conllu(treebank / "train.conllu"))
        test = list(iter_conllu(treebank / "test.conllu"))
        row: dict[str, object] = {"treebank": treebank.name, "test_words": sum(map(len, test))}
        for column in COLUMNS:
            seen, new = column_values(train, column), column_values(test, column)
            row[f"{column}_train_values"] = len(set(seen))
            row[f"{column}_unseen_test_pct"] = round(unseen_share(seen, new), 2)
        rows.append(row)
    return rows


def markdown(rows: Sequence[dict], command: str) -> str:
    head = [
        f"Tag values of test words never seen in training ({date.today()}; `{command}`)",
        "",
        "| treebank | test words | "
        + " | ".join(
            f"{c.upper()} values in train | {c.upper()} unseen in test, %" for c in COLUMNS
        )
        + " |",
        "| --- | ---: |" + " ---: | ---: |" * len(COLUMNS),
    ]
    lines = [
        f"| {row['treebank']} | {row['test_words']:,} | "
        + " | ".join(
            f"{row[f'{c}_train_values']} | {row[f'{c}_unseen_test_pct']:.2f}" for c in COLUMNS
        )
        + " |"
        for row in rows
    ]
    return "\n".join(head + lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-root", type=Path, default=None, help="default: the data root")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    data = args.data_root or data_root()
    rows = measure(data)
    if not rows:
        print(f"error: no UD_* treebank with train and test files under {data}", file=sys.stderr)
        return 1
    arguments = argv if argv is not None else sys.argv[1:]
    command = " ".join(["python -m experiments.tag_coverage", *arguments]).strip()
    md = markdown(rows, command)
    document = {"command": command, "date": str(date.today()), "data_root": str(data), "rows": rows}
    write_results(args.out, "tag_coverage", rows, document, md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
