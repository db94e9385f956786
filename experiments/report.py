"""Writing an experiment's results: the rows as CSV, a JSON document and a Markdown table."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
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
