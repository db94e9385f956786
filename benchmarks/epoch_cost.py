"""Seconds per training epoch of every system, split into training and dev evaluation.

Each system is trained for a few epochs on one treebank by the trainer of ``train.py``
(:func:`neuralparse.training.trainer.train`: the static-oracle examples are extracted once,
then every epoch is one pass over the training sentences and a greedy parse of the dev split,
scored), with the same model preset, seed and batches for every system.  The trainer's
``metrics.jsonl`` records ``train_seconds`` and ``eval_seconds`` per epoch; this script prints
their mean per system, the epoch total and each one's ratio to arc-eager (added to the run when
not asked for, since the ratios need it), and saves everything as JSON (``--out``), every
epoch included.  The first epoch pays one-off costs (allocations, kernel choices), so the
means leave it out when there are later ones.

What differs between systems is mostly the dev evaluation: the training step scores oracle
configurations extracted beforehand (the same work for every system but the number of
transitions per sentence), while the evaluation runs each system's own greedy decoder, legal
mask included: the eager loop (:func:`~neuralparse.search.greedy.greedy_decode`), or on CUDA
for the systems that allow it the replay of CUDA graphs that prediction uses too
(:func:`neuralparse.training.trainer.dev_decoder`).  ``setup s`` is the time before the first
epoch (reading, tree transforms, the oracle run, the model), reported apart.

    python -m benchmarks.epoch_cost [--treebank UD_Hungarian-Szeged] [--epochs 3]
        [--systems arc_eager three_step two_registers] [--device cpu|cuda] [--threads 1]
        [--model default|small] [--batch-tokens N] [--max-train-sentences N]
        [--dynamic-oracle] [--rounds N] [--data-root DIR] [--out PATH]

``--rounds N`` measures every system N times, one round after the other, and reports the
median over rounds of each system's ratio to arc-eager *of the same round*: on a shared or
noisy machine the speed drifts by more than the differences between systems over a few
minutes, so a ratio is only meaningful between runs close in time.  The JSON keeps every
round (``rounds`` of each system); its top-level figures are the medians.

``--dynamic-oracle`` adds a row ``SYSTEM+dynamic`` for each system that has a dynamic oracle,
trained with ``trainer.oracle=dynamic`` (each batch parsed by the model within its step,
:mod:`neuralparse.training.exploration`), so its training cost is compared in the same run.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from neuralparse.runtime.openmp import WAIT_POLICY, shares_the_cores

# Before torch is imported: OpenMP threads wait as train.py's would on the device asked for
# (neuralparse.runtime.openmp), which is why --device is looked up here already.
if shares_the_cores(next((b for a, b in pairwise(sys.argv) if a == "--device"), "cpu")):
    os.environ.setdefault(WAIT_POLICY, "PASSIVE")
from omegaconf import OmegaConf

from benchmarks.common import ROOT, save_json
from neuralparse.config import TrainConfig, TrainerConfig, preset_model_config
from neuralparse.datasets import treebank_paths
from neuralparse.errors import InputError
from neuralparse.runtime.devices import describe_machine, resolve_device
from neuralparse.systems import SYSTEMS
from neuralparse.training.trainer import train

DEFAULT_JSON = ROOT / "outputs" / "benchmarks" / "epoch_cost.json"
BASELINE = "arc_eager"


@dataclass
class SystemCost:
    """One system's run: per-epoch seconds and their means (epochs after the first)."""

    system: str
    setup_seconds: float
    train_seconds: list[float]
    eval_seconds: list[float]
    dev_sentences: int
    dev_las: list[float]
    updates: list[int]
    """Optimizer steps per epoch (fewer with larger ``--batch-tokens``)."""

    @staticmethod
    def _steady(values: list[float]) -> float:
        return statistics.fmean(values[1:] if len(values) > 1 else values)

    @property
    def train(self) -> float:
        return self._steady(self.train_seconds)

    @property
    def eval(self) -> float:
        return self._steady(self.eval_seconds)

    @property
    def epoch(self) -> float:
        return self.train + self.eval


