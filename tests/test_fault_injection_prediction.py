"""Kill ``predict.py`` at random moments: the output file is either the one that was there
before, untouched, or the whole new parse, never a part of it; after SIGTERM no temporary file
is left.  The default variant kills a few runs, the ``slow`` one more."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.killing import SEED, exists, kills, remove_partials, run_killed, run_whole
from tests.parser_fixtures import make_corpus, write_corpus
from tests.test_predict import train_tiny_checkpoint


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
    kill_predictions(predict_setup, count=8, seed=SEED + 1)
