"""The table of docs/results.md "A larger character BiLSTM on the small treebanks": each run of
``python train.py data=T seed=S trainer.threads=1 trainer.evaluate_test=true
model.char_out=256`` against the default run of the same treebank, seed and code
(``T_base_sS``; Hungarian-Szeged's seeds 1 and 2 are session 60's,
``../cpu-session60/hungarian/``).  After each treebank's seeds, the mean of their differences;
last, the mean over every pair.  Test
figures are the trainer's test line (CoNLL 2018 LAS, untagged input: the model reads no tags).

    python docs/measurements/cpu-session61/char_bilstm.py
"""

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
TREEBANKS = {
    "el": "Greek-GDT",
    "got": "Gothic-PROIEL",
    "hu": "Hungarian-Szeged",
    "tr": "Turkish-IMST",
}


def run_folder(treebank: str, name: str, seed: int) -> Path:
    if treebank == "hu" and name == "base" and seed < 3:
        return HERE.parent / "cpu-session60" / "hungarian" / f"hu_base_s{seed}"
    return HERE / "char_bilstm" / f"{treebank}_{name}_s{seed}"


def summary(run: Path) -> tuple[dict, dict]:
    """The run's stop line and test line."""
    lines = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    stopped = next(r for r in lines if "stopped" in r)
    test = next(r for r in lines if r.get("split") == "test")
    return stopped, test


def signed(value: float) -> str:
    return f"{value:+.2f}".replace("-", "−")


def main() -> None:
    print(
        "| treebank | seed | default: best / last epoch, test LAS, UPOS, UFeats "
        "| `char_out=256`: best / last epoch, test LAS, UPOS, UFeats "
        "| Δ test LAS | Δ UPOS | Δ UFeats |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    every: list[list[float]] = []
    for treebank, name in TREEBANKS.items():
        deltas = []
        for seed in (1, 2, 3):
            if not run_folder(treebank, "char256", seed).exists():
                continue
            cells = [name, str(seed)]
            runs = [summary(run_folder(treebank, arm, seed)) for arm in ("base", "char256")]
            for stopped, test in runs:
                cells.append(
                    f"{stopped['best_epoch']} / {stopped['epochs']}, {test['las']:.2f}, "
                    f"{test['upos']:.2f}, {test['ufeats']:.2f}"
                )
            (_, base), (_, larger) = runs
            deltas.append([larger[key] - base[key] for key in ("las", "upos", "ufeats")])
            cells += [signed(delta) for delta in deltas[-1]]
            print("| " + " | ".join(cells) + " |")
        if deltas:
            print(mean_row(f"{name}, mean", deltas))
            every += deltas
    print(mean_row(f"all {len(every)} pairs, mean", every))


def mean_row(label: str, deltas: list[list[float]]) -> str:
    means = [sum(column) / len(column) for column in zip(*deltas, strict=True)]
    return f"| **{label}** | | | | " + " | ".join(f"**{signed(m)}**" for m in means) + " |"


if __name__ == "__main__":
    main()
