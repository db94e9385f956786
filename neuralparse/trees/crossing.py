"""Crossing intervals, k-Crossing-Interval trees and 1-Endpoint-Crossing trees.

Root arcs are included throughout (Pitler & McDonald 2015 §2: vertex 0 is the artificial root
at the left edge and its arcs are arcs of the tree).

Our reading of Pitler & McDonald (2015) §3, Definitions 1-3:

* Definition 1: ``Interval(A) = [min(V_A), max(V_A)]``, a closed interval of vertices.
* Definition 2: the auxiliary graph has one vertex per *crossed* arc (an arc crossing at least
  one other arc); two are adjacent when their closed spans intersect, sharing a single vertex
  included (this is what makes the resulting intervals vertex-disjoint, as the definition
  states).  Its connected components partition the crossed arcs; their intervals are the
  crossing intervals.  Since the auxiliary graph is an interval graph, its components are the
  maximal runs of overlapping spans, found by one sort-and-merge.
* Definition 3: a tree is k-Crossing-Interval if every crossing interval has a set S of at
  most k vertices such that (a) every crossed arc of the interval has an endpoint in S and
  (b) every vertex of the interval that has a child on the far side of its parent is in S.
  "A child on the far side of its parent": v with parent p and child c such that p lies
  strictly between v and c (c < p < v or v < p < c).  Such an arc v -> c is always crossed (the
  path from 0 to p must leave its span), so every such vertex lies in some crossing interval.
  S is found exactly: (b)'s vertices are forced, and the arcs they leave uncovered need a
  vertex cover of the remaining size, searched by the classic bounded branching (pick an
  uncovered arc; one of its two endpoints must be in S).

With these readings k = 0 and k = 1 give exactly the projective trees (§3.1), checked by brute
force in the tests, as are the inclusions projective ⊆ 2-CI ⊆ 1-Endpoint-Crossing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from neuralparse.trees.core import Arc, crossing_pairs


@dataclass(frozen=True)
class CrossingInterval:
    """One crossing interval ``[left, right]`` and the crossed arcs ``(head, dep)`` in it."""

    left: int
    right: int
    arcs: tuple[Arc, ...]


def crossing_intervals(heads: Sequence[int]) -> list[CrossingInterval]:
    """The crossing intervals of the tree (Definition 2), left to right."""
    crossed = sorted({d for pair in crossing_pairs(heads) for d in pair})
    spans = sorted((min(heads[d - 1], d), max(heads[d - 1], d), (heads[d - 1], d)) for d in crossed)
    intervals: list[CrossingInterval] = []
    group: list[Arc] = []
    left = right = -1
    for lo, hi, arc in spans:
        # Closed spans: touching at one vertex means a non-empty intersection.
        if group and lo <= right:
            group.append(arc)
            right = max(right, hi)
            continue
        if group:
            intervals.append(CrossingInterval(left, right, tuple(group)))
        group, left, right = [arc], lo, hi
    if group:
        intervals.append(CrossingInterval(left, right, tuple(group)))
    return intervals


def far_side_vertices(heads: Sequence[int]) -> set[int]:
    """Words with a child on the far side of their parent (Definition 3 (b)): ``v`` with
    parent ``p`` and child ``c`` such that ``p`` lies strictly between ``v`` and ``c``."""
    result: set[int] = set()
    for c, v in enumerate(heads, start=1):
        if v == 0:
            continue
        p = heads[v - 1]
        if c < p < v or v < p < c:
            result.add(v)
    return result


def _cover_exists(arcs: Sequence[Arc], budget: int) -> bool:
    """Whether at most ``budget`` vertices touch every arc (bounded-depth branching)."""
    if not arcs:
        return True
    if budget == 0:
        return False
    u, v = arcs[0]
    return any(_cover_exists([a for a in arcs if chosen not in a], budget - 1) for chosen in (u, v))


def _interval_fits(interval: CrossingInterval, far_side: set[int], k: int) -> bool:
    """Whether ``interval`` satisfies Definition 3 with at most ``k`` vertices."""
    forced = {v for v in far_side if interval.left <= v <= interval.right}
    if len(forced) > k:
        return False
    uncovered = [a for a in interval.arcs if a[0] not in forced and a[1] not in forced]
    return _cover_exists(uncovered, k - len(forced))


def is_k_crossing_interval(heads: Sequence[int], k: int) -> bool:
    """k-Crossing-Interval membership (Pitler & McDonald 2015, Definition 3)."""
    intervals = crossing_intervals(heads)
    far_side = far_side_vertices(heads) if intervals else set()
    return all(_interval_fits(interval, far_side, k) for interval in intervals)


def min_crossing_interval_k(heads: Sequence[int], max_k: int | None = None) -> int | None:
    """The least k for which the tree is k-Crossing-Interval (0 for projective trees), or
    ``None`` when it exceeds ``max_k`` (the search costs O(2^k) per interval, so cap it)."""
    intervals = crossing_intervals(heads)
    far_side = far_side_vertices(heads) if intervals else set()
    k = 0
    for interval in intervals:
        while not _interval_fits(interval, far_side, k):
            k += 1
            if max_k is not None and k > max_k:
                return None
    return k


def is_one_endpoint_crossing(heads: Sequence[int]) -> bool:
    """1-Endpoint-Crossing (Pitler, Kannan & Marcus 2013): for every arc, all the arcs that
    cross it share a common endpoint.  Root arcs included."""
    crossing: dict[int, list[int]] = {}
    for a, b in crossing_pairs(heads):
        crossing.setdefault(a, []).append(b)
        crossing.setdefault(b, []).append(a)
    for others in crossing.values():
        if len(others) < 2:
            continue
        first = others[0]
        common = {heads[first - 1], first}
        for d in others[1:]:
            common &= {heads[d - 1], d}
            if not common:
                return False
    return True
