"""The table of `make train` runs in docs/results.md ("`make train`, run by run"): each run's
epochs, why it stopped, training time and scores, read from the metrics.jsonl kept beside it.

    python docs/measurements/make_train_runs.py

Every run is `make train ARGS="trainer.threads=2 ..."` (English-EWT, the default model of its
day) on the 2-core CPU machine with nothing else running.  Minutes are the last epoch's
``elapsed_seconds``: from reading the data to the end of the last dev evaluation (not Python's
start-up nor the test scoring, a few seconds together).  Test scores are the trainer's test
line: CoNLL 2018 LAS on English-EWT test, the model's own tags (the default reads none, so
untagged input gives the same).
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNS = (
    ("2026-12-05", "cpu-session58/make_train", "the default model of that day"),
    ("2026-12-05", "cpu-session58/make_train_flush", "denormal floats flushed to zero"),
    ("2026-12-06", "cpu-session59/make_train", "with `trainer.max_lr_decays` 5"),
    ("2026-12-06", "cpu-session59/make_train_reproducible", "two-thread runs repeat exactly"),
    ("2026-12-06", "cpu-session61/make_train", "the same code, a clean clone"),
)


def row(day: str, folder: str, change: str) -> str:
    lines = [json.loads(line) for line in (HERE / folder / "metrics.jsonl").open()]
    epochs = [line for line in lines if "epoch" in line and "dev" in line]
    stopped = next(line for line in lines if "stopped" in line)
    test = next(line for line in lines if line.get("split") == "test")
    minutes = epochs[-1]["elapsed_seconds"] / 60
    cells = [
        day,
        f"[{folder}](measurements/{folder}/)",
        change,
        f"{stopped['best_epoch']} / {stopped['epochs']}",
        stopped["limit"],
        f"{minutes:.1f}",
        f"{stopped['best_las']:.2f}",
        f"{test['las']:.2f}",
        f"{test['upos']:.2f}",
    ]
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    print(
        "| day | run | what changed | best / last epoch | stopped by | minutes "
        "| best dev LAS | test LAS | UPOS |"
    )
    print("| --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: |")
    for run in RUNS:
        print(row(*run))


if __name__ == "__main__":
    main()
