"""Why the two-registers exit rule's tensor form leaves rows undecided, counted over a run of
``python -m benchmarks.graph_fallback`` (same arguments): a deep stack with R2 = n, a
configuration with both registers and an empty buffer that the step's search did not pick, or
phase B still anchored.

    PYTHONPATH=. python docs/measurements/cpu-session46/graph_fallback_causes.py --checkpoint CKPT
        --input FILE --graph-rule tensor --beam 8 --batch-tokens 64000
"""

import collections
import sys

import torch

import neuralparse.systems.two_registers.tensor_rule as tensor_rule
from benchmarks.graph_fallback import main
from neuralparse.systems.two_registers.tensor_both_registers import SHALLOW_STACK_LIMIT
from neuralparse.systems.two_registers.tensor_forms import both_registers_clear_ends

tally: collections.Counter = collections.Counter()
exit_finishes = tensor_rule.exit_finishes


def counted(w, wanted=None, search_rows=None, group=1):
    decided, finishes = exit_finishes(w, wanted, search_rows, group)
    undecided = (wanted if wanted is not None else torch.ones_like(decided)) & ~decided
    both = (w.front > w.n) & (w.r2 >= 0)
    known, _ = both_registers_clear_ends(w)
    deep = both & (w.r2 == w.n) & (w.on_stack.sum(1) > SHALLOW_STACK_LIMIT) & ~known
    tally["undecided"] += int(undecided.sum())
    tally["deep stack, R2 = n"] += int((undecided & deep).sum())
    tally["both registers, empty buffer, not picked"] += int((undecided & both & ~deep).sum())
    tally["phase B (anchored)"] += int((undecided & ~both).sum())
    return decided, finishes


if __name__ == "__main__":
    tensor_rule.exit_finishes = counted
    torch.set_num_threads(1)
    code = main(sys.argv[1:])
    for cause, count in tally.items():
        print(f"{cause}: {count}")
    sys.exit(code)
