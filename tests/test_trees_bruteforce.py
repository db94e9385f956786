"""Brute force over every tree of up to 7 words: the class inclusions of the seeds.

Single-root trees (exactly one word under the root 0, the UD case) are enumerated for every
n <= 7 (117,649 trees at n = 7); trees with several root children for n <= 6.  The checks:
projective == 0-CI == 1-Crossing-Interval (Pitler & McDonald §3.1), projective ⊆ 2-CI ⊆
1-Endpoint-Crossing, projective ⊆ planar ⊆ 2-planar ⊆ 3-planar (Gómez-Rodríguez & Nivre
§4), nonprojective_arcs empty iff projective, and, on smaller trees, min_planarity and the
crossing intervals against naive re-implementations of their definitions.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache

import pytest

from neuralparse.trees.core import arcs, arcs_cross, crossed_arcs, is_projective
from neuralparse.trees.core import nonprojective_arcs as nonproj
from neuralparse.trees.crossing import (
    crossing_intervals,
    is_one_endpoint_crossing,
    min_crossing_interval_k,
)
from neuralparse.trees.planarity import is_planar, min_planarity, plane_assignment
from tests.trees_strategies import all_trees


@dataclass(frozen=True)
class Classes:
    projective: bool
    no_nonprojective_arcs: bool
    planarity: int | None
    ci_k: int | None
    one_ec: bool


def classify(heads: tuple[int, ...]) -> Classes:
    return Classes(
        projective=is_projective(heads),
        no_nonprojective_arcs=not nonproj(heads),
        planarity=min_planarity(heads, max_k=3),
        ci_k=min_crossing_interval_k(heads, max_k=3),
        one_ec=is_one_endpoint_crossing(heads),
    )


@cache
def classified(n: int, single_root: bool) -> tuple[tuple[tuple[int, ...], Classes], ...]:
    return tuple((h, classify(h)) for h in all_trees(n, single_root=single_root))


CASES = [(n, True) for n in range(1, 8)] + [(n, False) for n in range(2, 7)]


@pytest.mark.parametrize(("n", "single_root"), [(3, True), (4, True), (3, False), (4, False)])
def test_enumeration_counts(n: int, single_root: bool) -> None:
    # Rooted labelled trees: n^(n-1) with one root child (Cayley), (n+1)^(n-1) otherwise.
    found = list(all_trees(n, single_root=single_root))
    assert len(found) == len(set(found)) == (n ** (n - 1) if single_root else (n + 1) ** (n - 1))


def test_seven_word_count() -> None:
    assert len(classified(7, True)) == 7**6


@pytest.mark.parametrize(("n", "single_root"), CASES)
def test_class_inclusions(n: int, single_root: bool) -> None:
    seen_strict = {"2ci<1ec": False, "proj<2ci": False, "planar<2planar": False}
    for heads, c in classified(n, single_root):
        # projective is exactly 0-CI and 1-CI (Pitler & McDonald §3.1)
        assert c.projective == (c.ci_k == 0), heads
        assert c.projective == (c.ci_k is not None and c.ci_k <= 1), heads
        # the §5.2 arc definition agrees with the crossing definition
        assert c.projective == c.no_nonprojective_arcs, heads
        # projective ⊆ 2-CI ⊆ 1-EC
        in_2ci = c.ci_k is not None and c.ci_k <= 2
        if c.projective:
            assert in_2ci and c.one_ec and c.planarity == 1, heads
        if in_2ci:
            assert c.one_ec, heads
        # projective ⊆ planar ⊆ 2-planar ⊆ 3-planar, each test by its own route: the
        # crossing sweep (planar), BFS 2-colouring (k = 2), backtracking (k = 3)
        if c.planarity is not None and c.planarity <= 2:
            assert plane_assignment(heads, 3) is not None, heads
        if c.planarity == 1:
            assert is_planar(heads) and plane_assignment(heads, 2) is not None, heads
        seen_strict["2ci<1ec"] |= c.one_ec and not in_2ci
        seen_strict["proj<2ci"] |= in_2ci and not c.projective
        seen_strict["planar<2planar"] |= c.planarity == 2
    if n >= 6:
        # The inclusions are strict on trees this large (so the tests above can fail).
        assert all(seen_strict.values()), seen_strict


def naive_min_planarity(heads: tuple[int, ...], max_k: int) -> int | None:
    """Try every assignment of k colours to the word-to-word arcs, k = 1, 2, ..."""
    word_arcs = arcs(heads, include_root=False)
    crossing = [
        (i, j)
        for (i, a), (j, b) in itertools.combinations(enumerate(word_arcs), 2)
        if arcs_cross(a, b)
    ]
    for k in range(1, max_k + 1):
        for colours in itertools.product(range(k), repeat=len(word_arcs)):
            if all(colours[i] != colours[j] for i, j in crossing):
                return k
    return None


@pytest.mark.parametrize(("n", "single_root"), [(7, True), (6, False)])
def test_min_planarity_matches_exhaustive_colouring(n: int, single_root: bool) -> None:
    for heads, c in classified(n, single_root):
        if c.planarity != 1:  # planar trees: both trivially 1
            assert c.planarity == naive_min_planarity(heads, 3), heads


def naive_crossing_intervals(heads: tuple[int, ...]) -> list[tuple[int, int, frozenset]]:
    """Definition 2 literally: auxiliary graph over crossed arcs, edges between arcs whose
    closed spans intersect, connected components by repeated merging."""
    crossed = [(heads[d - 1], d) for d in sorted(crossed_arcs(heads))]
    groups = [{arc} for arc in crossed]
    merged = True
    while merged:
        merged = False
        for g1, g2 in itertools.combinations(groups, 2):
            if any(min(a) <= max(b) and min(b) <= max(a) for a, b in itertools.product(g1, g2)):
                g1 |= g2
                groups.remove(g2)
                merged = True
                break
    return sorted((min(min(a) for a in g), max(max(a) for a in g), frozenset(g)) for g in groups)


@pytest.mark.parametrize(("n", "single_root"), [(6, True), (5, False)])
def test_crossing_intervals_match_definition(n: int, single_root: bool) -> None:
    for heads, c in classified(n, single_root):
        if c.projective:
            assert crossing_intervals(heads) == []
            continue
        found = [(i.left, i.right, frozenset(i.arcs)) for i in crossing_intervals(heads)]
        assert found == naive_crossing_intervals(heads), heads


def naive_is_k_crossing_interval(heads: tuple[int, ...], k: int) -> bool:
    """Definition 3 by trying every vertex set of size <= k inside each interval."""
    for left, right, crossed in naive_crossing_intervals(heads):
        vertices = range(left, right + 1)
        # (b): v has a child c with v's parent strictly inside the span of the arc v -> c
        far_side = {
            v
            for v in vertices
            if v > 0
            and any(
                min(v, c) < heads[v - 1] < max(v, c)
                for c in range(1, len(heads) + 1)
                if heads[c - 1] == v
            )
        }
        if not any(
            far_side <= set(chosen) and all(set(arc) & set(chosen) for arc in crossed)
            for size in range(k + 1)
            for chosen in itertools.combinations(vertices, size)
        ):
            return False
    return True


def naive_one_endpoint_crossing(heads: tuple[int, ...]) -> bool:
    all_arcs = arcs(heads)
    for e in all_arcs:
        crossing = [set(f) for f in all_arcs if arcs_cross(e, f)]
        if crossing and not set.intersection(*crossing):
            return False
    return True


@pytest.mark.parametrize(("n", "single_root"), [(6, True), (5, False)])
def test_crossing_classes_match_definitions(n: int, single_root: bool) -> None:
    for heads, c in classified(n, single_root):
        if c.projective:
            continue
        assert c.one_ec == naive_one_endpoint_crossing(heads), heads
        for k in (1, 2, 3):
            in_k = c.ci_k is not None and c.ci_k <= k
            assert in_k == naive_is_k_crossing_interval(heads, k), (heads, k)
