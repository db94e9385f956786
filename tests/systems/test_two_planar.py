"""The 2-planar system (Gómez-Rodríguez & Nivre 2013, §5.1): Figure 6 step by step on the
reference and on the engine, exhaustive soundness / completeness / dead-end freedom on small
sentences, random walks that agree with the reference, the batched oracle on random trees and
on every 2-planar training tree of the shared treebanks."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from neuralparse.errors import TreeError
from neuralparse.systems import replay
from neuralparse.systems.planar import Multiplanar, TwoPlanar
from neuralparse.systems.planar import reference as ref
from neuralparse.trees.planarity import min_planarity
from tests.conftest import shared_treebanks
from tests.systems.helpers import buffer_of, stack_of
from tests.systems.test_planar import (
    LABELS,
    check_exhaustive,
    check_oracle_batch,
    check_treebank,
    labels_for,
    lockstep_walks,
    single_rooted_trees,
)
from tests.trees_strategies import trees

# Figure 6: the 2-planar derivation of Figure 1's tree (word 1, the PDT root token, is the
# one word left headless, hence our root).  Rows: transition, active stack, inactive stack,
# first buffer word (10 = empty), arc added (head, dependent) or None.
R = range  # shorthand for the figure's [1, ..., m]
FIGURE_6 = [
    ("SHIFT", [1], [1], 2, None),
    ("SHIFT", [1, 2], [1, 2], 3, None),
    ("RIGHT-ARC", [1, 2], [1, 2], 3, (2, 3)),
    ("SHIFT", [1, 2, 3], [1, 2, 3], 4, None),
    ("REDUCE", [1, 2], [1, 2, 3], 4, None),
    ("REDUCE", [1], [1, 2, 3], 4, None),
    ("RIGHT-ARC", [1], [1, 2, 3], 4, (1, 4)),
    ("SHIFT", [1, 4], list(R(1, 5)), 5, None),
    ("SHIFT", [1, 4, 5], list(R(1, 6)), 6, None),
    ("LEFT-ARC", [1, 4, 5], list(R(1, 6)), 6, (6, 5)),
    ("REDUCE", [1, 4], list(R(1, 6)), 6, None),
    ("RIGHT-ARC", [1, 4], list(R(1, 6)), 6, (4, 6)),
    ("SWITCH", list(R(1, 6)), [1, 4], 6, None),
    ("REDUCE", list(R(1, 5)), [1, 4], 6, None),
    ("REDUCE", [1, 2, 3], [1, 4], 6, None),
    ("REDUCE", [1, 2], [1, 4], 6, None),
    ("LEFT-ARC", [1, 2], [1, 4], 6, (6, 2)),
    ("SHIFT", [1, 2, 6], [1, 4, 6], 7, None),
    ("SWITCH", [1, 4, 6], [1, 2, 6], 7, None),
    ("REDUCE", [1, 4], [1, 2, 6], 7, None),
    ("RIGHT-ARC", [1, 4], [1, 2, 6], 7, (4, 7)),
    # From here the figure writes the inactive stack as [1, ..., m]; it is [1, 2, 6, ...]
    # (3, 4 and 5 were reduced from it at front 6, and nothing can push them back).
    ("SHIFT", [1, 4, 7], [1, 2, 6, 7], 8, None),
    ("RIGHT-ARC", [1, 4, 7], [1, 2, 6, 7], 8, (7, 8)),
    ("SHIFT", [1, 4, 7, 8], [1, 2, 6, 7, 8], 9, None),
    ("REDUCE", [1, 4, 7], [1, 2, 6, 7, 8], 9, None),
    ("REDUCE", [1, 4], [1, 2, 6, 7, 8], 9, None),
    ("REDUCE", [1], [1, 2, 6, 7, 8], 9, None),
    ("RIGHT-ARC", [1], [1, 2, 6, 7, 8], 9, (1, 9)),
    ("SHIFT", [1, 9], [1, 2, 6, 7, 8, 9], 10, None),
]
FIGURE_1_HEADS = [0, 6, 2, 1, 6, 4, 4, 7, 1]


def test_figure_6_step_by_step_on_the_reference_and_the_engine() -> None:
    system = TwoPlanar(LABELS)
    config = ref.Configuration.initial(9, 2)
    state = system.initial([9])
    for transition, active, inactive, front, arc in FIGURE_6:
        label = None if arc is None else ("root" if arc[0] == 0 else "dep")
        action = system.encode(transition, label)
        assert bool(system.legal(state)[0, action]), transition
        assert config.is_legal(transition)
        before = config.heads
        config = config.apply(transition)
        system.apply(state, torch.tensor([action]))
        assert (list(config.stacks[0]), list(config.stacks[1]), config.front) == (
            active,
            inactive,
            front,
        )
        assert stack_of(state, 0, "stack") == tuple(active)
        assert stack_of(state, 0, "stack1") == tuple(inactive)
        assert buffer_of(state, 0) == tuple(range(front, 10))
        new_arcs = [(h, d) for d, h in enumerate(config.heads) if h != before[d]]
        assert new_arcs == ([] if arc is None else [arc])
    assert config.terminal and config.tree() == FIGURE_1_HEADS
    heads, labels = system.heads_and_labels(state)
    assert heads[0, 1:].tolist() == FIGURE_1_HEADS
    assert labels[0, 1].item() == LABELS.index("root")  # the implicit root arc
    # The static oracle derives the same tree (with its own plane choices).
    assert ref.run(9, 2, ref.oracle(FIGURE_1_HEADS, 2)).tree() == FIGURE_1_HEADS
    actions = system.oracle(FIGURE_1_HEADS, labels_for(FIGURE_1_HEADS))
    _, ok = replay(system, [actions], [9])
    assert ok == [True]


def test_two_planar_class() -> None:
    system = TwoPlanar()
    assert system.in_class([3, 4, 0, 3])  # 3 -> 1 and 4 -> 2 cross: 2-planar, not planar
    # 4 -> 1, 5 -> 2, 6 -> 3 cross pairwise: an odd cycle of the crossings graph (§4.1).
    three_planar = [4, 5, 6, 0, 4, 4]
    assert min_planarity(three_planar) == 3
    assert not system.in_class(three_planar)
    with pytest.raises(TreeError):
        ref.oracle(three_planar, 2)
    assert not system.in_class([0, 1, 0])


@pytest.mark.parametrize("n", range(1, 5))
def test_two_planar_exhaustively_sound_complete_and_dead_end_free(n: int) -> None:
    check_exhaustive(n, 2)


def test_two_planar_oracle_complete_on_every_six_word_tree() -> None:
    reproduced = 0
    for heads in single_rooted_trees(6):
        if ref.in_class(heads, 2):
            assert ref.run(6, 2, ref.oracle(heads, 2)).tree() == heads
            reproduced += 1
    assert reproduced == 7452  # all 7776 single-rooted trees but the 324 3-planar ones


@given(batch=st.lists(trees(max_words=15), min_size=1, max_size=24))
def test_two_planar_engine_oracle_is_complete(batch: list[list[int]]) -> None:
    system = TwoPlanar(LABELS)
    in_class = [h for h in batch if system.in_class(h)]
    for h in batch:
        assert system.in_class(h) == (min_planarity(h, max_k=2) is not None)
    if in_class:
        for names in check_oracle_batch(system, in_class):
            assert "SWITCH SWITCH" not in " ".join(names)


@given(
    lengths=st.lists(st.integers(min_value=0, max_value=15), min_size=1, max_size=16),
    seed=st.integers(min_value=0, max_value=2**31),
)
def test_two_planar_random_walks_agree_with_reference(lengths: list[int], seed: int) -> None:
    system = TwoPlanar(LABELS)
    for walk in lockstep_walks(system, lengths, seed):
        # §5.1.3: never two SWITCHes in a row, so the walk length stays linear.
        assert all(a != "SWITCH" or b != "SWITCH" for a, b in itertools.pairwise(walk))


class ThreePlanar(Multiplanar):
    """The k-stack generalisation (§5) with k = 3: SWITCH cycles through three stacks."""

    name = "three_planar"
    k = 3
    transitions = TwoPlanar.transitions
    arc_transitions = TwoPlanar.arc_transitions


def test_three_stacks_generalisation() -> None:
    system = ThreePlanar(LABELS)
    three_planar = [h for h in single_rooted_trees(6) if not ref.in_class(h, 2)]
    assert len(three_planar) == 324 and all(system.in_class(h) for h in three_planar)
    check_oracle_batch(system, three_planar)
    check_exhaustive(3, 3)
    for seed in range(3):
        lockstep_walks(system, [seed, 4, 9, 12, 12, 12], seed)


@pytest.mark.treebank
@pytest.mark.parametrize("treebank", shared_treebanks(), ids=lambda p: p.name)
def test_two_planar_oracle_reproduces_every_2_planar_training_tree(treebank: Path) -> None:
    stats = check_treebank(TwoPlanar(), treebank / "train.conllu")
    # Linear (§5.1.3); 3.92n is the largest ratio measured on the shared treebanks.
    assert stats["max_per_word"] < 4
