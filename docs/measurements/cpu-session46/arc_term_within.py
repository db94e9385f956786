"""Dev/test LAS with the arc term renormalised among the arc actions ("within")."""
import json, sys, torch
from pathlib import Path
import neuralparse.search.greedy as greedy_mod
import neuralparse.search.beam as beam_mod
from neuralparse.search.arc_term import LOG_FLOOR
from neuralparse.api import Parser

def within(system, table, rows, features, scores, legal, weight, actions=None):
    head_column, dependent_column, operand, membership = system.arc_operand_tensors(scores.device)
    if actions is not None:
        operand = operand[actions]
    if head_column.numel() == 0:
        return scores
    heads = features.index_select(1, head_column)
    dependents = features.index_select(1, dependent_column)
    arcs = table.arc_log_probs
    width = arcs.shape[2]
    flat = (rows[:, None] * arcs.shape[1] + (dependents - 1).clamp(min=0)) * width
    arc = arcs.take(flat + heads.clamp(min=0))
    known = (heads >= 0) & (dependents >= 1)
    arc = torch.where(known, arc.clamp(min=LOG_FLOOR), LOG_FLOOR)
    k = arc.shape[1]
    is_arc = operand < k
    per_action = arc.index_select(1, operand.clamp(max=k - 1))
    lp = scores.masked_fill(~legal, float("-inf")).log_softmax(1)
    arcs_legal = legal & is_arc[None, :]
    a = lp.masked_fill(~arcs_legal, float("-inf"))
    before = a.logsumexp(1, keepdim=True)
    after = (a + weight * per_action).logsumexp(1, keepdim=True)
    new = torch.where(arcs_legal, lp + weight * per_action - after + before, lp)
    return torch.where(legal, new, scores)

greedy_mod.with_arc_term = within
beam_mod.with_arc_term = within
torch.set_num_threads(1)
tb = sys.argv[1]; splits = sys.argv[2].split(",")
systems = sys.argv[3].split(","); seeds = sys.argv[4].split(",")
name = {"got_proiel": "UD_Gothic-PROIEL", "hu_szeged": "UD_Hungarian-Szeged", "el_gdt": "UD_Greek-GDT", "tr_imst": "UD_Turkish-IMST"}[tb]
out = {}
for system in systems:
    for seed in seeds:
        ck = Path(f"experiments/study_runs_arc_scorer/{tb}/{system}/seed{seed}/checkpoint.pt")
        p = Parser.load(ck, device="cpu")
        row = {}
        for split in splits:
            m = p.evaluate(f"/work/shared/data/ud/{name}/{split}.conllu", untagged=True)
            row[split + "/within"] = (round(m["las"], 2), round(m["uas"], 2))
        out[f"{system}/seed{seed}"] = row
        print(system, seed, row, flush=True)
json.dump(out, open(f"/tmp/prof/within_{tb}.json", "w"), indent=1)
