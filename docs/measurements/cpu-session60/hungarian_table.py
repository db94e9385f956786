"""The table of docs/results.md, "Regularization and tag-loss weights on Hungarian-Szeged":
each run of ``python train.py data=hu_szeged seed=S trainer.threads=1
trainer.evaluate_test=true OVERRIDE`` in ``hungarian/`` against the run of the same seed with
no override (``hungarian/hu_base_sS``), both with the code of 2026-12-06.  Test figures are
the trainer's test line (CoNLL 2018 LAS, untagged input: the model reads no tags).

    python docs/measurements/cpu-session60/hungarian_table.py
"""

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent / "hungarian"
VARIANTS = {
    "base": "none (the default)",
    "wd1": "`model.word_dropout=1.0`",
    "do5": "`model.dropout=0.5`",
    "tw2": "tag losses ×2",
    "orth": "`model.lstm_init=orthogonal`",
}


def summary(run: Path) -> dict:
    lines = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    stopped = next(r for r in lines if "stopped" in r)
    test = next(r for r in lines if r.get("split") == "test")
    return {"stopped": stopped, "test": test}


print(
    "| override | seed | best / last epoch | stopped by | best dev LAS | test LAS | UPOS | UFeats "
    "| Δ test LAS | Δ UPOS |"
)
print("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for variant, label in VARIANTS.items():
    for seed in (1, 2):
        run = HERE / f"hu_{variant}_s{seed}"
        if not run.exists():
            continue
        row, base = summary(run), summary(HERE / f"hu_base_s{seed}")
        stopped, test = row["stopped"], row["test"]
        print(
            f"| {label} | {seed} | {stopped['best_epoch']} / {stopped['epochs']} "
            f"| {stopped['limit']} | {stopped['best_las']:.2f} | {test['las']:.2f} "
            f"| {test['upos']:.2f} | {test['ufeats']:.2f} "
            f"| {test['las'] - base['test']['las']:+.2f} "
            f"| {test['upos'] - base['test']['upos']:+.2f} |"
        )
