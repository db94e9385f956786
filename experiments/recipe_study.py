"""A training recipe against the accuracy study's default one: the same system, treebanks and
seeds, trained to convergence, one or more trainer settings changed
(:class:`Recipe`: the dynamic oracle in :mod:`experiments.dynamic_oracle`, the weight average in
:mod:`experiments.weight_average`).

The default-recipe runs are the accuracy study's
(``experiments/study_runs/<data>/<system>/seed<k>``: default joint model, early stopping on
dev LAS, test parsed untagged); the recipe's runs are trained by ``--train`` into ``--runs
<system>/<data>/seed<k>`` with the same seeds, one ``train.py`` after another.  Both are
scored with the CoNLL 2018 LAS (head and universal part of DEPREL), greedy: the study's
untagged test parse for its run, the trainer's test line for the recipe's (the joint model
never reads the input's tags, so the two agree).  The table pairs them by seed; a pair whose
run is missing or unfinished is left out with a message.  Results go to
``<recipe name>_<system>.{csv,json,md}`` under ``--out`` (default ``experiments/results``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from experiments.report import write_results
from experiments.runs import ROOT, STUDY_RUNS, metrics_records, training_minutes


@dataclass(frozen=True)
class Recipe:
    """What a study of one recipe changes and how its results are named."""

    name: str
    """The results' file stem (``<name>_<system>``) and the default runs folder."""
    label: str
    """The table's column heading and the JSON keys' prefix for the recipe's runs."""
    baseline: str
    """The same for the study's runs (what the default recipe does instead)."""
    overrides: tuple[str, ...]
    """``train.py`` overrides of the recipe."""
    systems: tuple[str, ...] = ("arc_eager",)
    """The systems it applies to (the first is ``--system``'s default)."""


def study_run(system: str, data: str, seed: int) -> dict[str, Any] | None:
    """The study's run: epochs, best epoch, minutes and untagged greedy test LAS."""
    path = STUDY_RUNS / data / system / f"seed{seed}" / "scores.json"
    if not path.is_file():
        return None
    scores = json.loads(path.read_text())
    return {
        "epochs": scores["epochs"],
        "best_epoch": scores["best_epoch"],
        "best_dev_las": scores["best_dev_las"],
        "test_las": scores["modes"]["greedy"]["scores"]["las"],
        "minutes": scores["train_minutes"],
    }


def recipe_run(run_dir: Path) -> dict[str, Any] | None:
    """A finished run read from its ``metrics.jsonl`` (None while it has no ``stopped`` and
    test line)."""
    records = metrics_records(run_dir)
    stopped = next((r for r in records if "stopped" in r), None)
    test = next((r for r in records if r.get("split") == "test"), None)
    epochs = [r for r in records if "epoch" in r and "dev" in r]
    if stopped is None or test is None or not epochs:
        return None
    return {
        "epochs": stopped["epochs"],
        "best_epoch": stopped["best_epoch"],
        "best_dev_las": stopped["best_las"],
        "test_las": test["las"],
        "minutes": training_minutes(epochs),
        "stopped": stopped["limit"],
    }


def train(recipe: Recipe, args: argparse.Namespace) -> int:
    for data in args.data:
        for seed in args.seeds:
            run_dir = args.runs / args.system / data / f"seed{seed}"
            if recipe_run(run_dir) is not None:
                print(f"{run_dir}: finished, skipped", file=sys.stderr)
                continue
            command = [
                sys.executable, str(ROOT / "train.py"), f"data={data}", f"system={args.system}",
                f"seed={seed}", *recipe.overrides, f"trainer.threads={args.threads}",
                "trainer.progress=false", f"hydra.run.dir={run_dir}",
            ]  # fmt: skip
            print(" ".join(command[1:]), file=sys.stderr, flush=True)
            if subprocess.run(command, cwd=ROOT, check=False).returncode != 0:
                return 1
    return 0


def table(recipe: Recipe, args: argparse.Namespace) -> int:
    label, base = recipe.label, recipe.baseline
    rows = []
    for data in args.data:
        for seed in args.seeds:
            study = study_run(args.system, data, seed)
            changed = recipe_run(args.runs / args.system / data / f"seed{seed}")
            if study is None or changed is None:
                print(
                    f"{data} seed {seed}: a run is missing or unfinished, left out", file=sys.stderr
                )
                continue
            row = {"data": data, "seed": seed}
            row |= {f"{base}_{key}": value for key, value in study.items()}
            row |= {f"{label}_{key}": value for key, value in changed.items()}
            row["test_las_difference"] = changed["test_las"] - study["test_las"]
            rows.append(row)
    if not rows:
        print("no pair of finished runs", file=sys.stderr)
        return 1
    lines = [
        f"| treebank | seed | {base}: best / last epoch | test LAS | {label}: best / last epoch "
        "| test LAS | difference |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['data']} | {r['seed']} | {r[f'{base}_best_epoch']} / {r[f'{base}_epochs']} "
            f"| {r[f'{base}_test_las']:.2f} | {r[f'{label}_best_epoch']} / {r[f'{label}_epochs']} "
            f"| {r[f'{label}_test_las']:.2f} | {r['test_las_difference']:+.2f} |"
        )
    summary = {}
    for data in dict.fromkeys(r["data"] for r in rows):
        mine = [r for r in rows if r["data"] == data]
        keys = (f"{base}_test_las", f"{label}_test_las", "test_las_difference")
        keys += (f"{base}_epochs", f"{label}_epochs", f"{base}_minutes", f"{label}_minutes")
        summary[data] = {key: statistics.fmean(r[key] for r in mine) for key in keys}
        summary[data]["seeds"] = [r["seed"] for r in mine]
        s = summary[data]
        lines.append(
            f"| {data}, mean of {len(mine)} | | {s[f'{base}_epochs']:.0f} epochs "
            f"| {s[f'{base}_test_las']:.2f} | {s[f'{label}_epochs']:.0f} epochs "
            f"| {s[f'{label}_test_las']:.2f} | {s['test_las_difference']:+.2f} |"
        )
    md = "\n".join(lines) + "\n"
    document = {
        "system": args.system,
        "recipe": list(recipe.overrides),
        "metric": "CoNLL 2018 LAS, untagged test, greedy",
    }
    write_results(
        args.out,
        f"{recipe.name}_{args.system}",
        rows,
        document | {"rows": rows, "means": summary},
        md,
    )
    print(md)
    return 0


def main(recipe: Recipe, description: str, argv: Sequence[str] | None = None) -> int:
    """The command line of a recipe's study (``description``: its module's docstring)."""
    parser = argparse.ArgumentParser(description=description.split("\n\n")[0])
    parser.add_argument("--train", action="store_true", help="train the recipe's runs first")
    parser.add_argument("--system", default=recipe.systems[0], choices=recipe.systems)
    parser.add_argument("--data", nargs="+", default=["hu_szeged", "el_gdt"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    parser.add_argument(
        "--runs", type=Path, default=ROOT / "outputs" / recipe.name, help="the recipe's runs"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--out", type=Path, default=ROOT / "experiments" / "results")
    args = parser.parse_args(argv)
    if args.train and train(recipe, args) != 0:
        return 1
    return table(recipe, args)
