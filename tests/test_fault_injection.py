"""Kill ``predict.py`` and ``train.py`` at random moments and check what they leave behind.

Each run is a real subprocess killed with SIGKILL (no chance to clean up), SIGTERM (what
``kill`` and batch schedulers send) or SIGINT (Ctrl-C) after a random, seeded delay:

- prediction: the output file is either the one that was there before, untouched, or the
  whole new parse, never a part of it; after SIGTERM no temporary file is left;
- training: after SIGTERM or SIGINT no temporary file is left; ``last.pt`` (and
  ``checkpoint.pt``) always load; training resumed from ``last.pt`` (or started again when the
  kill came before the first one) ends with exactly the weights of an uninterrupted run, and
  ``metrics.jsonl`` lists each epoch once.

The default variant kills a few runs (well under a minute on a 2-core machine); the ``slow``
variant kills more.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import torch

from neuralparse.runtime.checkpoint import load_checkpoint
from neuralparse.training.trainer import CHECKPOINT_NAME, LAST_NAME, METRICS_NAME
from tests.parser_fixtures import make_corpus, write_corpus
from tests.test_predict import train_tiny_checkpoint

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "OMP_NUM_THREADS": "1"}
SEED = 20261126
EXIT_STATUS = {
    signal.SIGKILL: {-signal.SIGKILL},
    # Through the handlers; or, when the signal comes after the work is done (the default
    # actions are back then: neuralparse.runtime.cli.run_program), by the signal itself.
    signal.SIGTERM: {143, -signal.SIGTERM},
    signal.SIGINT: {130, -signal.SIGINT},
}
"""How a run killed by each signal may end."""


Ready = Callable[[], bool]
"""Whether a run has come as far as a kill should wait for."""


def exists(pattern: Path) -> Ready:
    """Whether a file matches ``pattern`` (a glob pattern for names in its parent)."""
    return lambda: any(pattern.parent.glob(pattern.name))


def launch(script: str, arguments: Sequence[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, str(REPO / script), *arguments],
        cwd=REPO,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def wait_for(process: subprocess.Popen[bytes], ready: Ready) -> None:
    while process.poll() is None and not ready():
        time.sleep(0.01)


def run_whole(script: str, arguments: Sequence[str], ready: Ready) -> tuple[float, float]:
    """Run the script to its end; returns the seconds until ``ready`` and after."""
    start = time.perf_counter()
    process = launch(script, arguments)
    wait_for(process, ready)
    started = time.perf_counter()
    _, errors = process.communicate(timeout=300)
    assert process.returncode == 0, errors.decode()[-3000:]
    return started - start, time.perf_counter() - started


def run_killed(
    script: str, arguments: Sequence[str], ready: Ready, delay: float, signum: int
) -> int:
    """Start the script, wait until it is ``ready``, then ``delay`` seconds more, send
    ``signum``; returns the exit status (0 when it finished first)."""
    process = launch(script, arguments)
    wait_for(process, ready)
    deadline = time.perf_counter() + delay
    while process.poll() is None and time.perf_counter() < deadline:
        time.sleep(0.005)
    if process.poll() is None:
        process.send_signal(signum)
    _, errors = process.communicate(timeout=300)
    assert process.returncode in {0, *EXIT_STATUS[signum]}, errors.decode()[-3000:]
    if signum != signal.SIGKILL:
        assert b"Traceback" not in errors, errors.decode()[-3000:]
    return process.returncode


def partials(folder: Path) -> list[Path]:
    """The temporary files of outputs and checkpoints being written in ``folder``."""
    return sorted(folder.glob(".*.partial"))


def remove_partials(folder: Path, signum: int) -> None:
    """Check that a run killed with ``signum`` left no temporary file, unless SIGKILL left
    some (nothing can remove them), which are then removed for the next run."""
    if signum != signal.SIGKILL:
        assert partials(folder) == []
    for leftover in partials(folder):
        leftover.unlink()


def kills(count: int, signals: Sequence[int], seed: int) -> list[tuple[int, float, float]]:
    """``count`` (signal, u, v) triples, the signals in turn and ``u``, ``v`` uniform in
    [0, 1), seeded: where each kill comes."""
    rng = random.Random(seed)
    return [(signals[k % len(signals)], rng.random(), rng.random()) for k in range(count)]


# -- prediction ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def predict_setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("fault_predict")
    checkpoint = train_tiny_checkpoint(folder, "arc_standard")
    source = write_corpus(folder / "in.conllu", make_corpus(3000, seed=7, max_words=12))
    reference = folder / "reference.conllu"
    return {"checkpoint": checkpoint, "source": source, "reference": reference, "dir": folder}


def predict_arguments(setup: dict[str, Path], output: Path) -> list[str]:
    return [
        f"checkpoint={setup['checkpoint']}", f"input={setup['source']}", f"output={output}",
        "device=cpu", "progress=false", "threads=1", "chunk_size=200",
    ]  # fmt: skip


def kill_predictions(setup: dict[str, Path], count: int, seed: int) -> None:
    reference = setup["reference"]
    # The output's temporary file exists while parsing and writing: kills aim at that time
    # and a little after it.
    _, span = run_whole(
        "predict.py", predict_arguments(setup, reference), exists(reference.with_name(".*.partial"))
    )
    folder = setup["dir"] / f"kills{seed}"
    folder.mkdir()
    out = folder / "out.conllu"
    writing = exists(folder / ".out.conllu.*.partial")
    before = b"# an older output that must survive whole\n"
    for signum, _, fraction in kills(count, (signal.SIGTERM, signal.SIGKILL), seed):
        out.write_bytes(before)
        status = run_killed("predict.py", predict_arguments(setup, out), writing,
                            1.2 * fraction * span, signum)  # fmt: skip
        assert out.read_bytes() in (before, reference.read_bytes())
        assert status not in (0, -signal.SIGTERM) or out.read_bytes() == reference.read_bytes()
        remove_partials(folder, signum)


def test_killed_prediction_leaves_the_old_output_or_the_whole_new_one(
    predict_setup: dict[str, Path],
) -> None:
    kill_predictions(predict_setup, count=4, seed=SEED)


@pytest.mark.slow
def test_killed_prediction_many_times(predict_setup: dict[str, Path]) -> None:
    kill_predictions(predict_setup, count=16, seed=SEED + 1)


# -- training ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def train_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fault_train")
    return write_corpus(folder / "train.conllu", make_corpus(200, seed=11, max_words=14))


EPOCHS = 3


def train_arguments(corpus: Path, run: Path, resume: Path | None = None) -> list[str]:
    arguments = [
        "data=custom", f"data.train={corpus}", f"data.dev={corpus}", "trainer=quick",
        "model=small", f"trainer.max_epochs={EPOCHS}", "trainer.patience=10",
        "trainer.batch_tokens=300", "trainer.evaluate_test=false", f"hydra.run.dir={run}",
    ]  # fmt: skip
    return [*arguments, f"trainer.resume={resume}"] if resume is not None else arguments


def metrics_lines(run: Path) -> int:
    metrics = run / METRICS_NAME
    return len(metrics.read_text().splitlines()) if metrics.exists() else 0


def epochs(run: Path) -> list[int]:
    records = [json.loads(line) for line in (run / METRICS_NAME).read_text().splitlines()]
    return [r["epoch"] for r in records if "epoch" in r]


def kill_trainings(corpus: Path, folder: Path, signals: Sequence[int], seed: int) -> None:
    reference = folder / "reference"
    # Kills wait for a random number of epochs (0: for the run to start), then for up to an
    # epoch's time more: they come while preparing, training, evaluating, saving and after.
    _, rest = run_whole(
        "train.py", train_arguments(corpus, reference), lambda: metrics_lines(reference) > 0
    )
    epoch_seconds = rest / EPOCHS
    expected = load_checkpoint(reference / LAST_NAME)["state_dict"]
    for k, (signum, u, v) in enumerate(kills(len(signals), signals, seed)):
        run = folder / f"run{k}"
        after = int(u * EPOCHS)

        def ready(run: Path = run, after: int = after) -> bool:
            return (run / "config.yaml").exists() and metrics_lines(run) >= after

        run_killed("train.py", train_arguments(corpus, run), ready, v * 1.2 * epoch_seconds,
                   signum)  # fmt: skip
        remove_partials(run, signum)
        for name in (LAST_NAME, CHECKPOINT_NAME):
            if (run / name).exists():
                load_checkpoint(run / name)  # whole, whatever the moment of the kill
        last = run / LAST_NAME
        run_whole("train.py", train_arguments(corpus, run, last if last.exists() else None),
                  lambda: False)  # fmt: skip
        resumed = load_checkpoint(last)["state_dict"]
        assert all(torch.equal(resumed[key], value) for key, value in expected.items())
        assert epochs(run) == list(range(1, EPOCHS + 1))
        assert partials(run) == []


def test_killed_training_resumes_to_the_same_weights(train_corpus: Path, tmp_path: Path) -> None:
    kill_trainings(train_corpus, tmp_path, (signal.SIGKILL, signal.SIGTERM), SEED)


@pytest.mark.slow
def test_killed_training_many_times(train_corpus: Path, tmp_path: Path) -> None:
    signals = (signal.SIGKILL, signal.SIGTERM, signal.SIGINT) * 3
    kill_trainings(train_corpus, tmp_path, signals, SEED + 1)
