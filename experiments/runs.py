"""What the training studies share (:mod:`experiments.accuracy_study`,
:mod:`experiments.tagging_study`, :mod:`experiments.vectors_study`): the ``train.py`` command
of one run, the command of a study's own step for one run in a process of its own, a run's
``metrics.jsonl`` and training time, and a trained run read back (its configuration, test
file, metrics and parser)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from neuralparse import Parser
    from neuralparse.io import Sentence

ROOT = Path(__file__).resolve().parents[1]
"""The checkout: ``train.py`` is here, and the studies' own steps run from here."""
STUDY_RUNS = ROOT / "experiments" / "study_runs"
"""Where the accuracy study keeps its runs.  Unlike ``outputs/``, this folder is part of the
repository apart from each run's checkpoints and logs (``.gitignore``): every finished run's
``scores.json``, ``metrics.jsonl``, ``config.yaml`` and test parses stay with the checkout, so
the study, which takes more machine time than one session has, resumes where the last session
stopped, and its tables can be rebuilt from them."""
DATA_KEYS = ("en_ewt", "got_proiel", "tr_imst", "el_gdt", "hu_szeged")
"""The studies' treebanks (``data=`` presets), in the order runs start: largest training set
first."""


def train_command(
    run_dir: Path, overrides: Sequence[str], args: argparse.Namespace, extra: Sequence[str] = ()
) -> list[str]:
    """``train.py`` for one run of a study into ``run_dir``: the run's ``overrides``, the
    study's ``--device`` and ``--threads``, no progress bar and no test scoring (the study
    scores test itself), then ``extra`` overrides (which win).  A run interrupted before
    (``last.pt`` in ``run_dir``) goes on from where it stopped unless ``overrides`` name a
    ``trainer.resume`` of their own."""
    last = run_dir / "last.pt"
    resumes = any(override.startswith("trainer.resume=") for override in overrides)
    resume = [f"trainer.resume={last}"] if last.is_file() and not resumes else []
    return [
        sys.executable,
        str(ROOT / "train.py"),
        *overrides,
        f"trainer.device={args.device}",
        f"trainer.threads={args.threads}",
        "trainer.progress=false",
        "trainer.evaluate_test=false",
        *resume,
        *extra,
        f"hydra.run.dir={run_dir}",
    ]


def step_command(module: str, flag: str, run_dir: Path, args: argparse.Namespace) -> list[str]:
    """``python -m module flag RUN_DIR`` with the study's ``--device``, ``--threads`` and
    ``--quick``: a study's own step for one run (to be run with ``cwd=ROOT``)."""
    quick = ["--quick"] if args.quick else []
    device = ["--device", args.device, "--threads", str(args.threads)]
    return [sys.executable, "-m", module, flag, str(run_dir), *device, *quick]


def metrics_records(run_dir: Path) -> list[dict]:
    """The records of the run's ``metrics.jsonl`` (none if it has none), without a line cut
    short by an interrupted run."""
    metrics = run_dir / "metrics.jsonl"
    if not metrics.is_file():
        return []
    records = []
    for line in metrics.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def training_minutes(epochs: Sequence[dict[str, Any]]) -> float | None:
    """Minutes of training and dev evaluation over every ``train.py`` process that trained the
    run (None before its first epoch).  An epoch's ``elapsed_seconds`` counts from the start
    of its process, so a run resumed from ``last.pt`` counts from zero again: an epoch that
    began (``elapsed_seconds`` less its ``train_seconds`` and ``eval_seconds``) before the
    epoch before it ended was trained by another process, and the processes' times add up."""
    if not epochs:
        return None
    total, previous = 0.0, 0.0
    for epoch in epochs:
        elapsed = float(epoch["elapsed_seconds"])
        began = elapsed - epoch.get("train_seconds", 0.0) - epoch.get("eval_seconds", 0.0)
        if began < previous:
            total += previous
        previous = elapsed
    return (total + previous) / 60


@dataclass
class TrainedRun:
    """A run that ``train.py`` finished, read back for scoring."""

    config: dict[str, Any]
    """Its resolved ``config.yaml``."""
    test_file: Path
    gold: list[Sentence]
    """The test sentences (the first 50 in quick mode)."""
    parser: Parser
    """Its best checkpoint, loaded."""
    records: list[dict[str, Any]]
    """The lines of ``metrics.jsonl``."""

    @property
    def epochs(self) -> list[dict[str, Any]]:
        return [r for r in self.records if "epoch" in r]


def load_run(run_dir: Path, device: str, threads: int, quick: bool) -> TrainedRun:
    """The run in ``run_dir`` with ``threads`` torch threads and its parser on ``device``."""
    import torch
    import yaml

    from neuralparse import Parser
    from neuralparse.config import DataConfig, resolve_data_files
    from neuralparse.io import read_conllu

    torch.set_num_threads(threads)
    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    test_file = resolve_data_files(DataConfig(**config["data"]), ("test",))["test"]
    gold = read_conllu(test_file)[: 50 if quick else None]
    parser = Parser.load(run_dir / "checkpoint.pt", device=device)
    return TrainedRun(config, test_file, gold, parser, metrics_records(run_dir))
