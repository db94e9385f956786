"""The table of docs/results.md, "Stronger word dropout on English-EWT": each run of
``python train.py seed=S trainer.threads=1 trainer.evaluate_test=true OVERRIDE`` in
``english/`` against the default run of the same seed and code (seed 1: `make train`'s
reproducible run of 2026-12-06, ``../cpu-session59/make_train_reproducible``; seeds 2
and 3: ``english/en_base_sS``).  Test figures are the trainer's test line (CoNLL 2018 LAS, untagged
input: the model reads no tags).

    python docs/measurements/cpu-session60/english_table.py
"""

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNS = {
    ("none (the default)", 1): HERE.parent / "cpu-session59" / "make_train_reproducible",
    ("none (the default)", 2): HERE / "english" / "en_base_s2",
    ("none (the default)", 3): HERE / "english" / "en_base_s3",
    ("`model.word_dropout=1.0`", 1): HERE / "english" / "en_wd1_s1",
    ("`model.word_dropout=1.0`", 2): HERE / "english" / "en_wd1_s2",
}


def summary(run: Path) -> dict:
    lines = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    epochs = [r for r in lines if "dev" in r and "epoch" in r]
    best = max(epochs, key=lambda r: r["dev"]["las"])
    stopped = next(r for r in lines if "stopped" in r)
    test = next(r for r in lines if r.get("split") == "test")
    return {"best": best, "last": epochs[-1], "stopped": stopped, "test": test}


def number(value: float, signed: bool = False) -> str:
    return (f"{value:+.2f}" if signed else f"{value:.2f}").replace("-", "−")


print(
    "| override | seed | best / last epoch | stopped by | best dev LAS | test LAS | UPOS | UFeats "
    "| Δ best dev LAS | Δ test LAS | Δ UPOS |"
)
print("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for (label, seed), run in RUNS.items():
    if not (run / "metrics.jsonl").exists():
        continue
    row = summary(run)
    base = summary(RUNS["none (the default)", seed])
    stopped, test = row["stopped"], row["test"]
    dev_delta = row["best"]["dev"]["las"] - base["best"]["dev"]["las"]
    cells = [
        label,
        str(seed),
        f"{row['best']['epoch']} / {row['last']['epoch']}",
        stopped["limit"],
        number(row["best"]["dev"]["las"]),
        *(number(test[k]) for k in ("las", "upos", "ufeats")),
        number(dev_delta, True),
        number(test["las"] - base["test"]["las"], True),
        number(test["upos"] - base["test"]["upos"], True),
    ]
    print("| " + " | ".join(cells) + " |")
