"""Arc-hybrid: Kuhlmann, Gómez-Rodríguez & Satta (2011), as the divisible system of
Gómez-Rodríguez & Nivre (2013), Example 6.

Configurations ``(σ, β, A)`` start as ``([0], [1..n], {})`` and are terminal as ``([0], [], A)``.
Left arcs join the stack top and the buffer front, right arcs the two top stack nodes:

=============  ========================================  ======================================
Transition     Effect                                    Condition
=============  ========================================  ======================================
SHIFT          ``(σ, j|β) ⇒ (σ|j, β)``                   buffer non-empty
LEFT-ARC_l     ``(σ|i, j|β) ⇒ (σ, j|β), + (j, l, i)``    ``i ≠ 0``
RIGHT-ARC_l    ``(σ|h|d, β) ⇒ (σ|h, β), + (h, l, d)``    ``h ≠ 0``, or ``σ = [0, d]``, ``β = []``
=============  ========================================  ======================================

As in arc-standard, the root arc is restricted to be the final transition (UD single root);
no dead ends, exactly 2n transitions.  Static oracle: LEFT-ARC if the buffer front is the gold
head of the stack top, RIGHT-ARC if the second stack node is and the top has all its
dependents, SHIFT otherwise; complete for projective trees.

Dynamic oracle (Goldberg & Nivre 2013; arc-hybrid is arc-decomposable).  Every stack word
but 0 is headless (a word gets its head when it is popped), and a stack word's head can only
be the word right below it (RIGHT-ARC) or a buffer word (LEFT-ARC once it is on top again).
With the root arc last, the root's gold dependent can still get it only from the bottom of
the stack (``σ = [0, d]``) or from the buffer.  An action's cost is the number of gold arcs
it makes unbuildable, plus one for a gold arc built with a wrong label (``s0``, ``s1``: the two
stack tops, ``b0``: the buffer front, ``h(w)``: gold head):

=============  ==============================================================================
Transition     Gold arcs lost
=============  ==============================================================================
SHIFT          ``h(b0)`` on the stack but not ``s0``; ``b0 → d`` for ``d`` on the stack
LEFT-ARC_l     ``h(s0)`` is ``s1``, or in the buffer but not ``b0``; ``s0 → d`` for ``d`` in
               the buffer; label: ``h(s0) = b0`` and ``l`` is not its gold label
RIGHT-ARC_l    ``h(s0)`` in the buffer; ``s0 → d`` for ``d`` in the buffer; label:
               ``h(s0) = s1`` and ``l`` is not its gold label
=============  ==============================================================================

The costs equal an exhaustive search over the system's own moves on every configuration of
random walks (``tests/systems/test_dynamic_oracle.py``).  Which words have their head, and
per word its gold dependents still in the buffer and on the stack, is book-keeping in
``gold.extra``, kept by :meth:`ArcHybrid.follow`, so each cost is O(1).
"""

from __future__ import annotations

from types import MappingProxyType

import torch
from torch import Tensor

from neuralparse.systems.arc_standard import ArcStandard
from neuralparse.systems.base import (
    Gold,
    TransitionSystem,
    add_where,
    in_buffer,
    set_where,
)
from neuralparse.systems.state import State

SHIFT, LEFT_ARC, RIGHT_ARC = range(3)


