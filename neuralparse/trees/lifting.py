"""Lifting non-projective arcs until a tree falls inside a target class.

Nivre & Nilsson (2005, §3) projectivize a tree by repeatedly *lifting* an arc: ``LIFT(h -> d)``
replaces it by ``head(h) -> d``, moving ``d`` (with its subtree) one step up towards the root.
Their ``PROJECTIVIZE`` lifts, while the tree is non-projective, the *smallest* non-projective
arc: the one with the shortest distance between head and dependent, ties broken from left to
right.  Pitler & McDonald (2015, §7) transform the training trees outside 2-Crossing-Interval
"by lifting arcs until the tree is within the class"; the same is needed for a 2-planar parser
(Gómez-Rodríguez & Nivre 2013 §5), whose reachable class is the 2-planar trees.

:func:`lift` implements one deterministic procedure for all three targets:

1. If the tree is already in the target class, return an unchanged copy (``lifted == 0``).
2. Otherwise lift the non-projective arc (Gómez-Rodríguez & Nivre 2013 §5.2 definition, see
   :func:`~neuralparse.trees.core.nonprojective_arcs`) with the shortest span
   ``|h - d|``; ties go to the leftmost arc (smallest ``min(h, d)``; two arcs with the same
   span would be a 2-cycle, so this key is unique).  Repeat from 1.

Why only non-projective arcs: every non-projective arc is crossed (a word ``w`` inside the span
that ``h`` does not dominate reaches the root 0, outside the span, by a path that must leave
the span on an arc crossing ``h -> d``), so they are the arcs "taking part in crossings" whose
lifting makes progress towards projectivity, and Nivre & Nilsson's order is kept unchanged; the
only difference between targets is the stopping test.  Choosing instead the shortest liftable arc
among *all* crossed arcs needs 2-4 times more lifts on the shared UD training sets (2ci:
English-EWT 35 vs 133 lifts, Gothic-PROIEL 173 vs 367), as it also lifts projective arcs that
merely cross a non-projective one.

Termination and correctness: root arcs ``0 -> d`` are never non-projective (0 dominates every
word), so a chosen arc always has a head's head to move to.  Each lift moves one word strictly
closer to the root, so the sum of depths decreases and the loop ends; while the tree is not
projective there is a non-projective arc to lift, and a projective tree belongs to every target
class, so the result always lies inside the target.  The new head is an ancestor of ``d``, so a
lift never creates a cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from neuralparse.errors import InputError
from neuralparse.trees.core import check_tree, is_projective, nonprojective_arcs
from neuralparse.trees.crossing import is_k_crossing_interval
from neuralparse.trees.planarity import min_planarity

LiftTarget = Literal["projective", "2ci", "2planar"]


def _is_two_planar(heads: Sequence[int]) -> bool:
    # Word-to-word arcs only (CONVENTIONS.md); min_planarity gives None above max_k.
    k = min_planarity(heads, max_k=2)
    return k is not None and k <= 2


def _is_two_crossing_interval(heads: Sequence[int]) -> bool:
    return is_k_crossing_interval(heads, 2)


#: Membership test of each target class.
TARGET_CLASSES: dict[str, Callable[[Sequence[int]], bool]] = {
    "projective": is_projective,
    "2ci": _is_two_crossing_interval,
    "2planar": _is_two_planar,
}


@dataclass
class LiftResult:
    """Outcome of :func:`lift`.

    ``heads``: the lifted tree.  ``lifted``: the number of lift operations (an arc lifted twice
    counts twice).  ``lifted_dependents``: every word whose arc was lifted at least once,
    mapped to its original (syntactic) head, in the order the words were first lifted.
    ``deprels``: a copy of the labels given to :func:`lift` (lifting keeps each word's label on
    its new arc), or ``None``.  ``steps``: the lift operations in order, each as
    ``(dependent, head it was lifted from)``; pseudo-projective path marks are read from them.
    """

    heads: list[int]
    lifted: int
    lifted_dependents: dict[int, int] = field(default_factory=dict)
    deprels: list[str] | None = None
    steps: list[tuple[int, int]] = field(default_factory=list)


def smallest_nonprojective_arc(heads: Sequence[int]) -> int | None:
    """The dependent of Nivre & Nilsson's (2005) SMALLEST-NONP-ARC: the non-projective arc with
    the shortest head-dependent distance, ties broken leftmost; ``None`` if projective."""
    candidates = nonprojective_arcs(heads)
    if not candidates:
        return None

    def span_key(d: int) -> tuple[int, int]:
        h = heads[d - 1]
        return abs(h - d), min(h, d)

    return min(candidates, key=span_key)


def lift(
    heads: Sequence[int],
    target: LiftTarget | Callable[[Sequence[int]], bool] = "projective",
    deprels: Sequence[str] | None = None,
) -> LiftResult:
    """Lift arcs (shortest non-projective first, Nivre & Nilsson 2005 §3) until ``heads`` is in
    ``target``: ``"projective"``, ``"2ci"`` (2-Crossing-Interval, Pitler & McDonald 2015 §7),
    ``"2planar"`` (minimal planarity at most 2 over word-to-word arcs), or any membership test
    that accepts every projective tree (a transition system's reachable class).

    Raises :class:`~neuralparse.errors.TreeError` for a malformed tree and
    :class:`~neuralparse.errors.InputError` for an unknown target or mismatched ``deprels``.
    """
    if callable(target):
        in_class = target
    elif target in TARGET_CLASSES:
        in_class = TARGET_CLASSES[target]
    else:
        expected = list(TARGET_CLASSES)
        raise InputError(f"unknown lifting target {target!r}; expected one of {expected}")
    check_tree(heads)
    if deprels is not None and len(deprels) != len(heads):
        raise InputError(f"{len(deprels)} labels for {len(heads)} words")
    current = list(heads)
    original_heads: dict[int, int] = {}
    steps: list[tuple[int, int]] = []
    while not in_class(current):
        d = smallest_nonprojective_arc(current)
        if d is None:  # only a membership test rejecting a projective tree gets here
            raise InputError(f"the target class rejects the projective tree {current}")
        h = current[d - 1]
        original_heads.setdefault(d, heads[d - 1])
        current[d - 1] = current[h - 1]  # h != 0: root arcs are never non-projective
        steps.append((d, h))
    return LiftResult(
        heads=current,
        lifted=len(steps),
        lifted_dependents=original_heads,
        deprels=list(deprels) if deprels is not None else None,
        steps=steps,
    )
