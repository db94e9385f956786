"""Arc-eager: Nivre (2003), as in Pitler & McDonald (2015) Table 2 (top) and Lacroix & Béchet
(2014) Table 2; the divisible system of Gómez-Rodríguez & Nivre (2013), Example 4.

Configurations ``(σ, β, A)`` start as ``([0], [1..n], {})``; terminal: ``(σ, [], A)``.

=============  =============================================  ===================================
Transition     Effect                                         Condition
=============  =============================================  ===================================
SHIFT          ``(σ, j|β) ⇒ (σ|j, β)``                        ``|β| ≥ 2``  (*)
REDUCE         ``(σ|i, β) ⇒ (σ, β)``                          ``i`` has a head; ``|σ| ≥ 3`` (*)
LEFT-ARC_l     ``(σ|i, j|β) ⇒ (σ, j|β), + (j, l, i)``         ``i ≠ 0``, ``i`` has no head
RIGHT-ARC_l    ``(σ|i, j|β) ⇒ (σ|i|j, β), + (i, l, j)``       (*) below
=============  =============================================  ===================================

(*) The UD single-root restrictions (ours), with two per-configuration counters,
``root_children`` and ``headless`` (headless words on the stack, 0 excluded):

* RIGHT-ARC from ``i = 0`` only while the root has no dependent; from ``i ≠ 0`` with the last
  word (``|β| = 1``) only when the stack holds no headless word and the root has its
  dependent (afterwards the buffer is empty and no word may be left headless).
* SHIFT never empties the buffer: the last word must get its head by RIGHT-ARC.
* REDUCE never exposes the root while the buffer is non-empty (``|σ| ≥ 3``): a root dependent
  reduced early would leave the remaining words no possible head.

Dead-end freedom: with ``|β| ≥ 2`` SHIFT is legal; with ``|β| = 1`` a headless top has
LEFT-ARC, a headed top above ``σ2 ≠ 0`` has REDUCE, a headed top on ``[0]`` is the root
dependent and, no headless word being left, has RIGHT-ARC, and a bare ``[0]`` (root still
free, since its dependent is never reduced early) has RIGHT-ARC.  Every derivation has at most
2n transitions (each word is shifted or right-attached once and popped at most once).

Static oracle (Nivre 2003; Goldberg & Nivre 2012 static): LEFT-ARC / RIGHT-ARC when the gold
arc joins the stack top and the buffer front, REDUCE when the top has its head and all its
dependents, SHIFT otherwise; complete for projective single-rooted trees.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType

import torch
from torch import Tensor

from neuralparse.systems.arc_standard import single_rooted
from neuralparse.systems.base import Gold, TransitionSystem
from neuralparse.systems.state import State
from neuralparse.trees.core import is_projective

SHIFT, REDUCE, LEFT_ARC, RIGHT_ARC = range(4)


class ArcEager(TransitionSystem):
    name = "arc_eager"
    graph_safe = True
    transitions = ("SHIFT", "REDUCE", "LEFT-ARC", "RIGHT-ARC")
    arc_transitions = frozenset({"LEFT-ARC", "RIGHT-ARC"})

    state_scalars = MappingProxyType({"root_children": 0, "headless": 0})
    state_node_attrs = MappingProxyType({"has_head": 0})

    def terminal(self, state: State) -> Tensor:
        return state.scalars["front"] > state.lengths

    def transition_legal(self, state: State) -> tuple[Tensor, Tensor]:
        size = state.sizes["stack"]
        top = state.tops["stack"]
        s0 = state.pool.token[top]
        has_head = state.node_attr("has_head", top).bool()
        remaining = (state.lengths - state.scalars["front"] + 1).clamp(min=0)
        nonempty = remaining >= 1
        last = remaining == 1
        root_free = state.scalars["root_children"] == 0
        shift = remaining >= 2
        reduce = has_head & (size >= 3) & nonempty
        left = (s0 >= 1) & ~has_head & nonempty
        from_root = s0 == 0
        right = nonempty & torch.where(
            from_root, root_free, ~(last & ((state.scalars["headless"] > 0) | root_free))
        )
        no = torch.zeros_like(shift)
        legal = torch.stack([shift, reduce, left, right], 1)
        return legal, torch.stack([no, no, no, from_root], 1)

    def apply_transitions(
        self, state: State, active: Tensor, transitions: Tensor, labels: Tensor
    ) -> None:
        s0 = state.pool.token[state.tops["stack"]]
        front = state.scalars["front"]
        shift = active & (transitions == SHIFT)
        reduce = active & (transitions == REDUCE)
        left = active & (transitions == LEFT_ARC)
        right = active & (transitions == RIGHT_ARC)
        state.pop("stack", reduce | left)
        state.push("stack", shift | right, front, has_head=right.long())
        state.scalars["front"] = front + (shift | right).long()
        state.scalars["headless"] = state.scalars["headless"] + shift.long() - left.long()
        state.scalars["root_children"] = state.scalars["root_children"] + (right & (s0 == 0)).long()
        state.log_arcs(
            left | right, torch.where(left, s0, front), torch.where(left, front, s0), labels
        )

    def oracle_actions(self, state: State, gold: Gold) -> Tensor:
        top = state.tops["stack"]
        s0 = state.pool.token[top]
        b0 = state.buffer_tokens(1)[:, 0]
        left = (s0 >= 1) & (b0 >= 1) & (gold.at(gold.heads, s0) == b0)
        right = (b0 >= 1) & (s0 >= 0) & (gold.at(gold.heads, b0) == s0)
        reduce = state.node_attr("has_head", top).bool() & gold.complete(s0)
        transition = torch.where(
            left,
            LEFT_ARC,
            torch.where(right, RIGHT_ARC, torch.where(reduce, REDUCE, torch.full_like(s0, SHIFT))),
        )
        label = torch.where(left, gold.at(gold.labels, s0), gold.at(gold.labels, b0))
        return self.actions_for(transition, label)

    def in_class(self, heads: Sequence[int], deprels: Sequence[str] | None = None) -> bool:
        return single_rooted(heads) and is_projective(heads)

    def max_transitions(self, n: int) -> int:
        return 2 * n