def train_config(
    args: argparse.Namespace, system: str, files: dict[str, Path], oracle: str = "static"
) -> TrainConfig:
    """The configuration ``train.py system=SYSTEM data=custom`` would build for this run."""
    cfg = OmegaConf.structured(TrainConfig)
    cfg.data.treebank = None
    cfg.data.train, cfg.data.dev = str(files["train"]), str(files["dev"])
    cfg.data.max_train_sentences = args.max_train_sentences
    cfg.data.max_dev_sentences = args.max_dev_sentences
    cfg.system.name = system
    cfg.model = OmegaConf.structured(preset_model_config(args.model))
    cfg.trainer.max_epochs = args.epochs
    cfg.trainer.patience = args.epochs + 1  # never stop early: every system runs each epoch
    cfg.trainer.threads = args.threads or None
    if args.batch_tokens is not None:
        cfg.trainer.batch_tokens = args.batch_tokens
    cfg.trainer.device = args.device
    cfg.trainer.oracle = oracle
    cfg.trainer.progress = False
    cfg.trainer.evaluate_test = False
    cfg.seed = args.seed
    return cfg  # type: ignore[return-value]  # a structured config of TrainConfig


def measure(
    args: argparse.Namespace, system: str, files: dict[str, Path], oracle: str = "static"
) -> SystemCost:
    """Train ``system`` for ``args.epochs`` epochs in a scratch directory and read its
    per-epoch timings (a dynamic-oracle run's row is named ``SYSTEM+dynamic``)."""
    with tempfile.TemporaryDirectory(prefix=f"epoch_cost_{system}_") as out:
        result = train(train_config(args, system, files, oracle), out)
    history = result.history
    first = history[0]
    return SystemCost(
        system=system if oracle == "static" else f"{system}+{oracle}",
        # elapsed_seconds counts from the start of training, setup included.
        setup_seconds=first["elapsed_seconds"] - first["train_seconds"] - first["eval_seconds"],
        train_seconds=[h["train_seconds"] for h in history],
        eval_seconds=[h["eval_seconds"] for h in history],
        dev_sentences=int(first["dev"]["sentences"]),
        dev_las=[h["dev"]["las"] for h in history],
        updates=[h["steps"] for h in history],
    )


def format_table(costs: Sequence[SystemCost]) -> str:
    base = next((c for c in costs if c.system == BASELINE), None)

    def ratio(value: float, reference: float | None) -> str:
        return f"{value / reference:.2f}" if reference else "-"

    lines = [
        f"{'system':16s} {'epochs':>6s} {'setup s':>8s} {'train s':>8s} {'dev s':>7s} "
        f"{'epoch s':>8s} {'dev sent/s':>10s} {'train/AE':>8s} {'dev/AE':>7s} {'epoch/AE':>8s}"
    ]
    for c in costs:
        lines.append(
            f"{c.system:16s} {len(c.train_seconds):6d} {c.setup_seconds:8.1f} {c.train:8.2f} "
            f"{c.eval:7.2f} {c.epoch:8.2f} {c.dev_sentences / max(c.eval, 1e-9):10.0f} "
            f"{ratio(c.train, base and base.train):>8s} {ratio(c.eval, base and base.eval):>7s} "
            f"{ratio(c.epoch, base and base.epoch):>8s}"
        )
    return "\n".join(lines)


def round_figures(costs: Sequence[SystemCost]) -> dict[str, dict[str, Any]]:
    """Each system's run of one round with its means and its ratios to that round's arc-eager."""
    base = next(c for c in costs if c.system == BASELINE)
    return {
        c.system: {
            **asdict(c),
            "train_mean": c.train,
            "eval_mean": c.eval,
            "epoch_mean": c.epoch,
            "train_ratio_to_arc_eager": c.train / base.train,
            "eval_ratio_to_arc_eager": c.eval / base.eval,
            "epoch_ratio_to_arc_eager": c.epoch / base.epoch,
        }
        for c in costs
    }


MEDIAN_KEYS = (
    "train_mean",
    "eval_mean",
    "epoch_mean",
    "train_ratio_to_arc_eager",
    "eval_ratio_to_arc_eager",
    "epoch_ratio_to_arc_eager",
)


