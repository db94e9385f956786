"""The gold-tag model with the wider character BiLSTM, for docs/results.md "A larger FEATS and
character model on the small treebanks": ``python train.py data=T seed=S model=gold_tags
trainer.threads=1 trainer.evaluate_test=true [model.char_out=256]``, one line a pair of runs
(``gold_tags/T_gold_sS`` and ``gold_tags/T_goldchar256_sS``).  Test LAS is the trainer's test
line: CoNLL 2018, the test file as distributed (gold UPOS/XPOS/FEATS, which these models read).

    python docs/measurements/cpu-session62/gold_char.py
"""

from pathlib import Path

from morph_rich import signed, test_scores  # the script beside this one

HERE = Path(__file__).resolve().parent / "gold_tags"
NAMES = {"got": "Gothic-PROIEL", "hu": "Hungarian-Szeged", "tr": "Turkish-IMST"}


def summary(run: Path) -> tuple[str, float]:
    """The run's table cell (best / last epoch, test LAS) and its test LAS."""
    scores = test_scores(run)
    return f"{scores['best']} / {scores['last']}, {scores['las']:.2f}", scores["las"]


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
        delta = signed(other_las - base_las)
        print(f"| {NAMES[treebank]} | {seed[1:]} | {base} | {other} | {delta} |")


if __name__ == "__main__":
    main()