class ArcHybrid(TransitionSystem):
    name = "arc_hybrid"
    graph_safe = True
    # Arc-standard's transitions (same ids), terminal configurations, class and length.
    transitions = ArcStandard.transitions
    arc_transitions = ArcStandard.arc_transitions
    arc_operands = MappingProxyType({"LEFT-ARC": ("b0", "s0"), "RIGHT-ARC": ("s1", "s0")})
    # SHIFT defers an arc between two stack words rather than ruling it out: see the base.
    arc_term_by_default = False
    terminal = ArcStandard.terminal
    in_class = ArcStandard.in_class
    max_transitions = ArcStandard.max_transitions

    def transition_legal(self, state: State) -> tuple[Tensor, Tensor]:
        size = state.sizes["stack"]
        buffer_empty = state.scalars["front"] > state.lengths
        shift = ~buffer_empty
        left = (size >= 2) & ~buffer_empty
        right = (size >= 3) | ((size == 2) & buffer_empty)
        no = torch.zeros_like(shift)
        return torch.stack([shift, left, right], 1), torch.stack([no, no, size == 2], 1)

    def apply_transitions(
        self, state: State, active: Tensor, transitions: Tensor, labels: Tensor
    ) -> None:
        top = state.tops["stack"]
        below = state.pool.next[top]
        s0 = state.pool.token[top]
        s1 = state.pool.token[below]
        front = state.scalars["front"]
        shift = active & (transitions == SHIFT)
        left = active & (transitions == LEFT_ARC)
        right = active & (transitions == RIGHT_ARC)
        state.pop("stack", left | right)
        state.push("stack", shift, front)
        state.scalars["front"] = front + shift.long()
        state.log_arcs(left | right, s0, torch.where(left, front, s1), labels)

    def oracle_actions(self, state: State, gold: Gold) -> Tensor:
        s = state.stack_tokens("stack", 2)
        s0, s1 = s[:, 0], s[:, 1]
        b0 = state.buffer_tokens(1)[:, 0]
        head_s0 = gold.at(gold.heads, s0)
        left = (s0 >= 1) & (b0 >= 1) & (head_s0 == b0)
        right = (s0 >= 1) & (s1 >= 0) & (head_s0 == s1) & gold.complete(s0)
        transition = torch.where(
            left, LEFT_ARC, torch.where(right, RIGHT_ARC, torch.full_like(s0, SHIFT))
        )
        return self.actions_for(transition, gold.at(gold.labels, s0))

    has_dynamic_oracle = True

    def action_costs(self, state: State, gold: Gold) -> Tensor:
        # O(1) per configuration: per-word counts kept by `follow`, read by gathers.
        tables = self._oracle_tables(gold)
        front = state.scalars["front"]
        s = state.stack_tokens("stack", 2)
        s0, s1 = s[:, 0], s[:, 1]
        b0 = torch.where(front <= state.lengths, front, -1)
        head_s0, head_b0 = gold.at(gold.heads, s0), gold.at(gold.heads, b0)
        # Every stack word but 0 is a word left of the buffer without its head yet.
        head_b0_on_stack = (head_b0 == 0) | (
            (head_b0 >= 1) & (head_b0 < front) & ~gold.at(tables["headed"], head_b0, 0)
        )
        s0_children_in_buffer = gold.at(tables["buffer_children"], s0, 0)
        s0_head_in_buffer = in_buffer(state, head_s0)
        shift = (head_b0_on_stack & (head_b0 != s0)).long() + gold.at(
            tables["stack_children"], b0, 0
        )
        left = (
            ((head_s0 == s1) & (s1 >= 0)) | (s0_head_in_buffer & (head_s0 != b0))
        ).long() + s0_children_in_buffer
        right = s0_head_in_buffer.long() + s0_children_in_buffer
        at, al, _, _ = self.action_tensors(state.device)
        cost = torch.stack([shift, left, right], 1)[:, at]
        if self.labels:
            # A gold arc with a wrong label: the arc is built, its label is lost.
            gold_label = gold.at(gold.labels, s0)
            expected = torch.stack(
                [
                    torch.where(head_s0 == b0, gold_label, -1),
                    torch.where((head_s0 == s1) & (s1 >= 0), gold_label, -1),
                ],
                1,
            )[:, (at == RIGHT_ARC).long()]
            arc = at != SHIFT
            cost = cost + (arc & (expected >= 0) & (expected != al)).long()
        return cost

    def follow(self, state: State, gold: Gold, actions: Tensor) -> None:
        tables = self._oracle_tables(gold)
        at, _, _, _ = self.action_tensors(state.device)
        active = ~self.terminal(state)
        shift = active & (at[actions] == SHIFT)
        popped = active & ~shift
        s0 = state.pool.token[state.tops["stack"]]
        b0 = state.scalars["front"].clamp(max=gold.heads.shape[1] - 1)
        set_where(tables["headed"], s0, popped, True)
        # SHIFT moves b0 from the buffer onto the stack; an arc pops s0 off it.
        add_where(tables["buffer_children"], gold.at(gold.heads, b0), shift, -1)
        add_where(tables["stack_children"], gold.at(gold.heads, b0), shift, 1)
        add_where(tables["stack_children"], gold.at(gold.heads, s0), popped, -1)

    @staticmethod
    def _oracle_tables(gold: Gold) -> dict[str, Tensor]:
        """The dynamic oracle's book-keeping in ``gold.extra`` (made for the initial
        configuration on first use), ``[B, n_max + 1]`` per word: ``headed``;
        ``buffer_children``, its gold dependents still in the buffer; ``stack_children``, its
        gold dependents on the stack."""
        if "headed" not in gold.extra:
            gold.extra["headed"] = torch.zeros_like(gold.heads, dtype=torch.bool)
            gold.extra["buffer_children"] = gold.n_children.clone()
            gold.extra["stack_children"] = torch.zeros_like(gold.heads)
        return gold.extra
