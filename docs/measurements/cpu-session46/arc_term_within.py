"""Dev and test LAS of the study's checkpoints with a variant of the arc term ("within"):
the arc scorer only redistributes the transition scorer's probability among the legal arc
actions (each weighed by P(arc)^λ and renormalised to their old total); the other actions keep
their own.  Untagged input, greedy, one thread.

    python docs/measurements/cpu-session46/arc_term_within.py TB SPLITS SYSTEMS SEEDS OUT
"""

import json
import sys
from pathlib import Path

import torch

import neuralparse.search.beam as beam_module
import neuralparse.search.greedy as greedy_module
from neuralparse.api import Parser
from neuralparse.search.arc_term import with_arc_term

TREEBANKS = {
    "got_proiel": "UD_Gothic-PROIEL",
    "hu_szeged": "UD_Hungarian-Szeged",
    "el_gdt": "UD_Greek-GDT",
    "tr_imst": "UD_Turkish-IMST",
}


def within(system, table, rows, features, scores, legal, weight, actions=None):
    """The "within" variant, from the library's term: its arc actions' term is λ log P(arc)."""
    _, _, operand, _ = system.arc_operand_tensors(scores.device)
    if actions is not None:
        operand = operand[actions]
    zeros = torch.zeros_like(scores)
    term = with_arc_term(system, table, rows, features, zeros, legal, 1.0, actions)
    is_arc = legal & (operand < len(system.arc_operands))[None, :]
    log_p = scores.masked_fill(~legal, float("-inf")).log_softmax(1)
    arcs = log_p.masked_fill(~is_arc, float("-inf"))
    before = arcs.logsumexp(1, keepdim=True)
    after = (arcs + weight * term).logsumexp(1, keepdim=True)
    return torch.where(is_arc, log_p + weight * term - after + before, log_p.where(legal, scores))


def main() -> None:
    greedy_module.with_arc_term = within
    beam_module.with_arc_term = within
    torch.set_num_threads(1)
    treebank, splits, systems, seeds, out_path = sys.argv[1:6]
    files = {s: f"/work/shared/data/ud/{TREEBANKS[treebank]}/{s}.conllu" for s in splits.split(",")}
    out = {}
    for system in systems.split(","):
        for seed in seeds.split(","):
            run = Path(f"experiments/study_runs_arc_scorer/{treebank}/{system}/seed{seed}")
            parser = Parser.load(run / "checkpoint.pt", device="cpu")
            row = {}
            for split, gold in files.items():
                scores = parser.evaluate(gold, untagged=True)
                row[f"{split}/within"] = (round(scores["las"], 2), round(scores["uas"], 2))
            out[f"{system}/seed{seed}"] = row
            print(system, seed, row, flush=True)
    Path(out_path).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