def summarise(rounds: Sequence[Sequence[SystemCost]]) -> dict[str, dict[str, Any]]:
    """Per system: the first round's run, the medians over rounds of its means and ratios,
    and every round (``rounds``); with one round, that round's figures."""
    figures = [round_figures(costs) for costs in rounds]
    summary = {}
    for name, first in figures[0].items():
        each = [round_[name] for round_ in figures]
        summary[name] = {
            **first,
            **{key: statistics.median(r[key] for r in each) for key in MEDIAN_KEYS},
            "rounds": each,
        }
    return summary


def format_medians(rounds: Sequence[Sequence[SystemCost]]) -> str:
    """Each system's epoch / arc-eager per round and their median."""
    summary = summarise(rounds)
    lines = [f"{'system':16s} {'epoch/AE by round':>24s} {'median':>7s} {'dev/AE median':>14s}"]
    for name, figures in summary.items():
        ratios = " ".join(f"{r['epoch_ratio_to_arc_eager']:.2f}" for r in figures["rounds"])
        lines.append(
            f"{name:16s} {ratios:>24s} {figures['epoch_ratio_to_arc_eager']:7.2f} "
            f"{figures['eval_ratio_to_arc_eager']:14.2f}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--treebank", default="UD_Hungarian-Szeged", help="UD treebank name")
    parser.add_argument("--data-root", help="data root (default: neuralparse.datasets's)")
    parser.add_argument("--download", action="store_true", help="fetch absent splits")
    parser.add_argument("--systems", nargs="+", default=sorted(SYSTEMS), choices=sorted(SYSTEMS))
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (0: default)")
    parser.add_argument(
        "--model", default="default", help="model preset (neuralparse/conf/model/NAME.yaml)"
    )
    parser.add_argument("--max-train-sentences", type=int, help="keep the first N training ones")
    parser.add_argument("--max-dev-sentences", type=int, help="keep the first N dev ones")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--batch-tokens", type=int, help="words per training batch (default: the trainer's)"
    )
    parser.add_argument(
        "--dynamic-oracle",
        action="store_true",
        help="also train each system that has a dynamic oracle with trainer.oracle=dynamic "
        "(exploring from epoch 2: use --epochs 3 or more)",
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="measure every system N times (ratios: medians)"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_JSON, help="JSON file to write")
    parser.add_argument("--verbose", action="store_true", help="the trainer's log on stderr")
    args = parser.parse_args(argv)
    if args.epochs < 1:
        parser.error("--epochs must be at least 1")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    logging.basicConfig(level=logging.INFO)
    if not args.verbose:
        logging.getLogger("neuralparse").setLevel(logging.ERROR)
    try:
        files = treebank_paths(
            args.treebank, args.data_root, ("train", "dev"), download=args.download
        )
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    systems = list(dict.fromkeys([BASELINE, *args.systems]))  # arc-eager first: the ratios
    runs = [(name, "static") for name in systems]
    if args.dynamic_oracle:
        runs += [(name, "dynamic") for name in systems if SYSTEMS[name].has_dynamic_oracle]
    rounds: list[list[SystemCost]] = []
    for number in range(1, args.rounds + 1):
        costs: list[SystemCost] = []
        for name, oracle in runs:
            costs.append(measure(args, name, files, oracle))
            print(format_table(costs[-1:]).split("\n", 1)[1], flush=True)
        if args.rounds > 1:
            print(f"round {number} of {args.rounds}")
        print(format_table(costs))
        rounds.append(costs)
    if args.rounds > 1:
        print(format_medians(rounds))
    env = describe_machine(resolve_device(args.device))
    means = f"means over epochs 2-{args.epochs}" if args.epochs > 1 else "one epoch"
    batch = args.batch_tokens or TrainerConfig.batch_tokens
    print(
        f"{args.treebank}, model {args.model}, {batch} words per batch, "
        f"device {env['device']}, {env['threads']} threads; {means}"
    )
    result = {
        "treebank": args.treebank,
        "files": {split: str(path) for split, path in files.items()},
        "model": args.model,
        "batch_tokens": batch,
        "epochs": args.epochs,
        "max_train_sentences": args.max_train_sentences,
        "max_dev_sentences": args.max_dev_sentences,
        "seed": args.seed,
        "environment": env,
        "mean_over": "epochs after the first" if args.epochs > 1 else "the one epoch",
        "rounds": args.rounds,
        "systems": summarise(rounds),
    }
    save_json(result, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
