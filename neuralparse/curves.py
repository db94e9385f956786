"""Training curves: dev LAS and training loss per epoch, drawn from ``metrics.jsonl``.

The trainer rewrites ``curve.svg`` beside ``metrics.jsonl`` after every epoch, so a run can
be watched in a browser while it trains; ``python -m neuralparse.curves RUN... -o OUT.svg``
(``neuralparse curves``) draws one run or several on the same axes, to compare systems,
seeds or settings.  A RUN is a training output folder or its ``metrics.jsonl``.

The upper panel is the dev LAS (the CoNLL 2018 definition, as the trainer logs it) per
epoch, with each run's best epoch marked (the epoch of ``checkpoint.pt``) and a tick under
every epoch after which the learning rate was halved; the lower panel is the mean training
loss, on a logarithmic scale.  The title of a single run says why training stopped.  The
picture is plain SVG written here (no plotting library), and a file is only ever replaced
whole (:func:`~neuralparse.io.sources.write_atomically`).
"""

from __future__ import annotations

import argparse
import html
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from neuralparse.errors import InputError
from neuralparse.io.sources import write_atomically
from neuralparse.runtime.cli import (
    ArgumentParser,
    exit_on_sigterm,
    fail,
    report_error,
    run_program,
)

METRICS_NAME = "metrics.jsonl"
"""The trainer's record of a run: a JSON line per epoch, then a ``"stopped"`` line."""
CURVE_NAME = "curve.svg"
COLOURS = ("#1f5fa8", "#c2410c", "#15803d", "#7e22ce", "#b91c1c", "#0e7490", "#a16207")
"""Line colours of the runs, in order (repeated beyond seven runs)."""
SCALE_SPAN = 20.0
"""Dev LAS points shown below a curve's best one."""
WIDTH, LAS_HEIGHT, LOSS_HEIGHT = 640, 260, 120
LEFT, RIGHT, TOP, GAP, BOTTOM = 56, 16, 60, 34, 40
FONT = "font-family='Helvetica, Arial, sans-serif'"


@dataclass
class RunCurve:
    """One run's history as ``metrics.jsonl`` records it."""

    name: str
    epochs: list[int] = field(default_factory=list)
    las: list[float | None] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    decayed: list[int] = field(default_factory=list)
    """Epochs after which the learning rate was lowered."""
    best_epoch: int | None = None
    best_las: float | None = None
    stopped: str | None = None
    """Why training ended (the ``"stopped"`` line), or None while it runs."""


