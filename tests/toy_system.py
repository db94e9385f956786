"""A toy transition system, written by following ``docs/dev/adding-a-system.md`` once: the
rightward system, arc-eager without LEFT-ARC.

Configurations ``(σ, β, A)`` start as ``([0], [1..n], {})`` and are terminal once the buffer
is empty:

=============  ===========================================  ================================
Transition     Effect                                       Condition
=============  ===========================================  ================================
RIGHT-ARC_l    ``(σ|i, j|β) ⇒ (σ|i|j, β), + (i, l, j)``     ``i ≠ 0``, or 0 has no dependent
REDUCE         ``(σ|i, β) ⇒ (σ, β)``                        ``|σ| ≥ 3``, ``β`` non-empty
=============  ===========================================  ================================

Every word takes its head by RIGHT-ARC, so every head lies left of its dependent, word 1 is
the root's one dependent and the arcs nest (the stack): the class is the projective
single-rooted trees whose arcs all point rightwards.  No dead ends: with the buffer non-empty
RIGHT-ARC is legal from any word, and the stack holds only the root exactly in the initial
configuration (REDUCE never exposes it), where the root is still free.  At most ``2n``
transitions (n RIGHT-ARCs, at most n - 1 REDUCEs).  Static oracle: RIGHT-ARC when the stack
top is the gold head of the buffer front, REDUCE otherwise (complete for the class: the
head of the front is on the stack, since only words whose dependents all came earlier are
reduced).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType

import torch
from torch import Tensor

from neuralparse.systems.base import Gold, TransitionSystem
from neuralparse.systems.state import State
from neuralparse.trees.core import is_projective

RIGHT_ARC, REDUCE = range(2)


class Rightward(TransitionSystem):
    """The toy system of the module docstring (registry name ``toy_rightward``)."""

    name = "toy_rightward"
    graph_safe = True
    transitions = ("RIGHT-ARC", "REDUCE")
    arc_transitions = frozenset({"RIGHT-ARC"})
    state_scalars = MappingProxyType({"root_children": 0})

    def terminal(self, state: State) -> Tensor:
        return state.buffer_size() == 0

    def transition_legal(self, state: State) -> tuple[Tensor, Tensor]:
        nonempty = state.buffer_size() > 0
        from_root = state.pool.token[state.tops["stack"]] == 0
        right = nonempty & (~from_root | (state.scalars["root_children"] == 0))
        reduce = nonempty & (state.sizes["stack"] >= 3)
        return torch.stack([right, reduce], 1), torch.stack([from_root, torch.zeros_like(right)], 1)

    def apply_transitions(
        self, state: State, active: Tensor, transitions: Tensor, labels: Tensor
    ) -> None:
        s0 = state.pool.token[state.tops["stack"]]
        front = state.scalars["front"]
        right = active & (transitions == RIGHT_ARC)
        reduce = active & (transitions == REDUCE)
        state.pop("stack", reduce)
        state.push("stack", right, front)
        state.scalars["front"] = front + right.long()
        state.scalars["root_children"] = state.scalars["root_children"] + (right & (s0 == 0)).long()
        state.log_arcs(right, front, s0, labels)

    def oracle_actions(self, state: State, gold: Gold) -> Tensor:
        s0 = state.pool.token[state.tops["stack"]]
        b0 = state.buffer_tokens(1)[:, 0]
        right = (b0 >= 1) & (gold.at(gold.heads, b0) == s0)
        transition = torch.where(right, RIGHT_ARC, torch.full_like(s0, REDUCE))
        return self.actions_for(transition, gold.at(gold.labels, b0))

    def in_class(self, heads: Sequence[int], deprels: Sequence[str] | None = None) -> bool:
        rightward = all(h < d for d, h in enumerate(heads, start=1))
        return bool(heads) and heads.count(0) == 1 and rightward and is_projective(heads)

    def training_tree(
        self, heads: Sequence[int], deprels: Sequence[str]
    ) -> tuple[list[int], list[str]]:
        """The tree itself when in class.  The default lifts other trees into the class, which
        works only for classes holding every projective tree; this one does not, so a tree
        outside it is replaced by the chain ``0 -> 1 -> ... -> n``, its labels kept (those of
        word 1 and of the root's dependent exchanged, so the root label stays on the root
        arc)."""
        if self.in_class(heads, deprels):
            return list(heads), list(deprels)
        labels = list(deprels)
        root_word = list(heads).index(0) if 0 in heads else 0
        labels[0], labels[root_word] = labels[root_word], labels[0]
        return list(range(len(heads))), labels

    def max_transitions(self, n: int) -> int:
        return 2 * n
