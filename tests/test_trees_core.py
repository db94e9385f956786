"""neuralparse.trees.core: hand-made trees from the seeds and hypothesis properties."""

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
    children,
    crossed_arcs,
    crossing_pairs,
    dominance,
    gap_degree,
    gaps,
    is_projective,
    is_well_nested,
    nonprojective_arcs,
    projective_order,
    projective_positions,
    yields,
)
from tests.trees_strategies import multi_root_trees, projective_trees, trees

# Nivre (2009) Figure 1: A1 hearing2 is3 scheduled4 on5 the6 issue7 today8 .9
NIVRE_FIG1 = [2, 3, 0, 3, 2, 7, 5, 4, 3]


def naive_ancestors(heads: list[int], v: int) -> list[int]:
    result = []
    while v != 0:
        v = heads[v - 1]
        result.append(v)
    return result


def test_arcs_and_children() -> None:
    assert arcs([2, 0, 2]) == [(2, 1), (0, 2), (2, 3)]
    assert arcs([2, 0, 2], include_root=False) == [(2, 1), (2, 3)]
    assert children([2, 0, 2]) == [[2], [], [1, 3], []]


def test_nivre_figure1_projective_order() -> None:
    # §3.2: A1 < hearing2 < on5 < the6 < issue7 < is3 < scheduled4 < today8 < .9
    assert projective_order(NIVRE_FIG1) == [1, 2, 5, 6, 7, 3, 4, 8, 9]
    positions = projective_positions(NIVRE_FIG1)
    assert positions[0] == 0
    assert positions[5] < positions[3]  # on5 precedes is3: the swap oracle swaps them
    assert sorted(positions[1:]) == list(range(1, 10))


def test_nivre_figure1_nonprojective_parts() -> None:
    assert not is_projective(NIVRE_FIG1)
    # hearing2 -> on5 spans is3/scheduled4, scheduled4 -> today8 spans on5..issue7
    assert nonprojective_arcs(NIVRE_FIG1) == {5, 8}
    # 0->is3 and is3->.9 cross hearing2->on5 (0<2<3<5, 2<3<5<9)
    assert crossed_arcs(NIVRE_FIG1) == {3, 5, 8, 9}
    assert crossed_arcs(NIVRE_FIG1, include_root=False) == {5, 8, 9}
    # the subtrees of hearing (1,2,5,6,7) and scheduled (4,8) interleave: 2 < 4 < 5 < 8
    assert not is_well_nested(NIVRE_FIG1)
    assert gap_degree(NIVRE_FIG1) == 1


def test_arcs_cross() -> None:
    assert arcs_cross((1, 3), (2, 4))
    assert arcs_cross((3, 1), (4, 2))
    assert not arcs_cross((1, 3), (3, 5))  # shared endpoint
    assert not arcs_cross((1, 4), (1, 3))
    assert not arcs_cross((1, 5), (2, 4))  # nested
    assert not arcs_cross((1, 2), (3, 4))  # disjoint


def test_projective_examples() -> None:
    assert is_projective([])
    assert is_projective([0])
    assert is_projective([2, 0, 2])
    # root arc 0->2 crosses 3->1 : projectivity includes root arcs
    assert not is_projective([3, 0, 2])
    assert nonprojective_arcs([3, 0, 2]) == {1}
    assert crossed_arcs([3, 0, 2]) == {1, 2}


def test_gap_degree_and_yields() -> None:
    heads = [3, 0, 2]  # word 3 has projection {1, 3}: one gap
    assert yields(heads)[3] == [1, 3]
    assert yields(heads)[0] == [0, 1, 2, 3]
    assert gap_degree(heads) == 1
    assert gap_degree([0]) == 0


@pytest.mark.parametrize(
    ("heads", "message"),
    [
        ([2, 1], "cycle through words [1, 2]"),
        ([1], "word 1 is its own head"),
        ([0, 5], "head of word 2 is 5, outside 0..2"),
        ([0, -1], "head of word 2 is -1"),
        ([0, "1"], "not an integer"),
        ([0, True], "not an integer"),
        ([0, 3, 4, 2], "cycle through words [2, 3, 4]"),
    ],
)
def test_check_tree_errors(heads: list[object], message: str) -> None:
    with pytest.raises(TreeError, match=message.replace("[", r"\[").replace("]", r"\]")):
        check_tree(heads)  # type: ignore[arg-type]


