"""Arc-standard, arc-eager, arc-hybrid and swap beyond the contract every system meets
(``tests/systems/test_contract.py``): oracle completeness and exact transition counts on
random trees (hypothesis), the lazy oracle's components, Nivre (2009) Figure 3 step by step,
and their features."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from neuralparse.systems import (
    get_system,
    replay,
    run_oracle,
)
from neuralparse.systems.swap import maximal_projective_components
from neuralparse.trees.core import is_projective
from tests.systems.helpers import buffer_of, stack_of
from tests.systems.test_contract import labels_for, tree_of
from tests.trees_strategies import projective_trees, trees

PROJECTIVE = ("arc_standard", "arc_eager", "arc_hybrid")
LABELS = ("root", "dep", "obj")
ALL = ["arc_eager", "arc_hybrid", "arc_standard", "swap"]


def transitions_of(system, actions: list[int]) -> list[str]:
    return [system.decode(a)[0] for a in actions]


@pytest.mark.parametrize("name", PROJECTIVE)
@given(batch=st.lists(projective_trees(min_words=1, max_words=15), min_size=1, max_size=16))
def test_projective_oracles_are_complete(name: str, batch: list[list[int]]) -> None:
    system = get_system(name, LABELS)
    result = run_oracle(system, [(h, labels_for(h)) for h in batch])
    assert all(result.reproduced)
    for heads, actions in zip(batch, result.actions, strict=True):
        n = len(heads)
        if name == "arc_eager":
            assert n <= len(actions) <= 2 * n
        else:
            assert len(actions) == 2 * n
    # Replaying the oracle's sequences on a fresh engine rebuilds the same trees.
    state, ok = replay(system, result.actions, [len(h) for h in batch])
    assert all(ok) and bool(system.terminal(state).all())
    heads_t, _ = system.heads_and_labels(state)
    for b, heads in enumerate(batch):
        assert tree_of(heads_t[b].tolist(), len(heads)) == heads


@pytest.mark.parametrize("name", PROJECTIVE)
@given(heads=trees(min_words=3, max_words=12))
def test_projective_oracles_reject_nonprojective_trees(name: str, heads: list[int]) -> None:
    system = get_system(name, LABELS)
    result = run_oracle(system, [(heads, labels_for(heads))])
    assert result.reproduced[0] == system.in_class(heads) == is_projective(heads)


@given(batch=st.lists(trees(min_words=1, max_words=15), min_size=1, max_size=16))
def test_swap_oracles_are_complete_and_lazy_swaps_less(batch: list[list[int]]) -> None:
    swaps = {}
    for kind in ("eager", "lazy"):
        system = get_system("swap", LABELS, oracle=kind)
        result = run_oracle(system, [(h, labels_for(h)) for h in batch])
        assert all(result.reproduced)
        swaps[kind] = []
        for heads, actions in zip(batch, result.actions, strict=True):
            k = transitions_of(system, actions).count("SWAP")
            assert len(actions) == 2 * len(heads) + 2 * k
            if is_projective(heads):
                assert k == 0
            swaps[kind].append(k)
    assert all(lazy <= eager for lazy, eager in zip(swaps["lazy"], swaps["eager"], strict=True))


def test_maximal_projective_components() -> None:
    # Nivre 2009 Figure 1: the no-swap oracle gets stuck with [0, hearing2, is3, scheduled4,
    # on5, today8, .9] on the stack: {A hearing} {is} {scheduled} {on the issue} {today} {.}
    heads = [2, 3, 0, 3, 2, 7, 5, 4, 3]
    assert maximal_projective_components(heads) == [0, 2, 2, 3, 4, 5, 5, 5, 8, 9]
    assert maximal_projective_components([2, 0, 2]) == [0, 0, 0, 0]


FIGURE1_HEADS = [2, 3, 0, 3, 2, 7, 5, 4, 3]
FIGURE1_LABELS = ["DET", "SBJ", "ROOT", "VG", "NMOD", "DET", "PC", "ADV", "P"]
# Nivre 2009 Figure 3: (transition, label, shown stack suffix, whether the figure elides the
# bottom with "...", buffer front or None, added arc (head, label, dep) or None).
FIGURE3 = [
    ("SHIFT", None, (0, 1), False, 2, None),
    ("SHIFT", None, (0, 1, 2), False, 3, None),
    ("LEFT-ARC", "DET", (0, 2), False, 3, (2, "DET", 1)),
    ("SHIFT", None, (0, 2, 3), False, 4, None),
    ("SHIFT", None, (3, 4), True, 5, None),
    ("SHIFT", None, (4, 5), True, 6, None),
    ("SWAP", None, (3, 5), True, 4, None),
    ("SWAP", None, (0, 2, 5), False, 3, None),
    ("SHIFT", None, (5, 3), True, 4, None),
    ("SHIFT", None, (3, 4), True, 6, None),
    ("SHIFT", None, (4, 6), True, 7, None),
    ("SWAP", None, (3, 6), True, 4, None),
    ("SWAP", None, (5, 6), True, 3, None),
    ("SHIFT", None, (6, 3), True, 4, None),
    ("SHIFT", None, (3, 4), True, 7, None),
    ("SHIFT", None, (4, 7), True, 8, None),
    ("SWAP", None, (3, 7), True, 4, None),
    ("SWAP", None, (6, 7), True, 3, None),
    ("LEFT-ARC", "DET", (5, 7), True, 3, (7, "DET", 6)),
    ("RIGHT-ARC", "PC", (0, 2, 5), False, 3, (5, "PC", 7)),
    ("RIGHT-ARC", "NMOD", (0, 2), False, 3, (2, "NMOD", 5)),
    ("SHIFT", None, (2, 3), True, 4, None),
    ("LEFT-ARC", "SBJ", (0, 3), False, 4, (3, "SBJ", 2)),
    ("SHIFT", None, (0, 3, 4), False, 8, None),
    ("SHIFT", None, (4, 8), True, 9, None),
    ("RIGHT-ARC", "ADV", (0, 3, 4), False, 9, (4, "ADV", 8)),
    ("RIGHT-ARC", "VG", (0, 3), False, 9, (3, "VG", 4)),
    ("SHIFT", None, (0, 3, 9), False, None, None),
    ("RIGHT-ARC", "P", (0, 3), False, None, (3, "P", 9)),
    ("RIGHT-ARC", "ROOT", (0,), False, None, (0, "ROOT", 3)),
]


def test_nivre_2009_figure_3_step_by_step() -> None:
    """The eager oracle of Figure 4 derives Figure 1 exactly as Figure 3 shows: 30
    transitions, 3 pairs of SWAPs, with the same stack, buffer and arcs after every step."""
    system = get_system("swap", sorted(set(FIGURE1_LABELS)), oracle="eager", root_label="ROOT")
    result = run_oracle(system, [(FIGURE1_HEADS, FIGURE1_LABELS)])
    assert result.reproduced == [True]
    assert [system.decode(a) for a in result.actions[0]] == [(t, lab) for t, lab, *_ in FIGURE3]
    state = system.initial([9])
    for action, (_, _, stack, elided, front, arc) in zip(result.actions[0], FIGURE3, strict=True):
        before, _ = system.heads_and_labels(state)
        system.apply(state, torch.tensor([action]))
        full = stack_of(state, 0)
        assert full[-len(stack) :] == stack
        assert elided or full == stack
        buffer = buffer_of(state, 0)
        assert (buffer[0] if buffer else None) == front
        assert not buffer or buffer[-1] == 9
        heads, labels = system.heads_and_labels(state)
        added = [
            (heads[0, d].item(), system.labels[labels[0, d].item()], d)
            for d in range(1, 10)
            if heads[0, d] >= 0 and before[0, d] < 0
        ]
        assert added == ([arc] if arc else [])
    assert int(state.scalars["swaps"][0]) == 6
    lazy = get_system("swap", sorted(set(FIGURE1_LABELS)), oracle="lazy", root_label="ROOT")
    lazy_actions = lazy.oracle(FIGURE1_HEADS, FIGURE1_LABELS)
    assert transitions_of(lazy, lazy_actions).count("SWAP") == 2


def test_oracle_rejects_trees_outside_the_class() -> None:
    system = get_system("arc_standard")
    with pytest.raises(ValueError):
        system.oracle([3, 4, 0, 3])  # 3 -> 1 crosses 4 -> 2: non-projective
    assert get_system("swap").oracle([3, 4, 0, 3])
    with pytest.raises(ValueError, match="needs deprels"):
        get_system("swap", LABELS).oracle([2, 0])


@pytest.mark.parametrize("name", ALL)
def test_features_name_stack_and_buffer(name: str) -> None:
    system = get_system(name)
    state = system.initial([3, 1])
    features = system.features(state)
    assert features.shape == (2, len(system.feature_names))
    assert features.tolist() == [[0, -1, -1, 1], [0, -1, -1, 1]]
    system.apply(state, torch.tensor([system.encode("SHIFT")] * 2))
    assert system.features(state).tolist()[0] == [1, 0, -1, 2]
