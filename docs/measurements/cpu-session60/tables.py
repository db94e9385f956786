"""The two tables of docs/results.md from this folder's runs: "Regularization and tag-loss
weights on Hungarian-Szeged" (``hungarian/``) and "Stronger word dropout on English-EWT"
(``english/``).  Each run of ``python train.py [data=hu_szeged] seed=S trainer.threads=1
trainer.evaluate_test=true OVERRIDE`` is compared with the default run of the same seed and
code: ``hu_base_sS`` and ``en_base_sS``, except English seed 1, which is `make train`'s
reproducible run of 2026-12-06 (``../cpu-session59/make_train_reproducible``).  Test figures
are the trainer's test line (CoNLL 2018 LAS, untagged input: the model reads no tags).

    python docs/measurements/cpu-session60/tables.py hungarian|english
"""

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT = "none (the default)"
HUNGARIAN = {
    DEFAULT: "base",
    "`model.word_dropout=1.0`": "wd1",
    "`model.dropout=0.5`": "do5",
    "tag losses ×2": "tw2",
    "`model.lstm_init=orthogonal`": "orth",
}
ENGLISH = {DEFAULT: "base", "`model.word_dropout=1.0`": "wd1"}


def run_folder(table: str, name: str, seed: int) -> Path:
    if table == "english" and name == "base" and seed == 1:
        return HERE.parent / "cpu-session59" / "make_train_reproducible"
    return HERE / table / f"{table[:2]}_{name}_s{seed}"


def summary(run: Path) -> tuple[dict, dict]:
    """The run's stop line and test line."""
    lines = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    stopped = next(r for r in lines if "stopped" in r)
    test = next(r for r in lines if r.get("split") == "test")
    return stopped, test


def number(value: float, signed: bool = False) -> str:
    return (f"{value:+.2f}" if signed else f"{value:.2f}").replace("-", "−")


def print_table(table: str) -> None:
    variants = HUNGARIAN if table == "hungarian" else ENGLISH
    dev_delta = table == "english"
    print(
        "| override | seed | best / last epoch | stopped by | best dev LAS | test LAS | UPOS "
        "| UFeats" + (" | Δ best dev LAS" if dev_delta else "") + " | Δ test LAS | Δ UPOS |"
    )
    print("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |" + " ---: |" * (2 + dev_delta))
    for label, name in variants.items():
        for seed in (1, 2, 3):
            run = run_folder(table, name, seed)
            if not run.exists():
                continue
            stopped, test = summary(run)
            base_stopped, base_test = summary(run_folder(table, "base", seed))
            cells = [
                label,
                str(seed),
                f"{stopped['best_epoch']} / {stopped['epochs']}",
                stopped["limit"],
                number(stopped["best_las"]),
                *(number(test[key]) for key in ("las", "upos", "ufeats")),
            ]
            if dev_delta:
                cells.append(number(stopped["best_las"] - base_stopped["best_las"], True))
            cells.append(number(test["las"] - base_test["las"], True))
            cells.append(number(test["upos"] - base_test["upos"], True))
            print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    print_table(sys.argv[1] if len(sys.argv) > 1 else "hungarian")
