"""Soundness, completeness, dead-end freedom and transition counts of the engine's systems,
on random trees (hypothesis), plus Nivre (2009) Figure 3 step by step and beam reordering."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from neuralparse.systems import (
    get_system,
    random_actions,
    random_walks,
    replay,
    run_oracle,
)
from neuralparse.systems.swap import maximal_projective_components
from neuralparse.trees.core import check_tree, is_projective
from tests.systems.helpers import buffer_of, stack_of
from tests.trees_strategies import projective_trees, trees

PROJECTIVE = ("arc_standard", "arc_eager", "arc_hybrid")
LABELS = ("root", "dep", "obj")
ALL = ["arc_eager", "arc_hybrid", "arc_standard", "swap"]  # this systems


def labels_for(heads: list[int]) -> list[str]:
    """Deterministic labels, 'root' on the root arc, varied elsewhere."""
    return [
        "root" if h == 0 else ("dep" if (d + h) % 2 else "obj")
        for d, h in enumerate(heads, start=1)
    ]


def tree_of(heads_row: list[int], n: int) -> list[int]:
    return heads_row[1 : n + 1]


@pytest.mark.parametrize("name", ALL)
def test_action_inventory(name: str) -> None:
    system = get_system(name, LABELS)
    names = system.action_names()
    assert len(names) == system.num_actions == len(set(names))
    assert "SHIFT" in names and "LEFT-ARC:dep" in names
    for a in range(system.num_actions):
        assert system.encode(*system.decode(a)) == a
    unlabeled = get_system(name)
    assert unlabeled.num_actions == len(unlabeled.transitions)


@pytest.mark.parametrize("name", ALL)
@given(
    lengths=st.lists(st.integers(min_value=0, max_value=15), min_size=1, max_size=32),
    seed=st.integers(min_value=0, max_value=2**31),
)
def test_random_walks_are_sound_and_never_stuck(name: str, lengths: list[int], seed: int) -> None:
    """Every uniformly random legal walk terminates within max_transitions with no dead end,
    and yields a well-formed tree with exactly one root dependent, in the system's class,
    with the root label exactly on the root arc."""
    system = get_system(name, LABELS)
    state, ok = random_walks(system, lengths, generator=torch.Generator().manual_seed(seed))
    assert ok
    assert not system.legal(state).any()  # terminal configurations have no legal action
    heads, labels = system.heads_and_labels(state)
    steps = state.scalars["steps"].tolist()
    for b, n in enumerate(lengths):
        tree = tree_of(heads[b].tolist(), n)
        if n == 0:
            assert tree == [] and steps[b] == 0
            continue
        check_tree(tree, single_root=True)
        assert system.in_class(tree)
        assert steps[b] <= system.max_transitions(n)
        names = [system.labels[x] for x in labels[b, 1 : n + 1].tolist()]
        assert all((lab == "root") == (h == 0) for h, lab in zip(tree, names, strict=True))


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
@given(
    lengths=st.lists(st.integers(min_value=1, max_value=12), min_size=2, max_size=8),
    seed=st.integers(min_value=0, max_value=2**31),
    prefix=st.integers(min_value=0, max_value=10),
)
def test_beam_reorder_continues_identically(
    name: str, lengths: list[int], seed: int, prefix: int
) -> None:
    """A reordered state (configurations duplicated and permuted, twice) continues exactly
    like states rebuilt from scratch by replaying each selected history."""
    system = get_system(name, LABELS)
    gen = torch.Generator().manual_seed(seed)
    state = system.initial(lengths)
    history = [[] for _ in lengths]
    for _ in range(2):
        for _ in range(prefix):
            legal = system.legal(state)
            actions = random_actions(legal, gen)
            active = (~system.terminal(state)).tolist()
            system.apply(state, actions)
            for b, a in enumerate(actions.tolist()):
                if active[b]:
                    history[b].append(a)
        parent = torch.randint(len(lengths), (len(lengths),), generator=gen)
        state = system.reorder(state, parent)
        history = [list(history[p]) for p in parent.tolist()]
    reference, ok = replay(system, history, state.lengths.tolist())
    assert all(ok)
    while not bool(system.terminal(state).all()):
        legal = system.legal(state)
        assert torch.equal(legal, system.legal(reference))
        assert torch.equal(system.features(state), system.features(reference))
        actions = random_actions(legal, gen)
        system.apply(state, actions)
        system.apply(reference, actions)
    assert bool(system.terminal(reference).all())
    for a, b in zip(
        system.heads_and_labels(state), system.heads_and_labels(reference), strict=True
    ):
        assert torch.equal(a, b)


@pytest.mark.parametrize("name", ALL)
def test_features_name_stack_and_buffer(name: str) -> None:
    system = get_system(name)
    state = system.initial([3, 1])
    features = system.features(state)
    assert features.shape == (2, len(system.feature_names))
    assert features.tolist() == [[0, -1, -1, 1], [0, -1, -1, 1]]
    system.apply(state, torch.tensor([system.encode("SHIFT")] * 2))
    assert system.features(state).tolist()[0] == [1, 0, -1, 2]
