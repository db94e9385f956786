"""Which cause leaves two-registers rows undecided in the tensor rule: tallies per call."""
import sys, collections
import torch
import neuralparse.systems.two_registers.tensor_rule as tr
from neuralparse.systems.two_registers.tensor_forms import both_registers_clear_ends
from neuralparse.systems.two_registers.exit import EXACT_STACK_LIMIT
tally = collections.Counter()
orig = tr.exit_finishes
def patched(w, wanted=None, search_rows=None, group=1):
    decided, fin = orig(w, wanted, search_rows, group)
    want = wanted if wanted is not None else torch.ones_like(decided)
    und = want & ~decided
    if und.any():
        be = (w.front > w.n) & (w.r2 >= 0)
        known, _ = both_registers_clear_ends(w)
        deep = be & (w.r2 == w.n) & (w.on_stack.sum(1) > EXACT_STACK_LIMIT) & ~known
        tally["undecided"] += int(und.sum())
        tally["deep stack, R2 = n"] += int((und & deep).sum())
        tally["both registers, empty buffer, not deep (not picked)"] += int((und & be & ~deep).sum())
        tally["phase B (anchored)"] += int((und & ~be).sum())
        g = und.view(-1, group).any(1) if group > 1 else und
        tally["configurations with an undecided successor"] += int(g.sum())
        tally["wanted successors per such configuration (max)"] = max(tally["wanted successors per such configuration (max)"], int(want.view(-1, group).sum(1)[g].max()) if group > 1 else 1)
    return decided, fin
tr.exit_finishes = patched
from benchmarks.graph_fallback import main
torch.set_num_threads(1)
rc = main(sys.argv[1:])
for k, v in tally.items(): print(f"{k}: {v}")
