"""The FEATS head with pairs (`model.feats_head=pairs`) against the default one-vector-per-
string head, from the trainer's metrics.jsonl of each run (best dev epoch and the trainer's
test line: untagged input for these models, which read no tags; CoNLL 2018 LAS).

    python docs/measurements/cpu-session38/feats_pairs_table.py

Runs: ``<variant>_<treebank>_s<seed>/metrics.jsonl`` beside this script, and seed 1 of the
default head from session 37 (``../cpu-session37/<treebank>_s1_default``, the same default
model and command).  Prints a Markdown table and writes ``feats_pairs.json``."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

HERE = Path(__file__).parent
TREEBANKS = ("el_gdt", "got_proiel", "hu_szeged", "tr_imst")
VARIANTS = ("classes", "pairs")
SEEDS = (1, 2)
KEYS = ("las", "upos", "ufeats", "alltags")


def run_folder(variant: str, treebank: str, seed: int) -> Path:
    if variant == "classes" and seed == 1:
        return HERE.parent / "cpu-session37" / f"{treebank}_s1_default"
    return HERE / f"{'base' if variant == 'classes' else variant}_{treebank}_s{seed}"


def summary(folder: Path) -> dict | None:
    path = folder / "metrics.jsonl"
    if not path.is_file():
        return None
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    epochs = [r for r in rows if "epoch" in r and r.get("dev")]
    tests = [r for r in rows if r.get("split") == "test"]
    if not tests:
        return None
    best = max(epochs, key=lambda r: (r["dev"]["las"], -r["epoch"]))
    return {
        "best_epoch": best["epoch"],
        "last_epoch": epochs[-1]["epoch"],
        "dev": {k: best["dev"].get(k) for k in KEYS},
        "test": {k: tests[-1].get(k) for k in KEYS},
    }


def cell(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def main() -> None:
    runs = {
        f"{v}/{t}/seed{s}": summary(run_folder(v, t, s))
        for t in TREEBANKS
        for s in SEEDS
        for v in VARIANTS
    }
    heading = "| treebank | seed | head | best / last epoch | dev LAS | test LAS | UPOS | UFeats |"
    print(heading + " AllTags |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for key, r in runs.items():
        if r is None:
            continue
        variant, treebank, seed = key.split("/")
        t = r["test"]
        print(
            f"| {treebank} | {seed[4:]} | {variant} | {r['best_epoch']} / {r['last_epoch']} "
            f"| {cell(r['dev']['las'])} | {cell(t['las'])} | {cell(t['upos'])} "
            f"| {cell(t['ufeats'])} | {cell(t['alltags'])} |"
        )
    differences: dict[str, list[float]] = {k: [] for k in KEYS}
    for t in TREEBANKS:
        for s in SEEDS:
            a, b = runs[f"classes/{t}/seed{s}"], runs[f"pairs/{t}/seed{s}"]
            if a and b:
                for k in KEYS:
                    if a["test"][k] is not None and b["test"][k] is not None:
                        differences[k].append(b["test"][k] - a["test"][k])
    print("\npairs − classes, test, over the paired runs:")
    for k, values in differences.items():
        if values:
            print(
                f"  {k}: mean {statistics.mean(values):+.2f}, min {min(values):+.2f}, "
                f"max {max(values):+.2f} ({len(values)} pairs)"
            )
    (HERE / "feats_pairs.json").write_text(
        json.dumps({"runs": runs, "pairs_minus_classes": differences}, indent=1) + "\n"
    )


if __name__ == "__main__":
    main()
