"""Did the study's runs converge?  Dev LAS per epoch of every run, with its best epoch, drawn
one panel per treebank, and a table of how each run ended.

    python -m experiments.convergence [--runs experiments/study_runs] [--out docs/convergence.png]

Reads every ``metrics.jsonl`` under ``--runs`` laid out as :mod:`experiments.accuracy_study`
writes them (``<data>/<system>/seed<k>/``, or ``<data>/<system>/<model>/seed<k>/``): the
epoch lines (dev LAS by the CoNLL 2018 definition) and the ``"stopped"`` line (why training
ended and at which epoch the best checkpoint was).  A run stopped by patience whose best epoch
came before its last has converged in the trainer's sense; the table says for each run
whether it did, and the figure shows how flat each curve was when it stopped.  Runs still
training have no ``"stopped"`` line and are drawn as far as they got.

A second table asks what a shorter patience would have cost (:func:`shorter_patience`).  The
answer is exact, not a model: the trainer's learning-rate schedule depends on
``trainer.lr_patience`` alone, never on ``trainer.patience``, so a run with a shorter patience
is the recorded run cut at the epoch where that patience runs out.  For each patience it gives
the dev LAS lost against the run's best (mean and worst over the finished runs) and the share
of the epochs it would have trained.  A third asks the same of ``trainer.max_lr_decays``
(:func:`fewer_decays`): a run allowed ``k`` decays of its learning rate is the recorded run
cut at the plateau where it would have decayed for the ``k + 1``-th time, exact for the same
reason (runs that recorded no decays, from before the decay existed, are left out).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt

from experiments.runs import STUDY_RUNS

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Curve:
    """One run's dev LAS per epoch and how it ended."""

    data: str
    system: str
    model: str
    seed: str
    las: list[float] = field(default_factory=list)
    decayed: list[bool] = field(default_factory=list)
    """Whether the learning rate decayed after each epoch (empty for runs from before the
    decay was recorded)."""
    best_epoch: int | None = None
    stopped: str | None = None
    """The trainer's reason (``patience: ...``, ``max_epochs (...) reached``, ...); None while
    the run is still training or was cut off."""

    @property
    def records_decays(self) -> bool:
        """Whether every epoch recorded its decay, and the rate decayed at all."""
        return len(self.decayed) == len(self.las) and any(self.decayed)

    @property
    def converged(self) -> bool:
        """Stopped by patience, its best epoch before its last."""
        return (self.stopped or "").startswith("patience") and (self.best_epoch or 0) < len(
            self.las
        )


def read_curve(metrics: Path, runs: Path) -> Curve:
    parts = metrics.parent.relative_to(runs).parts  # data/system[/model]/seedK
    model = parts[2] if len(parts) == 4 else "default"
    curve = Curve(parts[0], parts[1], model, parts[-1].removeprefix("seed"))
    for line in metrics.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:  # a line cut short by an interrupted run
            continue
        if "epoch" in record and "dev" in record and "split" not in record:
            curve.las.append(record["dev"]["las"])
            if "lr_decayed" in record:
                curve.decayed.append(record["lr_decayed"])
        elif "stopped" in record:
            curve.stopped, curve.best_epoch = record["stopped"], record.get("best_epoch")
    return curve


def read_curves(runs: Path) -> list[Curve]:
    found = [*runs.glob("*/*/seed*/metrics.jsonl"), *runs.glob("*/*/*/seed*/metrics.jsonl")]
    return [read_curve(path, runs) for path in sorted(found)]


def table_markdown(curves: Sequence[Curve]) -> str:
    lines = [
        "| data | system | model | seed | epochs | best epoch | best dev LAS | stopped by |",
        "| --- | --- | --- | --- | ---: | ---: | ---: | --- |",
    ]
    for c in curves:
        best = max(c.las) if c.las else None
        lines.append(
            f"| {c.data} | {c.system} | {c.model} | {c.seed} | {len(c.las)} "
            f"| {'–' if c.best_epoch is None else c.best_epoch} "
            f"| {'–' if best is None else f'{best:.2f}'} | {c.stopped or 'still training'} |"
        )
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class StopCost:
    """What a stopping rule with ``setting`` (a patience, or a number of decays) would have
    cost the finished runs."""

    setting: int
    mean_loss: float
    """Mean over runs of best dev LAS minus the best dev LAS seen before stopping."""
    worst_loss: float
    runs_losing: int
    """Runs that would have lost more than 0.1 dev LAS."""
    epoch_share: float
    """Epochs trained over epochs recorded, summed over the runs."""


def stop_epoch(las: Sequence[float], patience: int) -> int:
    """How many epochs a run with dev LAS ``las`` per epoch trains under ``patience``: it stops
    after the first epoch that is ``patience`` epochs past the best so far (the trainer's
    rule), or at the end of the record."""
    best, best_epoch = float("-inf"), 0
    for epoch, value in enumerate(las, 1):
        if value > best:
            best, best_epoch = value, epoch
        if epoch - best_epoch >= patience:
            return epoch
    return len(las)


def decay_stop_epoch(decayed: Sequence[bool], decays: int) -> int:
    """How many epochs a run whose learning rate decayed after the epochs marked in
    ``decayed`` trains when it may decay ``decays`` times: it stops at the plateau that would
    have been its ``decays + 1``-th decay (the trainer's ``max_lr_decays``), or at the end of
    the record."""
    marked = [epoch for epoch, decays_there in enumerate(decayed, 1) if decays_there]
    return marked[decays] if len(marked) > decays else len(decayed)


