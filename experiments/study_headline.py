"""The README's headline table from the accuracy study: one system's test scores on untagged
input per treebank, the mean over seeds with their range, beside the gold-tag model's.

Reads each run's ``scores.json`` (written by :mod:`experiments.study_scores` when the study
scored the run), so it needs neither the treebanks nor the checkpoints:
``RUNS/<data>/<system>/seed<k>/`` for the default joint model (its test input untagged: the
default reads no tags) and ``RUNS/<data>/<system>/gold_tags/seed<k>/`` for the model that
reads gold tags (given the test file as distributed).  Greedy decoding; LAS is the CoNLL 2018
definition (head and universal part of DEPREL); UPOS and UFeats are the model's own tags.

    python -m experiments.study_headline [--runs experiments/study_runs_arc_scorer]
        [--system arc_eager] [--out experiments/results/converged_arc_scorer]

Writes ``headline.{csv,json,md}`` to ``--out`` and prints the table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from experiments.report import write_results
from experiments.runs import DATA_KEYS, ROOT
from experiments.study_scores import rounded

RUNS = ROOT / "experiments" / "study_runs_arc_scorer"
OUT = ROOT / "experiments" / "results" / "converged_arc_scorer"
TAGS = ("upos", "ufeats")


def greedy_scores(path: Path) -> dict:
    """A run's ``scores.json`` with its greedy scores lifted to the top level."""
    meta = json.loads(path.read_text(encoding="utf-8"))
    return {**meta, **meta["modes"]["greedy"]["scores"]}


def mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return rounded(statistics.fmean(present)) if present else None


def headline_rows(runs: Path, system: str) -> list[dict[str, object]]:
    """Per treebank with runs of ``system``: the default model's seeds (LAS mean, lowest and
    highest; UPOS and UFeats means; best and last epochs) and the gold-tag model's LAS (mean
    over its seeds, given gold tags), with the difference."""
    rows = []
    present = {path.parents[2].name for path in runs.glob("*/*/seed*/scores.json")}
    for data in [d for d in DATA_KEYS if d in present] + sorted(present - set(DATA_KEYS)):
        seeds = [greedy_scores(p) for p in sorted(runs.glob(f"{data}/{system}/seed*/scores.json"))]
        gold = [
            greedy_scores(p)
            for p in sorted(runs.glob(f"{data}/{system}/gold_tags/seed*/scores.json"))
        ]
        if not seeds:
            continue
        las = [s["las"] for s in seeds]
        row: dict[str, object] = {
            "data": data,
            "treebank": seeds[0]["treebank"],
            "system": system,
            "seeds": len(seeds),
            "test_input": sorted({str(s.get("test_input")) for s in seeds}),
            "las": mean(las),
            "las_min": rounded(min(las)),
            "las_max": rounded(max(las)),
            **{key: mean([s[key] for s in seeds]) for key in TAGS},
            "best_epochs": [s["best_epoch"] for s in seeds],
            "epochs": [s["epochs"] for s in seeds],
            "gold_tags_seeds": len(gold),
            "gold_tags_las": mean([g["las"] for g in gold]),
        }
        gold_las = row["gold_tags_las"]
        row["gap"] = None if gold_las is None else rounded(gold_las - row["las"])
        rows.append(row)
    return rows


def shown(path: Path) -> str:
    """``path`` relative to the checkout when it lies inside it (the JSON is committed)."""
    path = path.resolve()
    return str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


def cell(value: object) -> str:
    return "–" if value is None else f"{value:.2f}"


def headline_markdown(rows: Sequence[dict]) -> str:
    lines = [
        "| treebank | LAS, untagged input (lowest–highest seed) | UPOS | UFeats "
        "| gold-tag model, given gold tags | gap |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        spread = f"{cell(r['las'])} ({cell(r['las_min'])}–{cell(r['las_max'])})"
        values = [
            str(r["treebank"]).removeprefix("UD_"),
            spread,
            cell(r["upos"]),
            cell(r["ufeats"]),
            cell(r["gold_tags_las"]),
            cell(r["gap"]),
        ]
        lines.append("| " + " | ".join(values) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=Path, default=RUNS)
    parser.add_argument("--system", default="arc_eager")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    rows = headline_rows(args.runs, args.system)
    if not rows:
        print(
            f"error: no {args.system} run (*/{args.system}/seed*/scores.json) under {args.runs}",
            file=sys.stderr,
        )
        return 1
    arguments = argv if argv is not None else sys.argv[1:]
    command = " ".join(["python -m experiments.study_headline", *arguments])
    seeds = sorted({int(r["seeds"]) for r in rows})
    md = (
        f"`{args.system}`, greedy, test files, CoNLL 2018 LAS (head and universal part of "
        f"DEPREL); default joint model: mean of {'/'.join(map(str, seeds))} seeds on untagged "
        f"input, its own UPOS and UFeats; gold-tag model: mean of its seeds given the test "
        f"file's gold tags; gap = gold-tag LAS − untagged LAS ({date.today()}; `{command}`).\n\n"
        + headline_markdown(rows)
    )
    document = {
        "command": command,
        "date": str(date.today()),
        "runs": shown(args.runs),
        "system": args.system,
        "las_definition": "CoNLL 2018 (head and universal part of DEPREL)",
        "rows": rows,
    }
    write_results(args.out, "headline", rows, document, md)
    print(md)
    print(f"saved {args.out}/headline.{{csv,json,md}}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
