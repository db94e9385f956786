"""Planarity, crossing intervals, 1-Endpoint-Crossing and word removal on the seeds' trees."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from neuralparse.errors import TreeError
from neuralparse.trees.core import (
    arcs,
    arcs_cross,
    check_tree,
    crossed_arcs,
    dominance,
    gap_degree,
    is_projective,
    is_well_nested,
)
from neuralparse.trees.crossing import (
    CrossingInterval,
    crossing_intervals,
    far_side_vertices,
    is_k_crossing_interval,
    is_one_endpoint_crossing,
    min_crossing_interval_k,
)
from neuralparse.trees.planarity import (
    crossings_graph,
    is_planar,
    min_planarity,
    plane_assignment,
)
from neuralparse.trees.punctuation import remove_words
from tests.trees_strategies import multi_root_trees, trees

# Gómez-Rodríguez & Nivre (2013) Example 1, G1 (Figure 1): vertex 1 is the PDT's ROOT token,
# which we keep as word 1 hanging from our artificial root 0; arcs
# (1,4) (1,9) (2,3) (4,6) (4,7) (6,2) (6,5) (7,8).
GRN_G1 = [0, 6, 2, 1, 6, 4, 4, 7, 1]
# The same graph with the PDT ROOT *as* our vertex 0 (several root children).
GRN_G1_ROOTED = [5, 1, 0, 5, 3, 3, 6, 0]
# Example 1, G2 (Figure 2): satisfies every constraint, planar and projective.
GRN_G2 = [2, 3, 0, 5, 3, 5, 8, 6, 3]

# Pitler & McDonald (2015) Figure 1a: root0 Who1 do2 you3 think4 came5 to6 DC7 where8 a9
# parade10 was11 held12 for13 Sam14.  Crossed arcs (Figure 1b): (root,think) (came,Who)
# (DC,held) (held,where) (parade,for).
PM_FIG1 = [5, 4, 4, 0, 4, 5, 6, 12, 10, 12, 12, 7, 10, 13]
# Figure 2 with n = 3: root0 b1 a1 b1 a2 b2 a3 b3 a (positions 1..8); a_i -> a, b_i -> b.
PM_FIG2 = [0, 8, 1, 8, 1, 8, 1, 0]
# Figure 3, English gloss: that1 we2 Hans3 the4 house5 helped6 paint7.
PM_FIG3 = [0, 6, 6, 5, 7, 1, 6]


def test_grn_example1_g1_nonplanar_2planar() -> None:
    for heads in (GRN_G1, GRN_G1_ROOTED):
        check_tree(heads)
        assert not is_planar(heads)
        assert min_planarity(heads) == 2
        assert not is_projective(heads)
    # (6,2) crosses (1,4) and (4,7): 1 < 2 < 4 < 6 and 2 < 4 < 6 < 7
    graph = crossings_graph(GRN_G1)
    assert {d: set(ns) for d, ns in graph.items() if ns} == {2: {4, 7}, 4: {2}, 7: {2}}
    planes = plane_assignment(GRN_G1)
    assert planes is not None and planes[2] != planes[7] and planes[2] != planes[4]
    assert set(planes) == {2, 3, 4, 5, 6, 7, 8, 9}  # word-to-word arcs only
    assert plane_assignment(GRN_G1, k=1) is None


def test_grn_example1_g2_planar() -> None:
    check_tree(GRN_G2, single_root=True)
    assert is_projective(GRN_G2)
    assert is_planar(GRN_G2)
    assert min_planarity(GRN_G2) == 1
    assert plane_assignment(GRN_G2, k=1) == dict.fromkeys([1, 2, 4, 5, 6, 7, 8, 9], 0)


def test_planarity_ignores_root_arcs_by_default() -> None:
    heads = [3, 0, 2]  # only the root arc 0->2 crosses 3->1
    assert not is_projective(heads)
    assert is_planar(heads)
    assert not is_planar(heads, include_root=True)
    assert min_planarity(heads, include_root=True) == 2
    assert plane_assignment(heads, include_root=True) == {1: 0, 2: 1, 3: 0}


def test_three_and_four_planar_trees() -> None:
    # Three pairwise-crossing word arcs: 4->1, 5->2, 6->3 (a triangle in the crossings graph).
    triangle = [4, 5, 6, 7, 7, 7, 0]
    assert min_planarity(triangle) == 3
    assert min_planarity(triangle, max_k=2) is None
    planes = plane_assignment(triangle, k=3)
    assert planes is not None and len({planes[1], planes[2], planes[3]}) == 3
    # Four pairwise-crossing arcs need four planes.
    k4 = [5, 6, 7, 8, 9, 9, 9, 9, 0]
    assert min_planarity(k4) is None
    assert min_planarity(k4, max_k=4) == 4


def test_pitler_mcdonald_figure1_intervals() -> None:
    check_tree(PM_FIG1, single_root=True)
    assert crossing_intervals(PM_FIG1) == [
        CrossingInterval(0, 5, ((0, 4), (5, 1))),
        CrossingInterval(7, 13, ((7, 12), (12, 8), (10, 13))),
    ]
    # came5 has Who1 beyond its parent think4; parade10 has for13 beyond held12.
    assert far_side_vertices(PM_FIG1) == {5, 10}
    # "think and came ... parade and held": two vertices per interval suffice, one does not.
    assert not is_k_crossing_interval(PM_FIG1, 1)
    assert is_k_crossing_interval(PM_FIG1, 2)
    assert min_crossing_interval_k(PM_FIG1) == 2
    assert is_one_endpoint_crossing(PM_FIG1)


def test_pitler_mcdonald_figure2_ill_nested_2ci() -> None:
    assert is_k_crossing_interval(PM_FIG2, 2)
    assert not is_k_crossing_interval(PM_FIG2, 1)
    assert not is_well_nested(PM_FIG2)
    assert gap_degree(PM_FIG2) == 3  # block degree n + 1 = 4
    assert far_side_vertices(PM_FIG2) == set()
    assert is_one_endpoint_crossing(PM_FIG2)


def test_pitler_mcdonald_figure3_helped_paint() -> None:
    assert crossing_intervals(PM_FIG3) == [
        CrossingInterval(1, 7, ((1, 6), (6, 2), (6, 3), (7, 5))),
    ]
    assert far_side_vertices(PM_FIG3) == {7}  # paint7 has house5 beyond helped6
    assert min_crossing_interval_k(PM_FIG3) == 2
    assert is_one_endpoint_crossing(PM_FIG3)


def test_seed_notes_trees() -> None:
    # Design note 03 (items 1, 2): [3,5,5,1,0] is 2-CI; [3,5,2,1,0] is not (words 1 and 3
    # both have a child beyond their parent, and 5->2 needs a third vertex).
    assert is_k_crossing_interval([3, 5, 5, 1, 0], 2)
    assert far_side_vertices([3, 5, 2, 1, 0]) == {1, 3}
    assert not is_k_crossing_interval([3, 5, 2, 1, 0], 2)
    assert min_crossing_interval_k([3, 5, 2, 1, 0]) == 3
    assert min_crossing_interval_k([3, 5, 2, 1, 0], max_k=2) is None
    for heads in ([3, 5, 4, 5, 0, 1], [3, 6, 4, 6, 1, 0]):
        assert is_k_crossing_interval(heads, 2)


def test_one_endpoint_crossing_counterexample() -> None:
    # Arc 1->4 is crossed by 2->5 and by 3->6, which share no endpoint.
    heads = [0, 1, 1, 1, 2, 3]
    assert {(1, 4), (2, 5), (3, 6)} <= set(arcs(heads))
    assert not is_one_endpoint_crossing(heads)
    assert not is_k_crossing_interval(heads, 2)


def test_remove_words_reattaches_to_nearest_kept_ancestor() -> None:
    # 1 <- 2 (punct) <- 3 <- 0 ; 4 (punct) <- 3
    heads = [2, 3, 0, 3]
    new_heads, kept = remove_words(heads, [False, True, False, True])
    assert kept == [1, 3]
    assert new_heads == [2, 0]
    assert remove_words(heads, [False] * 4) == (heads, [1, 2, 3, 4])
    assert remove_words(heads, [True] * 4) == ([], [])


def test_remove_root_word_gives_several_root_children() -> None:
    # The root word 2 is removed: its dependents 1 and 3 climb to the root 0.
    assert remove_words([2, 0, 2], [False, True, False]) == ([0, 0], [1, 3])


def test_remove_words_mask_length() -> None:
    with pytest.raises(TreeError, match="drop mask"):
        remove_words([0, 1], [True])


@given(st.data(), multi_root_trees(max_words=12))
def test_remove_words_keeps_dominance(data: st.DataObject, heads: list[int]) -> None:
    drop = data.draw(st.lists(st.booleans(), min_size=len(heads), max_size=len(heads)))
    new_heads, kept = remove_words(heads, drop)
    check_tree(new_heads)
    assert kept == [d for d in range(1, len(heads) + 1) if not drop[d - 1]]
    old, new = dominance(heads), dominance(new_heads)
    for (i, a), (j, b) in itertools.product(enumerate(kept, 1), repeat=2):
        assert new.dominates(i, j) == old.dominates(a, b)


def valid_colouring(heads: list[int], planes: dict[int, int], k: int) -> bool:
    word_arcs = arcs(heads, include_root=False)
    return (
        set(planes) == {d for _, d in word_arcs}
        and all(
            not arcs_cross(a, b) or planes[a[1]] != planes[b[1]]
            for a, b in itertools.combinations(word_arcs, 2)
        )
        and all(0 <= p < k for p in planes.values())
    )


@given(multi_root_trees(max_words=14), st.integers(min_value=1, max_value=4))
def test_plane_assignment_consistent_with_min_planarity(heads: list[int], k: int) -> None:
    planes = plane_assignment(heads, k)
    minimal = min_planarity(heads, max_k=4)
    if minimal is not None and minimal <= k:
        assert planes is not None and valid_colouring(heads, planes, k)
    else:
        assert planes is None
    assert is_planar(heads) == (minimal == 1)


@given(trees(max_words=14))
def test_crossing_intervals_are_disjoint_and_cover_crossed_arcs(heads: list[int]) -> None:
    intervals = crossing_intervals(heads)
    for left, right in itertools.pairwise(intervals):
        assert left.right < right.left
    covered = [d for interval in intervals for _, d in interval.arcs]
    assert sorted(covered) == sorted(crossed_arcs(heads))
    for interval in intervals:
        assert interval.left == min(min(a) for a in interval.arcs)
        assert interval.right == max(max(a) for a in interval.arcs)
    # Every vertex with a child beyond its parent lies in a crossing interval.
    for v in far_side_vertices(heads):
        assert any(i.left <= v <= i.right for i in intervals)
    k = min_crossing_interval_k(heads)
    assert k is not None
    assert is_k_crossing_interval(heads, k)
    assert k == 0 or not is_k_crossing_interval(heads, k - 1)
