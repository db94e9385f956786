"""The gap between the default joint model on untagged input and a gold-tag model trained the
same way (``model=gold_tags``: the same encoder, auxiliary arc scorer and arc term in
decoding; gold UPOS/XPOS/FEATS embedded in place of the tagging heads), on the test files of
English-EWT and the four small shared treebanks.  LAS is the CoNLL 2018 one (head and
universal part of DEPREL).

    python docs/measurements/cpu-session39/gold_gap_table.py

Runs (the trainer's metrics.jsonl; its test line is the test file as distributed, which for
the default model equals untagged input since it reads no tags):

* default model, seeds 1 and 2: ``../cpu-session37/<treebank>_s1_default`` and
  ``../cpu-session38/base_<treebank>_s2`` (``python train.py data=T seed=S trainer.threads=1``);
  English-EWT: the one ``make train`` run of ``../cpu-session37/make_train``;
* gold-tag model, seed 1: ``goldarc_<treebank>_s1`` here (Greek-GDT:
  ``../cpu-session38/goldarc_el_gdt_s1``), ``python train.py data=T seed=1 model=gold_tags
  trainer.threads=1`` with the arc scorer settings that are now the preset's;
* the gold-tag model given untagged input (``gold_untagged.json``, written by
  ``--untagged`` from the checkpoints, which are not in the repository).

Prints a Markdown table and writes ``gold_gap.json``."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).parent
TREEBANKS = ("en_ewt", "el_gdt", "got_proiel", "hu_szeged", "tr_imst")


def default_runs(treebank: str) -> list[Path]:
    if treebank == "en_ewt":
        return [HERE.parent / "cpu-session37" / "make_train"]
    return [
        HERE.parent / "cpu-session37" / f"{treebank}_s1_default",
        HERE.parent / "cpu-session38" / f"base_{treebank}_s2",
    ]


def gold_run(treebank: str) -> Path:
    if treebank == "el_gdt":
        return HERE.parent / "cpu-session38" / "goldarc_el_gdt_s1"
    return HERE / f"goldarc_{treebank}_s1"


def summary(folder: Path) -> dict:
    rows = [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines()]
    epochs = [r for r in rows if "epoch" in r and r.get("dev")]
    test = next(r for r in rows if r.get("split") == "test")
    best = max(epochs, key=lambda r: (r["dev"]["las"], -r["epoch"]))
    return {
        "best_epoch": best["epoch"],
        "last_epoch": epochs[-1]["epoch"],
        "dev_las": best["dev"]["las"],
        "test_las": test["las"],
    }


def untagged_scores() -> None:
    """Score each gold-tag checkpoint on its test file with UPOS/XPOS/FEATS blanked."""
    from neuralparse import Parser
    from neuralparse.datasets import treebank_paths

    names = {"en_ewt": "UD_English-EWT", "el_gdt": "UD_Greek-GDT"}
    names |= {"got_proiel": "UD_Gothic-PROIEL"}
    names |= {"hu_szeged": "UD_Hungarian-Szeged", "tr_imst": "UD_Turkish-IMST"}
    runs_root = Path(sys.argv[2])
    scores = {}
    for treebank in TREEBANKS:
        parser = Parser.load(runs_root / f"goldarc_{treebank}_s1" / "checkpoint.pt", device="cpu")
        test = treebank_paths(names[treebank])["test"]
        scores[treebank] = parser.evaluate(test, untagged=True)["las"]
    (HERE / "gold_untagged.json").write_text(json.dumps(scores, indent=1) + "\n")


def main() -> None:
    untagged_path = HERE / "gold_untagged.json"
    untagged = json.loads(untagged_path.read_text()) if untagged_path.is_file() else {}
    table = {}
    print(
        "| treebank | default, untagged: test LAS (seeds 1, 2) | mean | gold-tag model: best /"
        " last epoch | its test LAS, gold tags | untagged | gap |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for treebank in TREEBANKS:
        defaults = [summary(run) for run in default_runs(treebank)]
        gold = summary(gold_run(treebank))
        mean = statistics.mean(r["test_las"] for r in defaults)
        gap = gold["test_las"] - mean
        table[treebank] = {
            "default": defaults,
            "default_mean": mean,
            "gold_tags": gold,
            "gold_tags_untagged_las": untagged.get(treebank),
            "gap": gap,
        }
        blank = untagged.get(treebank)
        seeds = " / ".join(f"{r['test_las']:.2f}" for r in defaults)
        print(
            f"| {treebank} | {seeds} | {mean:.2f} "
            f"| {gold['best_epoch']} / {gold['last_epoch']} | {gold['test_las']:.2f} "
            f"| {'–' if blank is None else f'{blank:.2f}'} | {gap:.2f} |"
        )
    (HERE / "gold_gap.json").write_text(json.dumps(table, indent=1) + "\n")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--untagged"]:
        untagged_scores()
    else:
        main()
