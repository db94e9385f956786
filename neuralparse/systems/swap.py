"""Swap: Nivre (2009) Figure 2, T_u = T_p ∪ {SWAP}; oracles of Figure 4 (eager) and of Nivre,
Kuhlmann & Hall (2009) (lazy).

Arc-standard's configurations and transitions (:mod:`neuralparse.systems.arc_standard`:
SHIFT, LEFT-ARC_l, RIGHT-ARC_l between the two top stack nodes ``i`` and ``j``), plus

=============  ==========================================  =================================
SWAP           ``([σ|i, j], β) ⇒ ([σ|j], [i|β])``          ``0 < i < j``
=============  ==========================================  =================================

The root-arc restriction (last transition) is ours, for the UD single root, as in
:mod:`neuralparse.systems.arc_standard`.  SWAP only exchanges an adjacent pair of ``Σ + B``
that is in the original word order, so no pair is swapped twice: at most ``n(n-1)/2`` swaps
and ``2n + 2k ≤ n² + n`` transitions (§3.2).  The legal mask alone therefore guarantees
termination within :meth:`Swap.max_transitions`: no step cap is needed, hence none can corrupt
output.  The words SWAP moves back to the buffer live on a persistent stack ``"buffer"`` in
front of the untouched range ``front..n``.

The steps never read the host, but a CUDA graph runs a fixed number of steps and the bound
``n² + n`` is quadratic, while parsers swap rarely (Nivre 2009 §4.1: about ``2n``
transitions in practice).  :meth:`Swap.for_graphs` is therefore this system with a linear
budget of :func:`graph_swap_budget` swaps: a configuration not finished within it is
abandoned, and its sentence is decoded again eagerly, so the trees stay the eager loop's.

Oracles (``oracle="eager"`` or ``"lazy"``): Figure 4 predicts LEFT-ARC_l / RIGHT-ARC_l when
the gold arc joins the two top nodes and the dependent has all its dependents, SWAP when the
two top nodes are out of projective order (``j <_G i``, Nivre 2009 §3.2, from
:func:`neuralparse.trees.core.projective_positions`), SHIFT otherwise.  The lazy oracle
(Nivre, Kuhlmann & Hall 2009) delays SWAP: it swaps only when, in addition, the buffer is
empty or its front lies in another maximal projective component than the top node ``j``
(components: :func:`maximal_projective_components`).  Lazy never swaps more than eager
(tested on random trees; design note ``docs/dev/notes/01-swap.md``).

:class:`Swap` is :class:`~neuralparse.systems.arc_standard.ArcStandard` extended: the same
three transitions (same ids), legality and oracle, plus the SWAP column, the pushed-back
buffer words and the SWAP choice of the oracle.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from types import MappingProxyType

import torch
from torch import Tensor

from neuralparse.systems.arc_standard import SHIFT, ArcStandard, single_rooted
from neuralparse.systems.base import Gold
from neuralparse.systems.state import State
from neuralparse.trees.core import children, projective_positions

SWAP = 3
ORACLES = ("eager", "lazy")


def graph_swap_budget(n: int) -> int:
    """The swaps an ``n``-word sentence may take on a CUDA graph (:meth:`Swap.for_graphs`): a
    quarter of its words, plus four.  Trained parsers stay far below it: the study's swap
    models (greedy, test) swapped at most 5 times in a sentence on Hungarian-Szeged, 2 on
    Greek-GDT and 1 on Turkish-IMST, all within the budget (``python -m
    benchmarks.graph_fallback``)."""
    return n // 4 + 4


def maximal_projective_components(heads: Sequence[int]) -> list[int]:
    """Component id of every node 0..n (the id is the component's top node).

    As design note 01 (item 2) argues: run the projective arc-standard oracle without SWAP
    over the words in their original order, reducing whenever the two top stack nodes are
    joined by a gold arc whose dependent is complete; when the input is exhausted, each
    subtree left on the stack is one maximal projective component.
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


class Swap(ArcStandard):
    """Arc-standard plus SWAP: arc-standard's transitions, legality and oracle, extended."""

    name = "swap"
    graph_safe = False
    transitions = (*ArcStandard.transitions, "SWAP")
    state_stacks = MappingProxyType({"stack": True, "buffer": False})
    state_scalars = MappingProxyType({"swaps": 0})

    def __init__(
        self, labels: Sequence[str] = (), *, root_label: str | None = "root", oracle: str = "eager"
    ) -> None:
        super().__init__(labels, root_label=root_label)
        if oracle not in ORACLES:
            raise ValueError(f"swap oracle must be one of {ORACLES}, not {oracle!r}")
        self.oracle_kind = oracle

    def for_graphs(self, *, beam: bool = False) -> Swap:
        """The variant that CUDA graphs record, for greedy decoding and beam search: the same
        steps (none reads the host) for a linear number of transitions, ``2n`` plus two per
        swap of :func:`graph_swap_budget`; a configuration still unfinished then is abandoned
        (:meth:`abandoned`), and the graph's caller decodes its sentence again eagerly."""
        variant = copy.copy(self)
        variant.linear_budget = True
        return variant

    def transition_legal(self, state: State) -> tuple[Tensor, Tensor]:
        legal, roots = super().transition_legal(state)
        s = state.stack_tokens("stack", 2)
        j, i = s[:, 0], s[:, 1]
        swap = (state.sizes["stack"] >= 3) & (i < j)
        never_root = torch.zeros_like(swap)[:, None]
        return torch.cat([legal, swap[:, None]], 1), torch.cat([roots, never_root], 1)

    def _take_front(self, state: State, shift: Tensor) -> Tensor:
        """SHIFT takes the front of the pushed-back words if any, else of the range."""
        b0 = state.buffer_tokens(1)[:, 0]
        from_pushed = shift & (state.sizes["buffer"] > 0)
        state.pop("buffer", from_pushed)
        state.scalars["front"] = state.scalars["front"] + (shift & ~from_pushed).long()
        return b0

    def _move_below(self, state: State, active: Tensor, transitions: Tensor) -> Tensor:
        """SWAP moves ``i`` back to the buffer (and, like LEFT-ARC, leaves ``[σ|j]``)."""
        swap = active & (transitions == SWAP)
        i = state.pool.token[state.pool.next[state.tops["stack"]]]
        state.push("buffer", swap, i)
        state.scalars["swaps"] = state.scalars["swaps"] + swap.long()
        return swap

    def gold_extra(self, heads: Sequence[int]) -> dict[str, list[int]]:
        extra = {"order": projective_positions(heads)}
        if self.oracle_kind == "lazy":
            extra["component"] = maximal_projective_components(heads)
        return extra

    def _oracle_otherwise(self, state: State, gold: Gold, i: Tensor, j: Tensor) -> Tensor:
        """SWAP when the two top nodes are out of projective order (lazy: and the buffer
        front lies in another maximal projective component than ``j``), else SHIFT."""
        order = gold.extra["order"]
        swap = (i >= 1) & (gold.at(order, j) < gold.at(order, i))
        if self.oracle_kind == "lazy":
            component = gold.extra["component"]
            b0 = state.buffer_tokens(1)[:, 0]
            swap = swap & ((b0 < 0) | (gold.at(component, j) != gold.at(component, b0)))
        return torch.where(swap, SWAP, torch.full_like(j, SHIFT))

    def in_class(self, heads: Sequence[int], deprels: Sequence[str] | None = None) -> bool:
        return single_rooted(heads)

    def max_transitions(self, n: int) -> int:
        if self.linear_budget:
            return min(2 * n + 2 * graph_swap_budget(n), n * n + n)
        return n * n + n
