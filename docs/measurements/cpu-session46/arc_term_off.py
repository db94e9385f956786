"""Dev and test LAS of the study's checkpoints with the arc term at the model's weight (0.75)
and off (``arc_weight=0``), untagged input, greedy, one thread.

    python docs/measurements/cpu-session46/arc_term_off.py TB SPLITS SYSTEMS SEEDS OUT
    (e.g. got_proiel dev,test arc_standard,swap 1,2,3 out.json)
"""

import json
import sys
from pathlib import Path

import torch

from neuralparse.api import Parser

TREEBANKS = {
    "got_proiel": "UD_Gothic-PROIEL",
    "hu_szeged": "UD_Hungarian-Szeged",
    "el_gdt": "UD_Greek-GDT",
    "tr_imst": "UD_Turkish-IMST",
}


def evaluate_runs(argv: list[str], weights: dict[str, float | None]) -> None:
    """Score the runs named by ``argv`` (TB SPLITS SYSTEMS SEEDS OUT) at each of ``weights``
    (column name -> ``arc_weight``), print a line per run and save the table as JSON."""
    torch.set_num_threads(1)
    treebank, splits, systems, seeds, out_path = argv
    files = {s: f"/work/shared/data/ud/{TREEBANKS[treebank]}/{s}.conllu" for s in splits.split(",")}
    out = {}
    for system in systems.split(","):
        for seed in seeds.split(","):
            run = Path(f"experiments/study_runs_arc_scorer/{treebank}/{system}/seed{seed}")
            row = {}
            for name, weight in weights.items():
                parser = Parser.load(run / "checkpoint.pt", device="cpu", arc_weight=weight)
                for split, gold in files.items():
                    scores = parser.evaluate(gold, untagged=True)
                    row[f"{split}/{name}"] = (round(scores["las"], 2), round(scores["uas"], 2))
            out[f"{system}/seed{seed}"] = row
            print(system, seed, row, flush=True)
    Path(out_path).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    evaluate_runs(sys.argv[1:6], {"model": None, "0": 0.0})
