"""Swap: Nivre (2009) Figure 2, T_u = T_p ∪ {SWAP}; oracles of Figure 4 (eager) and of Nivre,
Kuhlmann & Hall (2009) (lazy).

Configurations ``(Σ, B, A)`` start as ``([0], [1..n], {})`` and are terminal as ``([0], [], A)``.

=============  ==========================================  =================================
Transition     Effect                                      Condition
=============  ==========================================  =================================
SHIFT          ``(σ, [i|β]) ⇒ ([σ|i], β)``                 buffer non-empty
LEFT-ARC_l     ``([σ|i, j], B) ⇒ ([σ|j], B), + (j, l, i)``  ``i ≠ 0``
RIGHT-ARC_l    ``([σ|i, j], B) ⇒ ([σ|i], B), + (i, l, j)``  ``i ≠ 0``, or ``Σ = [0, j]``, ``B = []``
SWAP           ``([σ|i, j], β) ⇒ ([σ|j], [i|β])``          ``0 < i < j``
=============  ==========================================  =================================

The root-arc restriction (last transition) is ours, for the UD single root, as in
:mod:`neuralparse.systems.arc_standard`.  SWAP only exchanges an adjacent pair of ``Σ + B``
that is in the original word order, so no pair is swapped twice: at most ``n(n-1)/2`` swaps
and ``2n + 2k ≤ n² + n`` transitions (§3.2).  The legal mask alone therefore guarantees
termination within :meth:`Swap.max_transitions`: no step cap is needed, hence none can corrupt
output.  The words SWAP moves back to the buffer live on a persistent stack ``"buffer"`` in
front of the untouched range ``front..n``.

Oracles (``oracle="eager"`` or ``"lazy"``): Figure 4 predicts LEFT-ARC_l / RIGHT-ARC_l when
the gold arc joins the two top nodes and the dependent has all its dependents, SWAP when the
two top nodes are out of projective order (``j <_G i``, Nivre 2009 §3.2, from
:func:`neuralparse.trees.core.projective_positions`), SHIFT otherwise.  The lazy oracle
(Nivre, Kuhlmann & Hall 2009) delays SWAP: it swaps only when, in addition, the buffer is
empty or its front lies in another maximal projective component than the top node ``j``
(components: :func:`maximal_projective_components`).  Lazy never swaps more than eager
(tested on random trees; see /work/shared/SEED-NOTES.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from neuralparse.systems.arc_standard import single_rooted
from neuralparse.systems.base import Gold, TransitionSystem
from neuralparse.systems.state import State
from neuralparse.trees.core import children, projective_positions

SHIFT, LEFT_ARC, RIGHT_ARC, SWAP = range(4)
ORACLES = ("eager", "lazy")


def maximal_projective_components(heads: Sequence[int]) -> list[int]:
    """Component id of every node 0..n (the id is the component's top node).

    Following SEED-NOTES (Swap): run the projective arc-standard oracle without SWAP over the
    words in their original order, reducing whenever the two top stack nodes are joined by a
    gold arc whose dependent is complete; when the input is exhausted, each subtree left on
    the stack is one maximal projective component.
    """
    n = len(heads)
    n_children = [len(c) for c in children(heads)]
    attached = [0] * (n + 1)
    stack = [0]
    for word in range(1, n + 2):
        while len(stack) >= 2:
            i, j = stack[-2], stack[-1]
            if i != 0 and heads[i - 1] == j and attached[i] == n_children[i]:
                attached[j] += 1
                del stack[-2]
            elif heads[j - 1] == i and attached[j] == n_children[j]:
                attached[i] += 1
                stack.pop()
            else:
                break
        if word <= n:
            stack.append(word)
    # A node's component is its nearest ancestor (itself included) left on the stack.
    top_nodes = set(stack)
    component = [-1] * (n + 1)
    component[0] = 0
    for start in range(1, n + 1):
        path = []
        v = start
        while component[v] < 0 and v not in top_nodes:
            path.append(v)
            v = heads[v - 1]
        root = component[v] if component[v] >= 0 else v
        component[v] = root
        for u in path:
            component[u] = root
    return component


class Swap(TransitionSystem):
    name = "swap"
    transitions = ("SHIFT", "LEFT-ARC", "RIGHT-ARC", "SWAP")
    arc_transitions = frozenset({"LEFT-ARC", "RIGHT-ARC"})

    def __init__(
        self, labels: Sequence[str] = (), *, root_label: str | None = "root", oracle: str = "eager"
    ) -> None:
        super().__init__(labels, root_label=root_label)
        if oracle not in ORACLES:
            raise ValueError(f"swap oracle must be one of {ORACLES}, not {oracle!r}")
        self.oracle_kind = oracle

    def initial(
        self,
        lengths: Tensor | Sequence[int],
        device: torch.device | None = None,
        *,
        n_max: int | None = None,
    ) -> State:
        return State.create(
            self.lengths_tensor(lengths, device),
            stacks={"stack": True, "buffer": False},
            scalars={"swaps": 0},
            n_max=n_max,
        )

    def terminal(self, state: State) -> Tensor:
        return (state.sizes["stack"] == 1) & (state.buffer_size() == 0)

    def transition_legal(self, state: State) -> tuple[Tensor, Tensor]:
        size = state.sizes["stack"]
        s = state.stack_tokens("stack", 2)
        j, i = s[:, 0], s[:, 1]
        buffer_empty = state.buffer_size() == 0
        shift = ~buffer_empty
        left = size >= 3
        right = left | ((size == 2) & buffer_empty)
        swap = left & (i < j)
        no = torch.zeros_like(shift)
        return torch.stack([shift, left, right, swap], 1), torch.stack([no, no, size == 2, no], 1)

    def apply_transitions(
        self, state: State, active: Tensor, transitions: Tensor, labels: Tensor
    ) -> None:
        pool = state.pool
        top = state.tops["stack"]
        below = pool.next[top]
        j = pool.token[top]
        i = pool.token[below]
        b0 = state.buffer_tokens(1)[:, 0]
        shift = active & (transitions == SHIFT)
        left = active & (transitions == LEFT_ARC)
        right = active & (transitions == RIGHT_ARC)
        swap = active & (transitions == SWAP)
        # SHIFT takes the front of the pushed-back words if any, else of the range.
        from_pushed = shift & (state.sizes["buffer"] > 0)
        state.pop("buffer", from_pushed)
        state.scalars["front"] = state.scalars["front"] + (shift & ~from_pushed).long()
        state.push("buffer", swap, i)
        # LEFT-ARC and SWAP both leave [σ|j]: j is copied onto σ (copy-on-write).
        new = pool.push(torch.where(shift, b0, j), torch.where(shift, top, pool.next[below]))
        state.tops["stack"] = torch.where(shift | left | swap, new, torch.where(right, below, top))
        state.sizes["stack"] = state.sizes["stack"] + shift.long() - (left | right | swap).long()
        state.scalars["swaps"] = state.scalars["swaps"] + swap.long()
        state.log_arcs(left | right, torch.where(left, i, j), torch.where(left, j, i), labels)

    def gold_extra(self, heads: Sequence[int]) -> dict[str, list[int]]:
        extra = {"order": projective_positions(heads)}
        if self.oracle_kind == "lazy":
            extra["component"] = maximal_projective_components(heads)
        return extra

    def oracle_actions(self, state: State, gold: Gold) -> Tensor:
        s = state.stack_tokens("stack", 2)
        j, i = s[:, 0], s[:, 1]
        left = (i >= 1) & (gold.at(gold.heads, i) == j) & gold.complete(i)
        right = (j >= 1) & (i >= 0) & (gold.at(gold.heads, j) == i) & gold.complete(j)
        order = gold.extra["order"]
        swap = (i >= 1) & (gold.at(order, j) < gold.at(order, i))
        if self.oracle_kind == "lazy":
            component = gold.extra["component"]
            b0 = state.buffer_tokens(1)[:, 0]
            swap = swap & ((b0 < 0) | (gold.at(component, j) != gold.at(component, b0)))
        transition = torch.where(
            left,
            LEFT_ARC,
            torch.where(right, RIGHT_ARC, torch.where(swap, SWAP, torch.full_like(j, SHIFT))),
        )
        label = torch.where(left, gold.at(gold.labels, i), gold.at(gold.labels, j))
        return self.actions_for(transition, label)

    def in_class(self, heads: Sequence[int], deprels: Sequence[str] | None = None) -> bool:
        return single_rooted(heads)

    def max_transitions(self, n: int) -> int:
        return n * n + n
