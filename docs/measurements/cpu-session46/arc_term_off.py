"""Test LAS of study checkpoints with the arc term's weight as trained (0.75) and 0."""
import json, sys, torch
from pathlib import Path
from neuralparse.api import Parser
torch.set_num_threads(1)
tb = sys.argv[1]; splits = sys.argv[2].split(",")
systems = sys.argv[3].split(",")
seeds = sys.argv[4].split(",")
gold = {"got_proiel": "UD_Gothic-PROIEL", "hu_szeged": "UD_Hungarian-Szeged", "el_gdt": "UD_Greek-GDT", "tr_imst": "UD_Turkish-IMST"}[tb]
golds = {s: f"/work/shared/data/ud/{gold}/{s}.conllu" for s in splits}
out = {}
for system in systems:
    for seed in seeds:
        ck = Path(f"experiments/study_runs_arc_scorer/{tb}/{system}/seed{seed}/checkpoint.pt")
        row = {}
        for w in (None, 0.0):
            p = Parser.load(ck, device="cpu", arc_weight=w)
            for split, gold in golds.items():
                m = p.evaluate(gold, untagged=True)
                row[split + ("/model" if w is None else "/0")] = (round(m["las"], 2), round(m["uas"], 2))
        out[f"{system}/seed{seed}"] = row
        print(system, seed, row, flush=True)
json.dump(out, open(f"/tmp/prof/armw_{tb}.json", "w"), indent=1)
