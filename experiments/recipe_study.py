"""Static against dynamic oracle: a system (arc-eager, or ``--system arc_hybrid``) trained on
gold derivations only (the default) or on its own configurations with error exploration
(``trainer.oracle=dynamic``, Goldberg & Nivre 2012, 2013), everything else the default recipe,
trained to convergence.

The static runs are the accuracy study's (``experiments/study_runs/<data>/<system>/seed<k>``:
default joint model, early stopping on dev LAS, test parsed untagged); the dynamic runs are
trained by ``--train`` into ``--runs <system>/<data>/seed<k>`` with the same seeds, one
``train.py`` after another.  Both are scored with the CoNLL 2018 LAS (head and universal part
of DEPREL), greedy: the study's untagged test parse for a static run, the trainer's test line
for a dynamic one (the joint model never reads the input's tags, so the two agree).

    python -m experiments.dynamic_oracle --train [--system arc_eager] [--data hu_szeged el_gdt]
        [--seeds 1 2 3] [--runs outputs/dynamic_oracle] [--threads 1]
    python -m experiments.dynamic_oracle [--data ...] [--seeds ...] [--runs ...] [--out DIR]

The second form prints the table and writes ``dynamic_oracle_<system>.{csv,json,md}`` to ``--out``
(default ``experiments/results``); a pair whose run is missing or unfinished is left out with
a message.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from experiments.report import write_results
from experiments.runs import ROOT, STUDY_RUNS

DEFAULT_RUNS = ROOT / "outputs" / "dynamic_oracle"


def static_run(system: str, data: str, seed: int) -> dict[str, Any] | None:
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


def dynamic_run(run_dir: Path) -> dict[str, Any] | None:
    """A finished ``trainer.oracle=dynamic`` run read from its ``metrics.jsonl`` (None while
    it has no ``stopped`` and test line)."""
    path = run_dir / "metrics.jsonl"
    if not path.is_file():
        return None
    records = [json.loads(line) for line in path.read_text().splitlines()]
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
        "minutes": epochs[-1]["elapsed_seconds"] / 60,
        "stopped": stopped["limit"],
    }


def train(args: argparse.Namespace) -> int:
    for data in args.data:
        for seed in args.seeds:
            run_dir = args.runs / args.system / data / f"seed{seed}"
            if dynamic_run(run_dir) is not None:
                print(f"{run_dir}: finished, skipped", file=sys.stderr)
                continue
            command = [
                sys.executable, str(ROOT / "train.py"), f"data={data}", f"system={args.system}",
                f"seed={seed}", "trainer.oracle=dynamic", f"trainer.threads={args.threads}",
                "trainer.progress=false", f"hydra.run.dir={run_dir}",
            ]  # fmt: skip
            print(" ".join(command[1:]), file=sys.stderr, flush=True)
            if subprocess.run(command, cwd=ROOT, check=False).returncode != 0:
                return 1
    return 0


def table(args: argparse.Namespace) -> int:
    rows = []
    for data in args.data:
        for seed in args.seeds:
            static = static_run(args.system, data, seed)
            dynamic = dynamic_run(args.runs / args.system / data / f"seed{seed}")
            if static is None or dynamic is None:
                print(
                    f"{data} seed {seed}: a run is missing or unfinished, left out", file=sys.stderr
                )
                continue
            row = {"data": data, "seed": seed}
            row |= {f"static_{key}": value for key, value in static.items()}
            row |= {f"dynamic_{key}": value for key, value in dynamic.items()}
            row["test_las_difference"] = dynamic["test_las"] - static["test_las"]
            rows.append(row)
    if not rows:
        print("no pair of finished runs", file=sys.stderr)
        return 1
    lines = [
        "| treebank | seed | static: best / last epoch | test LAS | dynamic: best / last epoch "
        "| test LAS | difference |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['data']} | {r['seed']} | {r['static_best_epoch']} / {r['static_epochs']} "
            f"| {r['static_test_las']:.2f} | {r['dynamic_best_epoch']} / {r['dynamic_epochs']} "
            f"| {r['dynamic_test_las']:.2f} | {r['test_las_difference']:+.2f} |"
        )
    summary = {}
    for data in dict.fromkeys(r["data"] for r in rows):
        mine = [r for r in rows if r["data"] == data]
        keys = ("static_test_las", "dynamic_test_las", "test_las_difference")
        keys += ("static_epochs", "dynamic_epochs", "static_minutes", "dynamic_minutes")
        summary[data] = {key: statistics.fmean(r[key] for r in mine) for key in keys}
        summary[data]["seeds"] = [r["seed"] for r in mine]
        s = summary[data]
        lines.append(
            f"| {data}, mean of {len(mine)} | | {s['static_epochs']:.0f} epochs "
            f"| {s['static_test_las']:.2f} | {s['dynamic_epochs']:.0f} epochs "
            f"| {s['dynamic_test_las']:.2f} | {s['test_las_difference']:+.2f} |"
        )
    md = "\n".join(lines) + "\n"
    document = {"system": args.system, "metric": "CoNLL 2018 LAS, untagged test, greedy"}
    write_results(
        args.out,
        f"dynamic_oracle_{args.system}",
        rows,
        document | {"rows": rows, "means": summary},
        md,
    )
    print(md)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", action="store_true", help="train the dynamic runs first")
    parser.add_argument("--system", default="arc_eager", choices=["arc_eager", "arc_hybrid"])
    parser.add_argument("--data", nargs="+", default=["hu_szeged", "el_gdt"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    parser.add_argument("--runs", type=Path, default=DEFAULT_RUNS, help="the dynamic runs")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--out", type=Path, default=ROOT / "experiments" / "results")
    args = parser.parse_args(argv)
    if args.train and train(args) != 0:
        return 1
    return table(args)


if __name__ == "__main__":
    sys.exit(main())
