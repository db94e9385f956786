"""The gold-tag model with the wider character BiLSTM, for docs/results.md "A larger FEATS and
character model on the small treebanks": ``python train.py data=T seed=S model=gold_tags
trainer.threads=1 trainer.evaluate_test=true [model.char_out=256]``, one line a pair of runs
(``gold_tags/T_gold_sS`` and ``gold_tags/T_goldchar256_sS``).  Test LAS is the trainer's test
line: CoNLL 2018, the test file as distributed (gold UPOS/XPOS/FEATS, which these models read).

    python docs/measurements/cpu-session62/gold_char.py
"""

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent / "gold_tags"
NAMES = {"got": "Gothic-PROIEL", "hu": "Hungarian-Szeged", "tr": "Turkish-IMST"}


def summary(run: Path) -> str:
    lines = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    stopped = next(r for r in lines if "stopped" in r)
    test = next(r for r in lines if r.get("split") == "test")
    return f"{stopped['best_epoch']} / {stopped['epochs']}, {test['las']:.2f}", test["las"]


def main() -> None:
    print(
        "| treebank | seed | default `char_out`: best / last epoch, test LAS | `char_out=256` | Δ |"
    )
    print("| --- | ---: | ---: | ---: | ---: |")
    for run in sorted(HERE.glob("*_gold_s*")):
        treebank, _, seed = run.name.split("_")
        wider = HERE / f"{treebank}_goldchar256_{seed}"
        if not (wider / "metrics.jsonl").exists():
            continue
        (base, base_las), (other, other_las) = summary(run), summary(wider)
        delta = f"{other_las - base_las:+.2f}".replace("-", "−")
        print(f"| {NAMES[treebank]} | {seed[1:]} | {base} | {other} | {delta} |")


if __name__ == "__main__":
    main()