def stop_cost(curves: Sequence[Curve], setting: int, stop: Callable[[Curve], int]) -> StopCost:
    """The cost of cutting each of ``curves`` after ``stop(curve)`` epochs."""
    losses, trained = [], 0
    for c in curves:
        epochs = stop(c)
        losses.append(max(c.las) - max(c.las[:epochs]))
        trained += epochs
    return StopCost(
        setting,
        sum(losses) / len(losses),
        max(losses),
        sum(loss > 0.1 for loss in losses),
        trained / sum(len(c.las) for c in curves),
    )


def shorter_patience(curves: Sequence[Curve], patience: int) -> StopCost:
    """The cost of ``patience`` over the runs stopped by patience (see the module docstring)."""
    done = [c for c in curves if c.converged]
    if not done:
        raise ValueError("no run stopped by patience")
    return stop_cost(done, patience, lambda c: stop_epoch(c.las, patience))


def fewer_decays(curves: Sequence[Curve], decays: int) -> StopCost:
    """The cost of ``trainer.max_lr_decays=decays`` over the runs stopped by patience that
    recorded their decays (see the module docstring)."""
    done = [c for c in curves if c.converged and c.records_decays]
    if not done:
        raise ValueError("no run stopped by patience recorded its learning-rate decays")
    return stop_cost(done, decays, lambda c: decay_stop_epoch(c.decayed, decays))


def cost_markdown(costs: Sequence[StopCost], runs: int, setting: str) -> str:
    lines = [
        f"| {setting} | dev LAS lost, mean | worst | runs losing > 0.1 (of {runs}) "
        "| epochs trained |",
        "| ---: | ---: | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {c.setting} | {c.mean_loss:.3f} | {c.worst_loss:.2f} | {c.runs_losing} "
        f"| {100 * c.epoch_share:.1f}% |"
        for c in costs
    ]
    return "\n".join(lines) + "\n"


def plot(curves: Sequence[Curve], path: Path) -> None:
    """One panel per treebank (data key): dev LAS per epoch, a line per run (one colour per
    system, dashed for a model other than the default), a dot at each best epoch."""
    datas = sorted({c.data for c in curves})
    systems = sorted({c.system for c in curves})
    colours = {s: plt.get_cmap("tab10")(i % 10) for i, s in enumerate(systems)}
    columns = min(3, len(datas))
    rows = -(-len(datas) // columns)
    figure, axes = plt.subplots(
        rows, columns, figsize=(6 * columns, 4 * rows), squeeze=False, sharey=False
    )
    for axis, data in zip(axes.flat, datas, strict=False):
        for c in (c for c in curves if c.data == data):
            epochs = range(1, len(c.las) + 1)
            style = "-" if c.model == "default" else "--"
            axis.plot(epochs, c.las, style, color=colours[c.system], linewidth=0.9)
            if c.best_epoch and c.best_epoch <= len(c.las):
                axis.plot(c.best_epoch, c.las[c.best_epoch - 1], "o", color=colours[c.system])
        tops = [max(c.las) for c in curves if c.data == data and c.las]
        if tops:
            axis.set_ylim(min(tops) - 12, max(tops) + 2)  # the approach, not the first epochs
        axis.set_title(data)
        axis.set_xlabel("epoch")
        axis.set_ylabel("dev LAS (CoNLL 2018)")
        axis.grid(linewidth=0.3)
    for axis in list(axes.flat)[len(datas) :]:
        axis.axis("off")
    handles = [plt.Line2D([], [], color=colours[s], label=s) for s in systems]
    if any(c.model != "default" for c in curves):
        handles.append(plt.Line2D([], [], color="gray", linestyle="--", label="gold_tags model"))
    per_row = min(len(handles), 2 + 2 * columns)
    legend_rows = -(-len(handles) // per_row)
    figure.legend(handles=handles, loc="lower center", ncol=per_row, fontsize=8)
    figure.suptitle("Dev LAS per epoch; dots: the best epoch, kept as the checkpoint")
    figure.tight_layout(rect=(0, 0.045 * legend_rows / rows + 0.01, 1, 0.96))
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=Path, default=STUDY_RUNS)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "convergence.png")
    args = parser.parse_args(argv)
    curves = read_curves(args.runs)
    if not curves:
        print(f"error: no */*/seed*/metrics.jsonl under {args.runs}", file=sys.stderr)
        return 1
    print(table_markdown(curves))
    done = [c for c in curves if c.stopped]
    converged = sum(c.converged for c in done)
    print(f"{converged} of {len(done)} finished runs stopped by patience after their best epoch")
    if converged:
        # The patience the runs had: epochs after the best one (the smallest, should they differ).
        had = min(len(c.las) - (c.best_epoch or 0) for c in done if c.converged)
        costs = [shorter_patience(curves, p) for p in range(1, had + 1)]
        print("\nA shorter patience: the same runs cut where it runs out")
        print(cost_markdown(costs, converged, "patience"))
        decaying = [c for c in curves if c.converged and c.records_decays]
        if decaying:
            most = max(sum(c.decayed) for c in decaying)
            costs = [fewer_decays(curves, k) for k in range(1, most + 1)]
            print("\nFewer learning-rate decays: the same runs cut at the plateau after the last")
            print(cost_markdown(costs, len(decaying), "max_lr_decays"))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    plot(curves, args.out)
    print(f"saved {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