def read_curve(path: str | Path, name: str | None = None) -> RunCurve:
    """The curve of the run whose ``metrics.jsonl`` is ``path`` (or lies in folder ``path``).

    A last line that is not yet whole (the trainer is writing it) is left out; any other line
    that is not a JSON object raises :class:`InputError` naming the file and line."""
    path = Path(path)
    if path.is_dir():
        path = path / METRICS_NAME
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError(
            "no such file (a training run writes metrics.jsonl)", source=str(path)
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read the metrics: {error}", source=str(path)) from None
    folder = path.resolve().parent
    curve = RunCurve(name if name is not None else f"{folder.parent.name}/{folder.name}")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                break  # being written
            raise InputError("not a JSON line of metrics", source=str(path), line=number) from None
        if not isinstance(record, dict):
            raise InputError("not a JSON object of metrics", source=str(path), line=number)
        if "epoch" in record:
            try:
                epoch, loss = int(record["epoch"]), float(record["loss"])
                las = (record.get("dev") or {}).get("las")
            except (KeyError, TypeError, ValueError, AttributeError):
                raise InputError(
                    "an epoch line needs an epoch number, a loss and dev scores",
                    source=str(path),
                    line=number,
                ) from None
            curve.epochs.append(epoch)
            curve.las.append(las)
            curve.loss.append(loss)
            if record.get("lr_decayed"):
                curve.decayed.append(epoch)
            curve.best_epoch, curve.best_las = record.get("best_epoch"), record.get("best_las")
        elif "stopped" in record:
            curve.stopped = str(record["stopped"])
            curve.best_epoch, curve.best_las = record.get("best_epoch"), record.get("best_las")
    return curve


def _drawable(value: float | None) -> bool:
    """A value with a place on an axis (a diverged run's loss may be infinite or NaN)."""
    return value is not None and math.isfinite(value)


def _step(span: float, most: int, steps: Sequence[float]) -> float:
    """The first of ``steps`` that cuts ``span`` into at most ``most`` intervals."""
    return next((s for s in steps if span / s <= most), steps[-1])


def _ticks(low: float, high: float, step: float) -> list[float]:
    first = math.ceil(low / step - 1e-9) * step
    count = math.floor((high - first) / step + 1e-9) + 1
    return [round(first + k * step, 10) for k in range(max(count, 0))]


def _label(value: float) -> str:
    return f"{value:g}"


def _text(x: float, y: float, text: str, anchor: str = "middle", size: int = 11) -> str:
    return (
        f"<text x='{x:.1f}' y='{y:.1f}' text-anchor='{anchor}' font-size='{size}' {FONT} "
        f"fill='#333'>{html.escape(text)}</text>"
    )


@dataclass(frozen=True)
class _Panel:
    """A plotting area: data ranges mapped onto a pixel rectangle."""

    top: float
    height: float
    first_epoch: int
    last_epoch: int
    low: float
    high: float
    log: bool = False

    def x(self, epoch: float) -> float:
        span = max(self.last_epoch - self.first_epoch, 1)
        return LEFT + (epoch - self.first_epoch) / span * (WIDTH - LEFT - RIGHT)

    def y(self, value: float) -> float:
        def scaled(v: float) -> float:
            return math.log10(v) if self.log else v

        span = scaled(self.high) - scaled(self.low) or 1.0
        return self.top + self.height * (1 - (scaled(value) - scaled(self.low)) / span)


def _axes(panel: _Panel, ticks: Sequence[float], epoch_ticks: Sequence[int]) -> list[str]:
    """Frame, horizontal grid lines with their labels, and epoch ticks."""
    right, bottom = WIDTH - RIGHT, panel.top + panel.height
    parts = [
        f"<rect x='{LEFT}' y='{panel.top:.1f}' width='{right - LEFT}' "
        f"height='{panel.height:.1f}' fill='none' stroke='#999'/>"
    ]
    for value in ticks:
        y = panel.y(value)
        parts.append(f"<line x1='{LEFT}' x2='{right}' y1='{y:.1f}' y2='{y:.1f}' stroke='#e5e5e5'/>")
        parts.append(_text(LEFT - 6, y + 4, _label(value), anchor="end", size=10))
    for epoch in epoch_ticks:
        x = panel.x(epoch)
        parts.append(
            f"<line x1='{x:.1f}' x2='{x:.1f}' y1='{bottom}' y2='{bottom + 4}' stroke='#999'/>"
        )
    return parts


def _stroke(index: int) -> str:
    """The stroke of run ``index``: its colour, dashed from the second round of colours on."""
    dash = " stroke-dasharray='5 3'" if (index // len(COLOURS)) % 2 else ""
    return f"stroke='{COLOURS[index % len(COLOURS)]}'{dash}"


def _legend(names: Sequence[str]) -> list[tuple[float, int]]:
    """Where each run's legend entry goes: ``(x, row)``, rows filled left to right."""
    places, x, row = [], float(LEFT), 0
    for name in names:
        width = 28 + 6 * len(name)
        if x > LEFT and x + width > WIDTH - RIGHT:
            x, row = float(LEFT), row + 1
        places.append((x, row))
        x += width
    return places


def _polyline(points: Sequence[tuple[float, float]], stroke: str, clip: str) -> str:
    """A line through ``points`` (``stroke``: its SVG stroke attributes), drawn only inside
    the panel clipped by ``clip``."""
    coordinates = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    return (
        f"<polyline points='{coordinates}' fill='none' {stroke} stroke-width='1.6' "
        f"clip-path='url(#{clip})'/>"
    )


def _title(curves: Sequence[RunCurve]) -> tuple[str, str]:
    """The picture's title and the line under it."""
    if len(curves) != 1:
        return f"{len(curves)} training runs", "circles: best epochs"
    curve = curves[0]
    best = ""
    if curve.best_epoch and curve.best_las is not None:
        best = f"best dev LAS {curve.best_las:.2f} at epoch {curve.best_epoch} (circle); "
    state = f"stopped: {curve.stopped}" if curve.stopped else "still training"
    return curve.name, best + state


def draw_curves(curves: Sequence[RunCurve]) -> str:
    """An SVG document of the runs' dev LAS and training loss per epoch (see the module)."""
    drawn = [c for c in curves if c.epochs]
    if not drawn:
        raise InputError("no epoch finished yet: nothing to draw")
    first = min(c.epochs[0] for c in drawn)
    last = max(max(c.epochs[-1] for c in drawn), first + 1)
    scores = [v for c in drawn for v in c.las if _drawable(v)]
    # The first epochs climb steeply; the plateau is what a reader compares, so the scale
    # shows the top SCALE_SPAN points and lower values leave the panel.
    low, high = (max(min(scores), max(scores) - SCALE_SPAN), max(scores)) if scores else (0, 100)
    step = _step(max(high - low, 1.0), 6, (0.5, 1, 2, 5, 10, 20, 25))
    low, high = math.floor(low / step) * step, math.ceil(high / step) * step
    high = high if high > low else low + step
    las_panel = _Panel(TOP, LAS_HEIGHT, first, last, low, high)
    losses = [v for c in drawn for v in c.loss if _drawable(v) and v > 0]
    loss_low = min(losses, default=0.1)
    loss_high = max(max(losses, default=1.0), loss_low * 1.01)
    loss_panel = _Panel(TOP + LAS_HEIGHT + GAP, LOSS_HEIGHT, first, last, loss_low, loss_high, True)
    epoch_step = int(_step(last - first, 10, (1, 2, 5, 10, 20, 25, 50, 100, 200, 500)))
    epoch_ticks = [e for e in range(first, last + 1) if e % epoch_step == 0 or e == first]
    decades = range(math.floor(math.log10(loss_low)), math.ceil(math.log10(loss_high)) + 1)
    loss_ticks = [
        v * 10**exponent
        for exponent in decades
        for v in (1, 2, 5)
        if loss_low <= v * 10**exponent <= loss_high
    ] or [loss_low, loss_high]
    legend = _legend([c.name for c in drawn]) if len(drawn) > 1 else []
    rows = 1 + max((row for _, row in legend), default=-1)
    legend_top = TOP + LAS_HEIGHT + GAP + LOSS_HEIGHT + BOTTOM + 8
    height = legend_top - 8 + 18 * rows
    title, subtitle = _title(drawn)
    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{WIDTH}' height='{height}' "
        f"viewBox='0 0 {WIDTH} {height}'>",
        f"<rect width='{WIDTH}' height='{height}' fill='white'/>",
        "<defs>"
        + "".join(
            f"<clipPath id='{name}'><rect x='{LEFT}' y='{panel.top:.1f}' "
            f"width='{WIDTH - LEFT - RIGHT}' height='{panel.height:.1f}'/></clipPath>"
            for name, panel in (("las", las_panel), ("loss", loss_panel))
        )
        + "</defs>",
        _text(LEFT, 18, title, anchor="start", size=13),
        _text(LEFT, 34, subtitle, anchor="start", size=10),
        _text(LEFT, TOP - 6, "dev LAS, CoNLL 2018 (ticks: learning rate lowered)", "start", 10),
        _text(LEFT, loss_panel.top - 6, "training loss (log scale)", anchor="start", size=10),
    ]
    parts += _axes(las_panel, _ticks(low, high, step), epoch_ticks)
    parts += _axes(loss_panel, loss_ticks, epoch_ticks)
    axis_y = loss_panel.top + LOSS_HEIGHT
    parts += [_text(loss_panel.x(e), axis_y + 16, str(e), size=10) for e in epoch_ticks]
    parts.append(_text((LEFT + WIDTH - RIGHT) / 2, axis_y + 32, "epoch", size=11))
    for index, curve in enumerate(drawn):
        colour = COLOURS[index % len(COLOURS)]
        stroke = _stroke(index)
        points = [
            (las_panel.x(e), las_panel.y(v))
            for e, v in zip(curve.epochs, curve.las, strict=True)
            if _drawable(v)
        ]
        parts.append(_polyline(points, stroke, "las"))
        loss_points = [
            (loss_panel.x(e), loss_panel.y(v))
            for e, v in zip(curve.epochs, curve.loss, strict=True)
            if _drawable(v) and v > 0
        ]
        parts.append(_polyline(loss_points, stroke, "loss"))
        for epoch in curve.decayed:
            x, y = las_panel.x(epoch), TOP + LAS_HEIGHT
            parts.append(
                f"<line x1='{x:.1f}' x2='{x:.1f}' y1='{y - 7:.1f}' y2='{y:.1f}' "
                f"stroke='{colour}' stroke-width='1.6'/>"
            )
        if curve.best_epoch in curve.epochs and curve.best_las is not None:
            x, y = las_panel.x(curve.best_epoch), las_panel.y(curve.best_las)
            parts.append(
                f"<circle cx='{x:.1f}' cy='{y:.1f}' r='4' fill='white' stroke='{colour}' "
                "stroke-width='2'><title>best epoch</title></circle>"
            )
    for index, ((x, row), curve) in enumerate(zip(legend, drawn[: len(legend)], strict=True)):
        y = legend_top + 18 * row
        parts.append(
            f"<line x1='{x}' x2='{x + 16}' y1='{y - 4}' y2='{y - 4}' {_stroke(index)} "
            "stroke-width='2'/>"
        )
        parts.append(_text(x + 20, y, curve.name, anchor="start", size=10))
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def write_curve(output_dir: Path) -> None:
    """Redraw ``curve.svg`` of the training run in ``output_dir`` from its metrics."""
    write_atomically(output_dir / CURVE_NAME, draw_curves([read_curve(output_dir)]))


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="python -m neuralparse.curves",
        description="Draw the dev LAS and training loss per epoch of training runs (their "
        "metrics.jsonl) as one SVG.",
    )
    parser.add_argument(
        "runs", nargs="+", metavar="RUN", help="a training output folder or its metrics.jsonl"
    )
    parser.add_argument("-o", "--output", required=True, metavar="OUT.svg", help="SVG to write")
    parser.add_argument(
        "--names", nargs="+", metavar="NAME", help="legend names of the runs (default: folders)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.names is not None and len(args.names) != len(args.runs):
        fail(f"--names gives {len(args.names)} names for {len(args.runs)} runs")
    if not args.output.lower().endswith(".svg"):
        fail(f"{args.output}: the output must end in .svg")
    exit_on_sigterm()  # a killed run unwinds, and no half-written picture is left
    names = args.names or [None] * len(args.runs)
    try:
        curves = [read_curve(run, name) for run, name in zip(args.runs, names, strict=True)]
        write_atomically(Path(args.output), draw_curves(curves))
    except (InputError, OSError) as error:
        return report_error(error)
    return 0


if __name__ == "__main__":
    run_program(main)
