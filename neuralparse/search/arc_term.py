"""Decoding's arc term: the auxiliary arc scorer's head probabilities as a second opinion on
the transitions (``model.arc_decoding_weight``).

The transition scorer sees a configuration through a few feature tokens; the arc scorer
(Dozat & Manning 2017, :mod:`neuralparse.model.arcs`) gives every word a distribution over
its possible heads in the whole sentence.  Every transition a system lists in
``arc_operands`` builds the arc ``h -> d`` between two feature tokens, so in a configuration
the arc scorer has an opinion on each of them: ``p_k = P(head of d_k is h_k)``, and on the
other transitions, which build none of those arcs now: ``1 - Σ p_k`` over the legal ones
(the probability that none of the arcs offered is right; for arc-eager exactly, since a
SHIFT or REDUCE separates the stack top and the buffer front for good).  Each action then
scores

    log P_transition(action) + λ · log P_arc(its outcome),

a product of the two experts (Hinton 2002) with the arc expert's weight ``λ``; greedy decoding
takes the best and beam search renormalises over the legal actions.  Everything is a fixed
number of tensor operations per step (gathers from the ``[B, T, T + 1]`` table computed once
per batch), so the cost per transition stays constant and CUDA graphs can record it.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from neuralparse.model.scorer import TokenTable
from neuralparse.systems import TransitionSystem

FLOOR = 1e-6
"""Probabilities below this count as this, so that a log stays finite."""
LOG_FLOOR = math.log(FLOOR)


def with_arc_term(
    system: TransitionSystem,
    table: TokenTable,
    rows: Tensor,
    features: Tensor,
    scores: Tensor,
    legal: Tensor,
    weight: float,
    actions: Tensor | None = None,
) -> Tensor:
    """The scores ``[B, A']`` of the actions plus ``weight`` times the arc log-probability of
    each action's outcome.  ``rows [B]`` are the configurations' sentences in ``table``
    (which holds the arc log-probabilities), ``features [B, F]`` their feature tokens,
    ``legal [B, A']`` the legal actions and ``actions [A']`` the ids of the columns (None:
    all).  Adding to the raw scores rather than to their log-softmax changes neither the
    greedy choice nor the beam's renormalised successors (the log-softmax subtracts the same
    number from every action of a configuration)."""
    assert table.arc_log_probs is not None
    head_column, dependent_column, operand, membership = system.arc_operand_tensors(scores.device)
    if actions is not None:
        operand, membership = operand[actions], membership[actions]
    if head_column.numel() == 0:
        return scores
    # index_select, take and the flat index: the fewest operations per step on the CPU.
    heads = features.index_select(1, head_column)
    dependents = features.index_select(1, dependent_column)
    arcs = table.arc_log_probs
    width = arcs.shape[2]
    flat = (rows[:, None] * arcs.shape[1] + (dependents - 1).clamp(min=0)) * width
    arc = arcs.take(flat + heads.clamp(min=0))
    known = (heads >= 0) & (dependents >= 1)
    arc = torch.where(known, arc.clamp(min=LOG_FLOOR), LOG_FLOOR)
    # An operand counts towards "none of the arcs" only where one of its actions is legal.
    offered = (legal.to(arc.dtype) @ membership).clamp(max=1.0)
    none = (1 - (arc.exp() * offered).sum(1, keepdim=True)).clamp(min=FLOOR).log()
    # Column K of the outcomes is "none": the actions of the other transitions read it.
    term = torch.cat([arc, none], 1).index_select(1, operand)
    return scores.add(term, alpha=weight)