def test_check_tree_single_root_and_location() -> None:
    check_tree([0, 0])
    with pytest.raises(TreeError, match=r"found words \[1, 2\]"):
        check_tree([0, 0], single_root=True)
    with pytest.raises(TreeError, match="found no word"):
        check_tree([], single_root=True)
    with pytest.raises(TreeError) as info:
        check_tree([2, 1], source="x.conllu", line=7, sent_id="s3")
    assert str(info.value).startswith("x.conllu, line 7, sentence s3: ")


@given(trees(max_words=15))
def test_strategy_trees_are_single_rooted(heads: list[int]) -> None:
    check_tree(heads, single_root=True)


@given(multi_root_trees(max_words=15))
def test_check_tree_accepts_and_detects_cycles(heads: list[int]) -> None:
    check_tree(heads)
    # Re-attach an ancestor below one of its descendants: always a cycle.
    for v in range(1, len(heads) + 1):
        ancestors = [a for a in naive_ancestors(heads, v) if a != 0]
        if ancestors:
            broken = list(heads)
            broken[ancestors[-1] - 1] = v
            with pytest.raises(TreeError, match="cycle"):
                check_tree(broken)
            break


@given(multi_root_trees(max_words=12))
def test_dominance_matches_ancestor_walk(heads: list[int]) -> None:
    dom = dominance(heads)
    for v in range(0, len(heads) + 1):
        ancestors = {v, *naive_ancestors(heads, v)} if v else {0}
        for a in range(0, len(heads) + 1):
            assert dom.dominates(a, v) == (a in ancestors)


@given(multi_root_trees(max_words=12))
def test_crossing_pairs_match_all_pairs(heads: list[int]) -> None:
    all_arcs = arcs(heads)
    expected = {
        (min(a[1], b[1]), max(a[1], b[1]))
        for a, b in itertools.combinations(all_arcs, 2)
        if arcs_cross(a, b)
    }
    assert set(crossing_pairs(heads)) == expected
    assert len(crossing_pairs(heads)) == len(expected)
    assert crossed_arcs(heads) == {d for pair in expected for d in pair}


@given(multi_root_trees(max_words=12))
def test_projective_definitions_agree(heads: list[int]) -> None:
    projective = is_projective(heads)
    assert projective == (not crossing_pairs(heads))
    assert projective == (not nonprojective_arcs(heads))
    assert projective == (gap_degree(heads) == 0)  # every projection contiguous


@given(projective_trees(max_words=15))
def test_projective_strategy_and_identity_order(heads: list[int]) -> None:
    check_tree(heads, single_root=True)
    assert is_projective(heads)
    assert is_well_nested(heads)
    # A projective tree is already in projective order (Nivre 2009 §3.2).
    assert projective_order(heads) == list(range(1, len(heads) + 1))


@given(multi_root_trees(max_words=12))
def test_projective_order_makes_tree_projective(heads: list[int]) -> None:
    order = projective_order(heads)
    assert sorted(order) == list(range(1, len(heads) + 1))
    positions = projective_positions(heads)
    # Renumber the words by their projective position: the tree becomes projective.
    reordered = [0] * len(heads)
    for word, head in enumerate(heads, start=1):
        reordered[positions[word] - 1] = positions[head]
    assert is_projective(reordered)


def naive_well_nested(heads: list[int]) -> bool:
    """Kuhlmann & Nivre (2006): no two disjoint projections interleave."""
    projections = yields(heads)
    n = len(heads)
    for u, v in itertools.combinations(range(1, n + 1), 2):
        a, b = set(projections[u]), set(projections[v])
        if a & b:
            continue
        labels = [("a" if p in a else "b") for p in range(1, n + 1) if p in a or p in b]
        runs = [k for k, _ in itertools.groupby(labels)]
        if len(runs) >= 4:  # a..b..a..b (or b..a..b..a) as a subsequence
            return False
    return True


@given(multi_root_trees(max_words=10))
def test_well_nested_matches_projection_definition(heads: list[int]) -> None:
    assert is_well_nested(heads) == naive_well_nested(heads)


@given(st.lists(st.integers(min_value=1, max_value=30), unique=True, max_size=12))
def test_gaps_of_projection(positions: list[int]) -> None:
    ordered = sorted(positions)
    expected = sum(1 for a, b in itertools.pairwise(ordered) if b > a + 1)
    assert gaps(ordered) == expected
