"""Writing an experiment's results: the rows as CSV, a JSON document and a Markdown table."""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path


def write_results(
    out: Path, stem: str, rows: Sequence[dict], document: dict, md: str, indent: int | None = 1
) -> None:
    """``stem.csv`` (the rows; columns in order of first appearance), ``stem.json``
    (``document``; ``indent=None`` for a large one) and ``stem.md`` under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    fields = list(dict.fromkeys(key for row in rows for key in row))
    with open(out / f"{stem}.csv", "w", newline="", encoding="utf-8") as sink:
        writer = csv.DictWriter(sink, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    (out / f"{stem}.json").write_text(json.dumps(document, indent=indent) + "\n", encoding="utf-8")
    (out / f"{stem}.md").write_text(md, encoding="utf-8")


def publish(
    out: Path,
    stem: str,
    rows: Sequence[dict],
    document: dict,
    md: str,
    png: Path,
    draw: Callable[[Path], None],
    indent: int | None = 1,
) -> None:
    """:func:`write_results`, then the plot ``draw(png)``; prints the table and where all went."""
    write_results(out, stem, rows, document, md, indent)
    png.parent.mkdir(parents=True, exist_ok=True)
    draw(png)
    print(md)
    print(f"saved {out}/{stem}.{{csv,json,md}} and {png}", file=sys.stderr)
