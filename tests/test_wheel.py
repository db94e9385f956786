"""The installed tool: a wheel built from the checkout works outside it.

``pip wheel`` builds the package as users get it; it is installed into a folder of its own
and run from another folder, so that nothing of the checkout (its ``conf/``, ``train.py``,
``predict.py`` or the editable install) can stand in for what the wheel must carry: the
Hydra configuration as package data and the ``neuralparse`` console script.  Then the
script trains a small parser, parses, evaluates and draws, as the README's commands do.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.parser_fixtures import make_corpus, write_corpus

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """``(neuralparse script, environment)`` of the wheel installed into its own folder."""
    root = tmp_path_factory.mktemp("wheel")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(root / "dist"), str(REPO)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr[-3000:]
    (wheel,) = (root / "dist").glob("neuralparse-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(n for n in names if n.endswith("entry_points.txt"))
        assert "neuralparse = neuralparse.commands:entry_point" in archive.read(
            entry_points
        ).decode("utf-8")
    for config in ("config.yaml", "predict.yaml", "model/default.yaml", "system/swap.yaml"):
        assert f"neuralparse/conf/{config}" in names
    assert not any(n.startswith(("tests/", "benchmarks/", "experiments/")) for n in names)
    site = root / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q",
         "--target", str(site), str(wheel)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr[-3000:]
    environment = {**os.environ, "PYTHONPATH": str(site)}
    return site / "bin" / "neuralparse", environment


def run(command: list[str], cwd: Path, environment: dict[str, str]) -> str:
    done = subprocess.run(
        command, cwd=cwd, env=environment, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return done.stdout + done.stderr


def test_the_wheel_trains_predicts_evaluates_and_draws_outside_the_checkout(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    script, environment = installed
    work = tmp_path / "elsewhere"
    work.mkdir()
    where = run(
        [sys.executable, "-c", "import neuralparse; print(neuralparse.__file__)"], work, environment
    )
    assert str(script.parents[1]) in where  # the installed copy, not the checkout
    corpus = write_corpus(work / "tiny.conllu", make_corpus(15, seed=9))
    run(
        [str(script), "train", "data=custom", f"data.train={corpus}", f"data.dev={corpus}",
         f"data.test={corpus}", "trainer=quick", "model=small", "hydra.run.dir=run"],
        work, environment,
    )  # fmt: skip
    checkpoint = work / "run" / "checkpoint.pt"
    assert checkpoint.is_file()
    run(
        [str(script), "predict", f"checkpoint={checkpoint}", f"input={corpus}",
         "output=parsed.conllu", "device=cpu", "progress=false"],
        work, environment,
    )  # fmt: skip
    evaluate = [str(script), "evaluate", str(corpus), "parsed.conllu", "--json"]
    scores = run(evaluate, work, environment)
    assert '"las"' in scores
    run([str(script), "show", "parsed.conllu", "-o", "trees.html"], work, environment)
    assert "<svg" in (work / "trees.html").read_text(encoding="utf-8")
    assert "usage: neuralparse COMMAND" in run([str(script), "--help"], work, environment)
