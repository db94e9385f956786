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

Dynamic oracle (Goldberg & Nivre 2012; arc-eager is arc-decomposable): a gold arc
``h → d`` can still be built while ``d`` has no head and either ``d`` is in the buffer and
``h`` on the stack (the root 0 only while it has no dependent) or in the buffer, or ``d`` is on
the stack and ``h`` in the buffer.  An action's cost is the number of such arcs it makes
unbuildable, plus one for a gold arc built with a wrong label (``s0``, ``b0``: stack top and
buffer front; ``h(w)``: gold head):

=============  ==============================================================================
Transition     Gold arcs lost
=============  ==============================================================================
SHIFT          ``h(b0)`` on the stack; ``b0 → d`` for headless ``d`` on the stack
REDUCE         ``s0 → d`` for ``d`` in the buffer
LEFT-ARC_l     ``h(s0)`` in the buffer but not ``b0``; ``s0 → d`` for ``d`` in the buffer;
               label: ``h(s0) = b0`` and ``l`` is not its gold label
RIGHT-ARC_l    ``h(b0)`` on the stack but not ``s0``, or in the buffer; ``b0 → d`` for headless
               ``d`` on the stack; from the root, its gold dependent when that is in the
               buffer and not ``b0``; label: ``h(b0) = s0`` and ``l`` is not its gold label
=============  ==============================================================================

These costs are exact for arc-eager with words left headless at the end as extra roots (as
Goldberg & Nivre define it) and one root dependent.  The UD restrictions above (no word left
headless, the root's dependent never reduced early) make some arcs jointly unreachable that
the table does not count, so off the gold path a cheapest legal action is now and then not
a best one (in a few percent of the configurations of random legal walks over small trees);
on the gold path every zero-cost action keeps the gold tree reachable.
Training therefore takes the cheapest legal actions as its targets.  The book-keeping the
costs need (which words are on the stack, and per word its gold dependents still in the
buffer and its headless gold dependents on the stack) lives in ``gold.extra``, kept by
:meth:`ArcEager.follow`, so the parser state carries none of it and each cost is O(1).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType

import torch
from torch import Tensor

from neuralparse.systems.arc_standard import single_rooted
from neuralparse.systems.base import (
    Gold,
    TransitionSystem,
    add_where,
    in_buffer,
    set_where,
)
from neuralparse.systems.state import State
from neuralparse.trees.core import is_projective

SHIFT, REDUCE, LEFT_ARC, RIGHT_ARC = range(4)


class ArcEager(TransitionSystem):
    name = "arc_eager"
    graph_safe = True
    transitions = ("SHIFT", "REDUCE", "LEFT-ARC", "RIGHT-ARC")
    arc_transitions = frozenset({"LEFT-ARC", "RIGHT-ARC"})
    arc_operands = MappingProxyType({"LEFT-ARC": ("b0", "s0"), "RIGHT-ARC": ("s0", "b0")})

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

    has_dynamic_oracle = True

    def action_costs(self, state: State, gold: Gold) -> Tensor:
        # O(1) per configuration: per-word counts kept by `follow`, read by gathers.
        tables = self._oracle_tables(gold)
        front = state.scalars["front"]
        s0 = state.pool.token[state.tops["stack"]]
        b0 = torch.where(front <= state.lengths, front, -1)
        head_s0, head_b0 = gold.at(gold.heads, s0), gold.at(gold.heads, b0)
        root_free = state.scalars["root_children"] == 0
        b0_head_on_stack = gold.at(tables["on_stack"], head_b0, 0) & ((head_b0 != 0) | root_free)
        s0_children_in_buffer = gold.at(tables["buffer_children"], s0, 0)
        b0_children_on_stack = gold.at(tables["stack_orphans"], b0, 0)
        root_child = tables["root_child"]
        other_root_child = in_buffer(state, root_child) & (root_child != b0)
        shift = b0_head_on_stack.long() + b0_children_on_stack
        left = (in_buffer(state, head_s0) & (head_s0 != b0)).long() + s0_children_in_buffer
        right = (
            (in_buffer(state, head_b0) | (b0_head_on_stack & (head_b0 != s0))).long()
            + b0_children_on_stack
            + ((s0 == 0) & other_root_child).long()
        )
        costs = torch.stack([shift, s0_children_in_buffer, left, right], 1)
        at, al, _, _ = self.action_tensors(state.device)
        cost = costs[:, at]
        if self.labels:
            # A gold arc with a wrong label: the arc is built, its label is lost.
            gold_label = torch.stack(
                [
                    torch.where(head_s0 == b0, gold.at(gold.labels, s0), -1),
                    torch.where((head_b0 == s0) & (b0 >= 0), gold.at(gold.labels, b0), -1),
                ],
                1,
            )
            arc = (at == LEFT_ARC) | (at == RIGHT_ARC)
            expected = gold_label[:, (at == RIGHT_ARC).long()]
            cost = cost + (arc & (expected >= 0) & (expected != al)).long()
        return cost

    def follow(self, state: State, gold: Gold, actions: Tensor) -> None:
        tables = self._oracle_tables(gold)
        at, _, _, _ = self.action_tensors(state.device)
        transition = at[actions]
        active = ~self.terminal(state)
        s0 = state.pool.token[state.tops["stack"]]
        b0 = state.scalars["front"].clamp(max=gold.heads.shape[1] - 1)
        shift = active & (transition == SHIFT)
        left = active & (transition == LEFT_ARC)
        pushed = shift | (active & (transition == RIGHT_ARC))
        set_where(tables["on_stack"], b0, pushed, True)
        set_where(tables["on_stack"], s0, left | (active & (transition == REDUCE)), False)
        # b0 leaves the buffer; a headless word joins the stack (SHIFT) or leaves it (LEFT-ARC).
        add_where(tables["buffer_children"], gold.at(gold.heads, b0), pushed, -1)
        add_where(tables["stack_orphans"], gold.at(gold.heads, b0), shift, 1)
        add_where(tables["stack_orphans"], gold.at(gold.heads, s0), left, -1)

    @staticmethod
    def _oracle_tables(gold: Gold) -> dict[str, Tensor]:
        """The dynamic oracle's book-keeping in ``gold.extra`` (made for the initial
        configuration on first use), ``[B, n_max + 1]`` per word: ``on_stack``;
        ``buffer_children``, its gold dependents still in the buffer; ``stack_orphans``, the
        headless stack words it is the gold head of; and ``root_child`` ``[B]``, the word
        whose gold head is the root."""
        if "on_stack" not in gold.extra:
            on_stack = torch.zeros_like(gold.heads, dtype=torch.bool)
            on_stack[:, 0] = True
            gold.extra["on_stack"] = on_stack
            gold.extra["buffer_children"] = gold.n_children.clone()
            gold.extra["stack_orphans"] = torch.zeros_like(gold.heads)
            gold.extra["root_child"] = (gold.heads == 0).long().argmax(1)
        return gold.extra

    def in_class(self, heads: Sequence[int], deprels: Sequence[str] | None = None) -> bool:
        return single_rooted(heads) and is_projective(heads)

    def max_transitions(self, n: int) -> int:
        return 2 * n
