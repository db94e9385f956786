"""The accuracy study of the seeds' experiments: train every system on every treebank to
convergence, then parse test greedily and with a beam.

    python -m experiments.accuracy_study [--data en_ewt ...] [--systems arc_eager ...]
        [--seeds 1 2 3] [--models default gold_tags] [--jobs 2] [--device cpu|cuda]
        [--max-epochs N] [--max-minutes 120] [--deadline-minutes 120] [--whole-runs]
        [--out experiments/study_runs]
        [--quick] [--plan]

The study the README reports is ``--seeds 1 2 3`` (the default joint model, which tags and
parses untagged text) and ``--models gold_tags --seeds 1`` (a model that reads gold UPOS,
XPOS and FEATS: what gold tags add).  Every run trains with the trainer's own stopping rule
(early stopping on dev LAS, ``trainer.patience``); ``--max-epochs`` (default: the trainer's)
and ``--max-minutes`` are safety nets, and ``scores.json`` records which one ended the run.

Each run of the default model lives in ``OUT/<data>/<system>/seed<k>/``, a run of another
model in ``OUT/<data>/<system>/<model>/seed<k>/``: ``train.py``'s outputs (config.yaml,
metrics.jsonl, checkpoint.pt), then ``scores.json`` (the run's epochs, best epoch, why it
stopped, and the test scores of each decoding mode with timing) and ``test.<mode>.json.gz``
(the predicted heads and labels of every test sentence, in file order) that
``experiments/accuracy_table.py`` turns into the README's tables and significance tests.
Test is parsed **untagged** (UPOS, XPOS and FEATS blanked) for a model with tagging heads,
as users' text comes, and as distributed for ``gold_tags``.  Runs are independent
subprocesses, ``--jobs`` at a time, longest first (English-EWT, then by treebank size;
two_registers first within a treebank); a run whose ``scores.json`` exists is skipped, so an
interrupted study resumes where it stopped: a run whose training ended (the ``"stopped"``
line of ``metrics.jsonl``) is only parsed, and one cut off while training goes on from its
``last.pt`` (``trainer.resume``).

``--deadline-minutes`` bounds the whole study: a run starting late gets only the training time
left (minus a margin for parsing test), and no run starts with less than ``--min-minutes``;
with ``--whole-runs`` none starts that would not finish by the median training time of its
treebank and model's finished runs (where a cut run's ``last.pt`` will not outlive the
checkout, as on a machine lent for one sitting).
A run that the deadline (not the ``--max-minutes`` safety net) ends may still be learning: it
is not parsed, and the next study goes on from its ``last.pt``, so runs longer than one
sitting (English-EWT on a CPU) train in pieces.  ``last.pt`` is not part of the repository:
such a run goes on only in the same checkout.
``--quick`` trains a tiny model for one epoch on 200 sentences (the test suite's smoke run).
``--plan`` runs nothing: it lists the state of every run the other options name (done, trained
and waiting to be parsed, cut off and going on from ``last.pt``, to train), counts them and
estimates the training time left from the finished runs of each treebank and model, which is
how a study spread over sessions says what remains.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import yaml

from experiments.runs import (
    DATA_KEYS,
    ROOT,
    STUDY_RUNS,
    load_run,
    metrics_records,
    step_command,
    training_minutes,
)
from experiments.runs import train_command as study_train_command

SYSTEMS = (
    "two_registers",
    "three_step",
    "two_planar",
    "swap",
    "planar",
    "arc_eager_pp",
    "arc_eager",
    "arc_standard",
    "arc_hybrid",
)
"""Slowest first, so the long runs do not end the study alone."""
MODES = {
    "greedy": {"search": "greedy", "beam_size": 1},
    "beam8": {"search": "beam", "beam_size": 8},
}
MODELS = ("default", "gold_tags")
"""The ``model=`` presets a study trains: the joint tagger-parser, and the gold-tag parser."""
MAX_MINUTES = 120.0
"""The default ``--max-minutes``: the safety net on one run's training time."""
PARSE_MARGIN_MINUTES = 1.5
"""Time kept after training for parsing test (greedy and beam) within the deadline."""


@dataclass(frozen=True)
class Run:
    data: str
    system: str
    seed: int
    model: str = "default"

    def directory(self, out: Path) -> Path:
        system = out / self.data / self.system
        return (system if self.model == "default" else system / self.model) / f"seed{self.seed}"


