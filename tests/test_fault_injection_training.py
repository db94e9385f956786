"""Kill ``train.py`` at random moments: after SIGTERM or SIGINT no temporary file is left;
``last.pt`` (and ``checkpoint.pt``) always load; training resumed from ``last.pt`` (or started
again when the kill came before the first one) ends with exactly the weights of an
uninterrupted run, and ``metrics.jsonl`` lists each epoch once.  The default variant kills a
few runs, the ``slow`` one more."""

from __future__ import annotations

import json
import signal
from collections.abc import Sequence
from pathlib import Path

import pytest
import torch

from neuralparse.runtime.checkpoint import load_checkpoint
from neuralparse.training.trainer import CHECKPOINT_NAME, LAST_NAME, METRICS_NAME
from tests.killing import SEED, kills, partials, remove_partials, run_killed, run_whole
from tests.parser_fixtures import make_corpus, write_corpus


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
    signals = (signal.SIGKILL, signal.SIGTERM, signal.SIGINT)
    kill_trainings(train_corpus, tmp_path, signals, SEED + 1)
