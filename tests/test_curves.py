"""Training curves (neuralparse.curves): reading metrics.jsonl, the SVG and the command (the
trainer's own curve.svg is checked in tests/test_training.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from neuralparse.curves import LEFT, METRICS_NAME, RIGHT, TOP, WIDTH, draw_curves, main, read_curve
from neuralparse.errors import InputError

SVG = "{http://www.w3.org/2000/svg}"
STOPPED = "patience: no better dev LAS for 1 epochs"


def epoch_line(epoch: int, las: float | None, loss: float, *, best: int, decayed: bool = False):
    best_las = 80.0 if best == epoch else 70.0
    return json.dumps(
        {
            "epoch": epoch,
            "loss": loss,
            "dev": {"las": las, "uas": None},
            "best_epoch": best,
            "best_las": best_las,
            "lr": 0.004,
            "lr_decayed": decayed,
        }
    )


def write_run(folder: Path, lines: list[str]) -> Path:
    folder.mkdir(parents=True)
    (folder / METRICS_NAME).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@pytest.fixture
def run(tmp_path: Path) -> Path:
    lines = [
        epoch_line(1, 60.0, 2.0, best=1),
        epoch_line(2, 80.0, 1.0, best=2),
        epoch_line(3, 75.0, 0.5, best=2, decayed=True),
        json.dumps({"stopped": STOPPED, "best_epoch": 2, "best_las": 80.0, "epochs": 3}),
        json.dumps({"split": "test", "las": 79.0}),
    ]
    return write_run(tmp_path / "arc_eager" / "seed1", lines)


def test_read_curve_takes_epochs_decays_best_epoch_and_stop(run: Path) -> None:
    curve = read_curve(run)
    assert curve.name == "arc_eager/seed1"
    assert curve.epochs == [1, 2, 3]
    assert curve.las == [60.0, 80.0, 75.0]
    assert curve.loss == [2.0, 1.0, 0.5]
    assert curve.decayed == [3]
    assert (curve.best_epoch, curve.best_las) == (2, 80.0)
    assert curve.stopped == "patience: no better dev LAS for 1 epochs"
    assert read_curve(run / METRICS_NAME, "mine").name == "mine"


def test_a_line_being_written_is_left_out_and_a_broken_one_is_named(tmp_path: Path) -> None:
    whole = [epoch_line(1, 60.0, 2.0, best=1), epoch_line(2, 61.0, 1.5, best=2)]
    growing = write_run(tmp_path / "growing", [*whole, '{"epoch": 3, "lo'])
    curve = read_curve(growing)
    assert curve.epochs == [1, 2] and curve.stopped is None
    broken = write_run(tmp_path / "broken", [whole[0], "not json", whole[1]])
    with pytest.raises(InputError, match=r"metrics.jsonl, line 2: not a JSON line"):
        read_curve(broken)
    odd = write_run(tmp_path / "odd", [whole[0], '{"epoch": 2, "dev": {}}', whole[1]])
    with pytest.raises(InputError, match=r"line 2: an epoch line needs"):
        read_curve(odd)
    with pytest.raises(InputError, match="no such file"):
        read_curve(tmp_path / "nowhere")


def polylines(svg: str) -> list[list[tuple[float, float]]]:
    root = ET.fromstring(svg)
    return [
        [tuple(map(float, point.split(","))) for point in line.get("points").split()]
        for line in root.iter(f"{SVG}polyline")
    ]


def test_the_svg_puts_each_epoch_where_its_scores_are(run: Path) -> None:
    svg = draw_curves([read_curve(run)])
    root = ET.fromstring(svg)  # well-formed XML
    las, loss = polylines(svg)
    assert len(las) == len(loss) == 3
    # Epochs spread over the plotting width, first to last.
    assert [x for x, _ in las] == pytest.approx([LEFT, (LEFT + WIDTH - RIGHT) / 2, WIDTH - RIGHT])
    # 80 is the highest score and a multiple of the scale's step: the top of the panel; the
    # scale shows 20 points below it, so 60 is the bottom and 75 a quarter of the way down.
    top, height = TOP, float(root.find(f".//{SVG}clipPath[@id='las']/{SVG}rect").get("height"))
    assert [y for _, y in las] == pytest.approx([top + height, top, top + height / 4])
    # Loss falls, on a logarithmic scale: equal ratios, equal steps.
    ys = [y for _, y in loss]
    assert ys[0] < ys[1] < ys[2] and ys[1] - ys[0] == pytest.approx(ys[2] - ys[1])
    (best,) = root.iter(f"{SVG}circle")
    assert (float(best.get("cx")), float(best.get("cy"))) == pytest.approx(las[1])
    texts = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert "best dev LAS 80.00 at epoch 2" in texts
    assert "stopped: patience: no better dev LAS for 1 epochs" in texts


def test_a_diverged_run_is_drawn_where_its_values_are_finite(tmp_path: Path) -> None:
    lines = [epoch_line(1, 60.0, 2.0, best=1), epoch_line(2, 61.0, 1.0, best=2)]
    lines.append(json.dumps({"epoch": 3, "loss": float("inf"), "dev": {"las": float("nan")}}))
    las, loss = polylines(draw_curves([read_curve(write_run(tmp_path / "run", lines))]))
    assert len(las) == len(loss) == 2


def test_several_runs_share_the_axes_with_a_legend(run: Path, tmp_path: Path) -> None:
    other = write_run(
        tmp_path / "swap" / "seed1",
        [epoch_line(e, 50.0 + e, 1.0 / e, best=e) for e in range(1, 6)],
    )
    svg = draw_curves([read_curve(run), read_curve(other)])
    lines = polylines(svg)
    assert [len(points) for points in lines] == [3, 3, 5, 5]
    # One epoch axis: epoch 3 of both runs at the same x.
    assert lines[0][2][0] == pytest.approx(lines[2][2][0])
    texts = [t.text for t in ET.fromstring(svg).iter(f"{SVG}text")]
    assert "arc_eager/seed1" in texts and "swap/seed1" in texts
    with pytest.raises(InputError, match="no epoch finished yet"):
        draw_curves([read_curve(write_run(tmp_path / "empty", []))])


def test_many_runs_get_a_legend_in_rows_and_dashes_once_colours_repeat(tmp_path: Path) -> None:
    names = [f"system_number_{k}/seed1" for k in range(9)]
    runs = [
        read_curve(write_run(tmp_path / f"r{k}", [epoch_line(1, 60.0, 1.0, best=1)]), name)
        for k, name in enumerate(names)
    ]
    root = ET.fromstring(draw_curves(runs))
    texts = {t.text: float(t.get("y")) for t in root.iter(f"{SVG}text")}
    rows = {texts[name] for name in names}
    assert len(rows) > 1 and float(root.get("height")) > max(rows)  # wrapped, inside the picture
    lines = list(root.iter(f"{SVG}polyline"))
    dashed = [line.get("stroke-dasharray") is not None for line in lines[::2]]
    assert dashed == [False] * 7 + [True] * 2


def test_the_command_writes_the_svg_and_reports_errors_in_one_line(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "curves.svg"
    assert main([str(run), "-o", str(out), "--names", "arc-eager"]) == 0
    assert "arc-eager" in out.read_text(encoding="utf-8")
    assert main([str(tmp_path / "nowhere"), "-o", str(out)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("error: ") and "no such file" in error and "\n" not in error
    for argv in ([str(run), "-o", str(tmp_path / "c.png")], [str(run), "-o", str(out), "--names"]):
        with pytest.raises(SystemExit) as stopped:
            main(argv)
        assert stopped.value.code == 2


def test_the_command_starts_without_torch() -> None:
    code = "import sys, neuralparse.curves; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
