"""The table of docs/results.md "Both FEATS settings together on the small treebanks": each run
of ``python train.py data=T seed=S trainer.threads=1 trainer.evaluate_test=true
model.feats_head=pairs model.char_out=256`` (``morph_rich/T_rich_sS``) against the default run
and the ``model.char_out=256`` run of the same treebank and seed from the session before
(``../cpu-session61/char_bilstm/``; Hungarian-Szeged's default seeds 1 and 2 are session 60's,
``../cpu-session60/hungarian/``).  The code did not change what training computes between the
two sessions.  After each treebank's seeds, the means; last, the means over every seed.  Test
figures are the trainer's test line (CoNLL 2018 LAS, untagged input: the models read no tags).

    python docs/measurements/cpu-session62/morph_rich.py
"""

import json
from pathlib import Path
from statistics import mean

HERE = Path(__file__).resolve().parent
EARLIER = HERE.parent / "cpu-session61" / "char_bilstm"
TREEBANKS = {
    "el": "Greek-GDT",
    "got": "Gothic-PROIEL",
    "hu": "Hungarian-Szeged",
    "tr": "Turkish-IMST",
}
ARMS = ("base", "char256", "rich")
KEYS = ("las", "upos", "ufeats")


def run_folder(treebank: str, arm: str, seed: int) -> Path:
    if arm == "rich":
        return HERE / "morph_rich" / f"{treebank}_rich_s{seed}"
    if treebank == "hu" and arm == "base" and seed < 3:
        return HERE.parent / "cpu-session60" / "hungarian" / f"hu_base_s{seed}"
    return EARLIER / f"{treebank}_{arm}_s{seed}"


def test_scores(run: Path) -> dict:
    """The run's test line, with its best and last epoch."""
    lines = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    stopped = next(r for r in lines if "stopped" in r)
    test = next(r for r in lines if r.get("split") == "test")
    return {"best": stopped["best_epoch"], "last": stopped["epochs"], **test}


def signed(value: float) -> str:
    return f"{value:+.2f}".replace("-", "−")


def main() -> None:
    print(
        "| treebank | seed | default: LAS, UPOS, UFeats | `char_out=256` | "
        "both: best / last epoch, LAS, UPOS, UFeats | Δ LAS, UPOS, UFeats against the default |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    every: dict[str, list[dict]] = {arm: [] for arm in ARMS}
    results = {}
    for treebank, name in TREEBANKS.items():
        runs: dict[str, list[dict]] = {arm: [] for arm in ARMS}
        for seed in (1, 2, 3):
            if not (run_folder(treebank, "rich", seed) / "metrics.jsonl").exists():
                continue
            scores = {arm: test_scores(run_folder(treebank, arm, seed)) for arm in ARMS}
            for arm in ARMS:
                runs[arm].append(scores[arm])
            rich = scores["rich"]
            print(
                f"| {name} | {seed} | {triple(scores['base'])} | {triple(scores['char256'])} | "
                f"{rich['best']} / {rich['last']}, {triple(rich)} | "
                + ", ".join(signed(rich[k] - scores["base"][k]) for k in KEYS)
                + " |"
            )
        if runs["rich"]:
            print(mean_row(f"{name}, mean of {len(runs['rich'])}", runs))
            results[name] = {
                arm: {k: round(v, 2) for k, v in means(runs[arm]).items()} for arm in ARMS
            }
            for arm in ARMS:
                every[arm] += runs[arm]
    print(mean_row(f"all {len(every['rich'])}, mean", every))
    (HERE / "morph_rich.json").write_text(json.dumps(results, indent=2) + "\n")


def triple(scores: dict) -> str:
    return ", ".join(f"{scores[k]:.2f}" for k in KEYS)


def means(runs: list[dict]) -> dict[str, float]:
    return {k: mean(r[k] for r in runs) for k in KEYS}


def mean_row(label: str, runs: dict[str, list[dict]]) -> str:
    m = {arm: means(runs[arm]) for arm in ARMS}
    cells = [", ".join(f"{m[arm][k]:.2f}" for k in KEYS) for arm in ARMS]
    delta = ", ".join(signed(m["rich"][k] - m["base"][k]) for k in KEYS)
    return f"| **{label}** | | {cells[0]} | {cells[1]} | {cells[2]} | **{delta}** |"


if __name__ == "__main__":
    main()
