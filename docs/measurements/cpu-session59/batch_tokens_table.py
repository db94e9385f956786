"""The table of docs/results.md, "Smaller batches on the small treebanks": each run of
``python train.py data=T seed=S trainer.batch_tokens=B trainer.threads=1`` in this folder
against the study's run of the same treebank and seed with the default 1,000 words
(experiments/study_runs_arc_scorer/T/arc_eager/seedS).  Test figures: the trainer's test line
for the new runs, the study's greedy scoring for its own (both CoNLL 2018 LAS, untagged
input: the model reads no tags).

    python docs/measurements/cpu-session59/batch_tokens_table.py
"""

import json
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
STUDY = HERE.parents[2] / "experiments" / "study_runs_arc_scorer"


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


print(
    "| treebank | seed | words per batch | best / last epoch | best dev LAS | test LAS | UPOS "
    "| UFeats | study (1,000 words): best / last, dev, test LAS, UPOS, UFeats | Δ test LAS |"
)
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |")
for run in sorted((HERE / "batch_tokens").iterdir()):
    treebank, words, seed = re.fullmatch(r"(\w+?)_bt(\d+)_s(\d)", run.name).groups()
    lines = records(run / "metrics.jsonl")
    stopped = next(r for r in lines if "stopped" in r)
    test = next(r for r in lines if r.get("split") == "test")
    study = json.loads((STUDY / treebank / "arc_eager" / f"seed{seed}" / "scores.json").read_text())
    base = study["modes"]["greedy"]["scores"]
    print(
        f"| {treebank} | {seed} | {words} | {stopped['best_epoch']} / {stopped['epochs']} "
        f"| {stopped['best_las']:.2f} | {test['las']:.2f} | {test['upos']:.2f} "
        f"| {test['ufeats']:.2f} | {study['best_epoch']} / {study['epochs']}, "
        f"{study['best_dev_las']:.2f}, {base['las']:.2f}, {base['upos']:.2f}, {base['ufeats']:.2f} "
        f"| {test['las'] - base['las']:+.2f} |"
    )
