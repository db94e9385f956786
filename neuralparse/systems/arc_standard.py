"""Arc-standard: Nivre (2009) Figure 2, T_p = {LEFT-ARC_l, RIGHT-ARC_l, SHIFT}.

Configurations ``(Σ, B, A)`` start as ``([0], [1..n], {})`` and are terminal as ``([0], [], A)``
(Nivre 2009 §2.2).  Arcs join the two top stack nodes ``i`` (second) and ``j`` (top):

=============  ===========================================  ================================
Transition     Effect                                       Condition
=============  ===========================================  ================================
SHIFT          ``(σ, [i|β]) ⇒ ([σ|i], β)``                  buffer non-empty
LEFT-ARC_l     ``([σ|i, j], B) ⇒ ([σ|j], B), + (j, l, i)``  ``i ≠ 0``
RIGHT-ARC_l    ``([σ|i, j], B) ⇒ ([σ|i], B), + (i, l, j)``  ``i ≠ 0``, or ``Σ = [0, j]``, ``B = []``
=============  ===========================================  ================================

The last condition is ours (UD): the root arc is the final transition, so exactly one word is
attached to 0; every other configuration still has SHIFT or an arc available, hence no dead
ends, and every derivation has exactly 2n transitions (§3.1).  In the divisible framework this
is the two-top-stack variant of Gómez-Rodríguez & Nivre (2013), Example 3, footnote 5
(``tests/systems/test_elementary.py`` checks the fused transitions against it).

Static oracle (standard): LEFT-ARC if ``j`` is the gold head of ``i`` and ``i`` has all its
dependents; RIGHT-ARC symmetrically; SHIFT otherwise.  Complete for projective trees.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType

import torch
from torch import Tensor

from neuralparse.systems.base import Gold, TransitionSystem
from neuralparse.systems.state import State
from neuralparse.trees.core import is_projective

SHIFT, LEFT_ARC, RIGHT_ARC = range(3)


def single_rooted(heads: Sequence[int]) -> bool:
    """Exactly one word attached to the root 0 (the UD requirement)."""
    return sum(1 for h in heads if h == 0) == 1


class ArcStandard(TransitionSystem):
    name = "arc_standard"
    graph_safe = True
    transitions = ("SHIFT", "LEFT-ARC", "RIGHT-ARC")
    arc_transitions = frozenset({"LEFT-ARC", "RIGHT-ARC"})
    arc_operands = MappingProxyType({"LEFT-ARC": ("s0", "s1"), "RIGHT-ARC": ("s1", "s0")})
    # SHIFT defers an arc between two stack words rather than ruling it out: see the base.
    arc_term_by_default = False

    def terminal(self, state: State) -> Tensor:
        return (state.sizes["stack"] == 1) & (state.buffer_size() == 0)

    def transition_legal(self, state: State) -> tuple[Tensor, Tensor]:
        size = state.sizes["stack"]
        buffer_empty = state.buffer_size() == 0
        shift = ~buffer_empty
        left = size >= 3
        root_arc = (size == 2) & buffer_empty
        right = left | root_arc
        legal = torch.stack([shift, left, right], 1)
        builds_root = torch.stack([torch.zeros_like(shift), torch.zeros_like(shift), size == 2], 1)
        return legal, builds_root

    def apply_transitions(
        self, state: State, active: Tensor, transitions: Tensor, labels: Tensor
    ) -> None:
        pool = state.pool
        top = state.tops["stack"]
        below = pool.next[top]
        j = pool.token[top]
        i = pool.token[below]
        shift = active & (transitions == SHIFT)
        left = active & (transitions == LEFT_ARC)
        right = active & (transitions == RIGHT_ARC)
        b0 = self._take_front(state, shift)
        moved = self._move_below(state, active, transitions)
        # One allocation serves SHIFT (push the front) and LEFT-ARC (j copied onto σ).
        new = pool.push(torch.where(shift, b0, j), torch.where(shift, top, pool.next[below]))
        copied = left | moved  # [σ|j] left behind: j copied onto σ
        state.tops["stack"] = torch.where(shift | copied, new, torch.where(right, below, top))
        state.sizes["stack"] = state.sizes["stack"] + shift.long() - (copied | right).long()
        state.log_arcs(left | right, torch.where(left, i, j), torch.where(left, j, i), labels)

    def _take_front(self, state: State, shift: Tensor) -> Tensor:
        """The buffer front, removed from the buffer where ``shift``."""
        front = state.scalars["front"]
        state.scalars["front"] = front + shift.long()
        return front

    def _move_below(self, state: State, active: Tensor, transitions: Tensor) -> Tensor:
        """Where a transition other than LEFT-ARC removes ``i`` from under the top ``j``
        (moving it elsewhere): none in arc-standard (:class:`~neuralparse.systems.swap.Swap`
        adds SWAP)."""
        return torch.zeros_like(active)

    def oracle_actions(self, state: State, gold: Gold) -> Tensor:
        s = state.stack_tokens("stack", 2)
        j, i = s[:, 0], s[:, 1]
        left = (i >= 1) & (gold.at(gold.heads, i) == j) & gold.complete(i)
        right = (j >= 1) & (i >= 0) & (gold.at(gold.heads, j) == i) & gold.complete(j)
        otherwise = self._oracle_otherwise(state, gold, i, j)
        transition = torch.where(left, LEFT_ARC, torch.where(right, RIGHT_ARC, otherwise))
        label = torch.where(left, gold.at(gold.labels, i), gold.at(gold.labels, j))
        return self.actions_for(transition, label)

    def _oracle_otherwise(self, state: State, gold: Gold, i: Tensor, j: Tensor) -> Tensor:
        """The oracle's transition where no arc is due: SHIFT."""
        return torch.full_like(j, SHIFT)

    def in_class(self, heads: Sequence[int], deprels: Sequence[str] | None = None) -> bool:
        return single_rooted(heads) and is_projective(heads)

    def max_transitions(self, n: int) -> int:
        return 2 * n