def train_command(
    run: Run, args: argparse.Namespace, minutes: float, resume: Path | None = None
) -> list[str]:
    overrides = [
        f"data={run.data}",
        f"system={run.system}",
        f"seed={run.seed}",
        f"model={run.model}",
        f"trainer.max_time_minutes={minutes:.2f}",
    ]
    if args.max_epochs is not None:
        overrides.append(f"trainer.max_epochs={args.max_epochs}")
    if resume is not None:
        overrides.append(f"trainer.resume={resume}")
    quick = [  # the study's model, shrunk
        "model.word_dim=32",
        "model.char_out=32",
        "model.lstm_layers=1",
        "model.lstm_hidden=64",
        "model.mlp_hidden=64",
        "trainer=quick",
        "trainer.max_epochs=1",
        "data.max_train_sentences=200",
        "data.max_dev_sentences=50",
    ]
    return study_train_command(
        run.directory(args.out), overrides, args, quick if args.quick else ()
    )


def parse_test(run_dir: Path, device: str, threads: int, quick: bool) -> dict:
    """Parse the run's test file in every mode; write the predictions and ``scores.json``."""
    import torch

    from neuralparse.evaluation import evaluate, predicted_tag_scores_only

    trained = load_run(run_dir, device, threads, quick)
    config, gold, parser, epochs = trained.config, trained.gold, trained.parser, trained.epochs
    tagging = bool(parser.model.tagged_columns)
    stopped = next((r for r in trained.records if "stopped" in r), {})
    model = run_dir.parent.name if run_dir.parent.name in MODELS else "default"
    summary: dict = {
        "data": run_dir.parents[1 if model == "default" else 2].name,
        "treebank": config["data"]["treebank"],
        "system": config["system"]["name"],
        "model": model,
        "seed": config["seed"],
        "epochs": len(epochs),
        "best_epoch": stopped.get("best_epoch"),
        "stopped": stopped.get("stopped"),
        "train_minutes": training_minutes(epochs),
        "best_dev_las": stopped.get("best_las", epochs[-1]["best_las"] if epochs else None),
        "test_input": "untagged" if tagging else "tagged",
        "recipe": training_recipe(config),
        # The weight test decoding gave the arc term: the recipe's arc_decoding_weight, or 0
        # for the systems that decode without it (TransitionSystem.arc_term_by_default).
        "decoding_arc_weight": parser.model.default_arc_weight,
        "device": str(parser.device),
        "threads": threads,
        "test_file": str(trained.test_file),
        "modes": {},
    }
    given = [s.without_tags() for s in gold] if tagging else gold
    for mode, options in MODES.items():
        if parser.device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        predicted = parser.parse(given, tags="predict" if tagging else "keep", **options)
        if parser.device.type == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        trees = {
            "sent_ids": [s.sent_id for s in predicted],
            "heads": [list(s.heads) for s in predicted],
            "deprels": [list(s.deprels) for s in predicted],
        }
        with gzip.open(run_dir / f"test.{mode}.json.gz", "wt", encoding="utf-8") as sink:
            json.dump(trees, sink)
        summary["modes"][mode] = {
            "scores": predicted_tag_scores_only(  # no tag scores for tags copied from input
                evaluate(gold, predicted).to_dict(), parser.model.tagged_columns
            ),
            "seconds": seconds,
            "words": sum(len(s.heads) for s in gold),
            "sentences": len(gold),
        }
    (run_dir / "scores.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


RECIPE_KEYS = ("batch_tokens", "lr", "lr_decay", "lr_patience", "max_lr_decays", "patience")
"""The trainer settings that make two runs comparable (the table flags treebanks whose
runs differ in them), besides the model's arc scorer: :data:`ARC_KEYS`."""
ARC_KEYS = {"arc_loss_weight": 0.0, "arc_hidden": 256, "arc_decoding_weight": 0.0}
"""The arc scorer's settings with their values in configs older than each key."""


def training_recipe(config: dict) -> dict:
    """The run's :data:`RECIPE_KEYS` and :data:`ARC_KEYS` (absent from configs older than a
    key: its value then)."""
    trainer, model = config["trainer"], config.get("model", {})
    # A constant rate, before the decay existed; no limit on the decays before that limit.
    before = {"lr_decay": 1.0, "lr_patience": 3, "max_lr_decays": None}
    recipe = {key: trainer.get(key, before.get(key)) for key in RECIPE_KEYS}
    return recipe | {key: model.get(key, default) for key, default in ARC_KEYS.items()}


def stop_record(run_dir: Path) -> dict | None:
    """The ``"stopped"`` line of the run's ``metrics.jsonl`` (``train.py`` ended the run), or
    None (a run cut off while training has no such line)."""
    return next((r for r in metrics_records(run_dir) if "stopped" in r), None)


def cut_by_deadline(run_dir: Path, stopped: dict, safety_net_minutes: float) -> bool:
    """Whether the run's training was ended by a time limit shorter than the study's safety
    net (``--max-minutes``), that is by the study's deadline: the model may still be
    learning, so it is not parsed, and the next study goes on from its ``last.pt``."""
    if stopped.get("limit") != "max_time_minutes":
        return False
    config = yaml.safe_load((run_dir / "config.yaml").read_text(encoding="utf-8"))
    return float(config["trainer"]["max_time_minutes"]) < safety_net_minutes


def training_finished(run_dir: Path, safety_net_minutes: float = MAX_MINUTES) -> bool:
    """Whether ``train.py`` ended the run in ``run_dir`` for good and its model is there to
    parse test: its ``metrics.jsonl`` says why it stopped, not by the study's deadline
    (:func:`cut_by_deadline`), and ``checkpoint.pt`` exists (a checkout keeps the metrics of
    the study's runs but not their checkpoints: such a run is trained again)."""
    stopped = stop_record(run_dir)
    return (
        stopped is not None
        and (run_dir / "checkpoint.pt").is_file()
        and not cut_by_deadline(run_dir, stopped, safety_net_minutes)
    )


def run_state(run_dir: Path, safety_net_minutes: float = MAX_MINUTES) -> tuple[str, str]:
    """Where the run in ``run_dir`` stands, as ``(state, detail)``; the state is one of
    :data:`STATES`, in the order a run goes through them."""
    scores = run_dir / "scores.json"
    if scores.is_file():
        summary = json.loads(scores.read_text(encoding="utf-8"))
        return "done", (
            f"best epoch {summary['best_epoch']} of {summary['epochs']}, "
            f"stopped by {str(summary['stopped']).split(':')[0]}"
        )
    if training_finished(run_dir, safety_net_minutes):
        return "to parse", "training ended; test not parsed yet"
    epochs = [record for record in metrics_records(run_dir) if "epoch" in record]
    if epochs and (run_dir / "last.pt").is_file():
        best = epochs[-1].get("best_epoch")
        return "goes on", f"after epoch {epochs[-1]['epoch']} (best {best}), from last.pt"
    if epochs:
        return (
            "to train",
            f"logged to epoch {epochs[-1]['epoch']}, no last.pt: trains from the start",
        )
    return "to train", ""


STATES = ("done", "to parse", "goes on", "to train")


def finished_minutes(out: Path, data: str, model: str) -> list[float]:
    """The training minutes (``scores.json``'s ``train_minutes``) of every finished run of
    ``model`` on ``data`` under ``out``, whatever its system and seed."""
    minutes = []
    for scores in sorted((out / data).glob("*/**/seed*/scores.json")):
        summary = json.loads(scores.read_text(encoding="utf-8"))
        if summary.get("model", "default") == model and summary.get("train_minutes"):
            minutes.append(float(summary["train_minutes"]))
    return minutes


def typical_minutes(out: Path, data: str, model: str) -> float | None:
    """The median training minutes of the finished runs of ``model`` on ``data`` (None when
    none has finished): what a run still to train is judged to need."""
    minutes = finished_minutes(out, data, model)
    return statistics.median(minutes) if minutes else None


def minutes_left(run_dir: Path, state: str, typical: float | None) -> float | None:
    """Training minutes ``run_dir`` still needs, judged by ``typical`` (a finished run's
    median): none once trained, ``typical`` less what it has trained for when it goes on."""
    if state in ("done", "to parse"):
        return 0.0
    if typical is None:
        return None
    if state == "goes on":
        trained = training_minutes([r for r in metrics_records(run_dir) if "epoch" in r]) or 0.0
        return max(0.0, typical - trained)
    return typical


def plan(runs: list[Run], args: argparse.Namespace) -> None:
    """Print every run's :func:`run_state`, how many runs are in each state and about how much
    training is left (each treebank and model's median over its finished runs; runs of a
    treebank and model with no finished run are counted apart)."""
    counts = dict.fromkeys(STATES, 0)
    typical: dict[tuple[str, str], float | None] = {}
    left, unknown = 0.0, 0
    for run in runs:
        run_dir = run.directory(args.out)
        state, detail = run_state(run_dir, args.max_minutes)
        counts[state] += 1
        name = f"{run.data} {run.system} {run.model} seed {run.seed}"
        print(f"{state:<9} {name}" + (f": {detail}" if detail else ""))
        key = (run.data, run.model)
        if key not in typical:
            typical[key] = typical_minutes(args.out, run.data, run.model)
        needed = minutes_left(run_dir, state, typical[key])
        if needed is None:
            unknown += 1
        else:
            left += needed
    print(", ".join(f"{count} {state}" for state, count in counts.items()) + f" of {len(runs)}")
    if left or unknown:
        estimate = f"about {left / 60:.1f} h of training left one run at a time"
        if args.jobs > 1:
            estimate += f", {left / 60 / args.jobs:.1f} h with --jobs {args.jobs}"
        print(
            estimate
            + " (by the median of each treebank and model's finished runs)"
            + (f"; {unknown} more run(s) with no finished run to judge by" if unknown else "")
        )


def execute(run: Run, args: argparse.Namespace, deadline: float) -> str:
    run_dir = run.directory(args.out)
    if (run_dir / "scores.json").is_file():
        return f"{run_dir}: done before, skipped"
    minutes = min(args.max_minutes, (deadline - time.time()) / 60 - PARSE_MARGIN_MINUTES)
    if minutes < args.min_minutes:
        return f"{run_dir}: not started (deadline)"
    if args.whole_runs:
        state, _ = run_state(run_dir, args.max_minutes)
        needed = minutes_left(run_dir, state, typical_minutes(args.out, run.data, run.model))
        if needed is not None and needed > minutes:
            return (
                f"{run_dir}: not started (deadline): needs about {needed:.0f} min of training "
                f"by the median of the finished runs, {minutes:.0f} min are left"
            )
    run_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with open(run_dir / "study.log", "a") as log:  # an interrupted run's log is kept
        start = time.time()
        if not training_finished(run_dir):
            last = run_dir / "last.pt"
            _, detail = run_state(run_dir, args.max_minutes)
            report(
                f"{run_dir}: training, up to {minutes:.0f} min" + (f"; {detail}" if detail else "")
            )
            command = train_command(run, args, minutes, last if last.is_file() else None)
            trained = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env)
            if trained.returncode != 0:
                return f"{run_dir}: train.py failed ({trained.returncode}), see study.log"
            stopped = stop_record(run_dir)
            if stopped is not None and cut_by_deadline(run_dir, stopped, args.max_minutes):
                return (
                    f"{run_dir}: cut off by the deadline after epoch {stopped['epochs']} (best "
                    f"{stopped['best_epoch']}); the study goes on from its last.pt when run again"
                )
        parsed = subprocess.run(
            step_command("experiments.accuracy_study", "--parse", run_dir, args),
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=ROOT,
        )
    if parsed.returncode != 0:
        return f"{run_dir}: parsing test failed ({parsed.returncode}), see study.log"
    return f"{run_dir}: done in {(time.time() - start) / 60:.1f} min"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="+", default=list(DATA_KEYS), choices=DATA_KEYS)
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=SYSTEMS)
    parser.add_argument("--seeds", nargs="+", type=int, default=[1])
    parser.add_argument("--models", nargs="+", default=["default"], choices=MODELS)
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--max-epochs", type=int, default=None, help="cap per run (default: the trainer's)"
    )
    parser.add_argument(
        "--max-minutes", type=float, default=MAX_MINUTES, help="training cap per run (a safety net)"
    )
    parser.add_argument(
        "--min-minutes", type=float, default=1.0, help="start no run with less training time"
    )
    parser.add_argument("--deadline-minutes", type=float, default=24 * 60.0)
    parser.add_argument(
        "--whole-runs",
        action="store_true",
        help="start a run only if the median training time of its treebank and model's "
        "finished runs (less what it has trained) fits before the deadline",
    )
    parser.add_argument("--out", type=Path, default=STUDY_RUNS)
    parser.add_argument("--quick", action="store_true", help="tiny smoke run")
    parser.add_argument("--plan", action="store_true", help="list the runs' states; run none")
    parser.add_argument("--parse", type=Path, help=argparse.SUPPRESS)  # one run's test parsing
    args = parser.parse_args(argv)
    if args.parse is not None:
        parse_test(args.parse, args.device, args.threads, args.quick)
        return 0
    deadline = time.time() + args.deadline_minutes * 60
    runs = [
        Run(data, system, seed, model)
        for model in args.models
        for seed in args.seeds
        for data in DATA_KEYS
        if data in args.data
        for system in SYSTEMS
        if system in args.systems
    ]
    if args.plan:
        plan(runs, args)
        return 0
    report(f"{len(runs)} runs, {args.jobs} at a time, into {args.out}")
    failures = 0
    with ThreadPoolExecutor(args.jobs) as pool:
        ends = [pool.submit(execute, run, args, deadline) for run in runs]
        for end in as_completed(ends):  # each run's end as it comes, not in the runs' order
            message = end.result()
            failures += "failed" in message
            report(message)
    return 1 if failures else 0


def report(message: str) -> None:
    """One line of the study's progress, with the time of day (runs take up to hours)."""
    print(f"{time.strftime('%H:%M')} {message}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
