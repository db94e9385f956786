"""Dev and test LAS of the study's checkpoints with a variant of the arc term ("within"):
the arc scorer only redistributes the transition scorer's probability among the legal arc
actions (each weighed by P(arc)^λ and renormalised to their old total); the other actions keep
their own.  Untagged input, greedy, one thread.

    python docs/measurements/cpu-session46/arc_term_within.py TB SPLITS SYSTEMS SEEDS OUT
"""

import sys

import torch
from arc_term_off import evaluate_runs  # beside this script

import neuralparse.search.beam as beam_module
import neuralparse.search.greedy as greedy_module
from neuralparse.search.arc_term import with_arc_term


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


if __name__ == "__main__":
    greedy_module.with_arc_term = within
    beam_module.with_arc_term = within
    evaluate_runs(sys.argv[1:6], {"within": None})
