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
"""

from __future__ import annotations

import torch
from torch import Tensor

from neuralparse.systems.arc_standard import ArcStandard
from neuralparse.systems.base import Gold, TransitionSystem
from neuralparse.systems.state import State

SHIFT, LEFT_ARC, RIGHT_ARC = range(3)


class ArcHybrid(TransitionSystem):
    name = "arc_hybrid"
    graph_safe = True
    # Arc-standard's transitions (same ids), terminal configurations, class and length.
    transitions = ArcStandard.transitions
    arc_transitions = ArcStandard.arc_transitions
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
