"""The planar system (Gómez-Rodríguez & Nivre 2013, §3.3): the pure-Python reference of
neuralparse.systems.planar.reference and the tensor system of neuralparse.systems.planar.

Also holds the helpers shared with test_two_planar.py (k-generic checks)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from neuralparse.errors import TreeError
from neuralparse.io import read_conllu
from neuralparse.systems import TransitionSystem, random_actions, replay, run_oracle
from neuralparse.systems.planar import Multiplanar, Planar
from neuralparse.systems.planar import reference as ref
from neuralparse.trees.core import check_tree, is_projective
from neuralparse.trees.planarity import is_planar, min_planarity
from tests.conftest import shared_treebanks
from tests.systems.helpers import buffer_of, stack_of
from tests.trees_strategies import trees

LABELS = ("root", "dep", "obj")


def labels_for(heads: Sequence[int]) -> list[str]:
    """Deterministic labels, 'root' exactly on the root arc."""
    return [
        "root" if h == 0 else ("dep" if (d + h) % 2 else "obj")
        for d, h in enumerate(heads, start=1)
    ]


def single_rooted_trees(n: int) -> Iterator[list[int]]:
    """Every single-rooted tree over ``n`` words (brute force; n <= 7 is practical)."""
    for heads in itertools.product(range(n + 1), repeat=n):
        try:
            check_tree(list(heads), single_root=True)
        except TreeError:
            continue
        yield list(heads)


def explore(n: int, k: int) -> tuple[set[tuple[int, ...]], int]:
    """All configurations reachable by legal transitions of the reference system: the trees
    of the terminal ones, and the number of non-terminal ones without a legal transition."""
    start = ref.Configuration.initial(n, k)
    seen = {start}
    todo = [start]
    derived: set[tuple[int, ...]] = set()
    dead_ends = 0
    while todo:
        config = todo.pop()
        if config.terminal:
            derived.add(tuple(config.tree()))
            continue
        legal = config.legal()
        dead_ends += not legal
        for transition in legal:
            successor = config.apply(transition)
            if successor not in seen:
                seen.add(successor)
                todo.append(successor)
    return derived, dead_ends


def check_exhaustive(n: int, k: int) -> None:
    """Sound, complete and dead-end free on every tree of ``n`` words (Lemmas 5-7)."""
    derived, dead_ends = explore(n, k)
    in_class = {tuple(h) for h in single_rooted_trees(n) if ref.in_class(h, k)}
    assert dead_ends == 0
    assert derived == in_class


def lockstep_walks(system: Multiplanar, lengths: Sequence[int], seed: int) -> list[list[str]]:
    """Uniformly random legal walks on the engine, batched, mirrored on the reference: at
    every step the engine's legal transitions must equal the reference's, and at the end the
    trees must be equal (soundness itself is the contract's: test_contract.py).  Returns the
    transition names of each walk."""
    generator = torch.Generator().manual_seed(seed)
    state = system.initial(lengths)
    configs = [ref.Configuration.initial(n, system.k) for n in lengths]
    walks: list[list[str]] = [[] for _ in lengths]
    at = system.action_tensors(state.device)[0]
    for _ in range(system.max_transitions(max(lengths, default=0)) + 1):
        terminal = system.terminal(state).tolist()
        assert terminal == [c.terminal for c in configs]
        if all(terminal):
            break
        legal = system.legal(state)
        legal_t, _ = system.transition_legal(state)
        for b, config in enumerate(configs):
            names = [system.transitions[t] for t in range(len(system.transitions)) if legal_t[b, t]]
            assert names == config.legal(), (b, config)
        actions = random_actions(legal, generator)
        system.apply(state, actions)
        for b, t in enumerate(at[actions].tolist()):
            if not configs[b].terminal:
                configs[b] = configs[b].apply(system.transitions[t])
                walks[b].append(system.transitions[t])
    assert all(system.terminal(state).tolist())
    heads, _ = system.heads_and_labels(state)
    for b, (n, config) in enumerate(zip(lengths, configs, strict=True)):
        assert heads[b, 1 : n + 1].tolist() == config.tree()
    return walks


def check_oracle_batch(system: Multiplanar, batch: Sequence[Sequence[int]]) -> list[list[str]]:
    """The engine's batched oracle reproduces every tree (labels included) with exactly the
    reference oracle's sequence, which itself replays on the reference."""
    result = run_oracle(system, [(h, labels_for(h)) for h in batch])
    assert all(result.reproduced)
    sequences = []
    for heads, actions in zip(batch, result.actions, strict=True):
        names = [system.decode(a)[0] for a in actions]
        assert names == ref.oracle(heads, system.k)
        assert ref.run(len(heads), system.k, names).tree() == list(heads)
        sequences.append(names)
    return sequences


def transition_names(system: TransitionSystem, actions: Sequence[int]) -> list[str]:
    return [system.decode(a)[0] for a in actions]


@cache
def treebank_trees(path: Path) -> list[list[int]]:
    return [s.heads for s in read_conllu(path)]


def check_treebank(system: Multiplanar, path: Path, batch_size: int = 1024) -> dict[str, float]:
    """Every in-class training tree round-trips through the engine's oracle, batched."""
    heads = treebank_trees(path)
    in_class = sorted((h for h in heads if system.in_class(h)), key=len)
    reproduced = 0
    worst = 0.0
    for start in range(0, len(in_class), batch_size):
        batch = in_class[start : start + batch_size]
        result = run_oracle(system, [(h, None) for h in batch])
        reproduced += sum(result.reproduced)
        worst = max(worst, *(len(a) / len(h) for h, a in zip(batch, result.actions, strict=True)))
    assert reproduced == len(in_class)
    return {"sentences": len(heads), "in_class": len(in_class), "max_per_word": worst}


# -- the planar system ------------------------------------------------------------------------


def test_planar_class_is_planarity_over_word_to_word_arcs() -> None:
    # Word 2 is the root and is covered by 3 -> 1: planar (the word arcs share endpoint 3)
    # but not projective (the root arc 0 -> 2 crosses 3 -> 1).
    assert Planar().in_class([3, 0, 2])
    assert not is_projective([3, 0, 2])
    assert not Planar().in_class([3, 4, 0, 3])  # 3 -> 1 and 4 -> 2 cross
    assert not Planar().in_class([0, 0])  # two roots: not a UD tree
    with pytest.raises(TreeError):
        ref.oracle([3, 4, 0, 3], 1)


def test_planar_hand_checked_derivation() -> None:
    """[3, 0, 2] by Lemma 5: at front 3 the left endpoints are 2 (2 -> 3) and 1 (3 -> 1); the
    root word 2 is reduced (killed headless) to reach 1 and is the tree's root."""
    sequence = ["SHIFT", "SHIFT", "RIGHT-ARC", "REDUCE", "LEFT-ARC", "SHIFT"]
    assert ref.oracle([3, 0, 2], 1) == sequence
    system = Planar(LABELS)
    actions = system.oracle([3, 0, 2], labels_for([3, 0, 2]))
    assert transition_names(system, actions) == sequence
    state, ok = replay(system, [actions], [3])
    assert ok == [True]
    assert stack_of(state, 0) == (1, 3) and buffer_of(state, 0) == ()
    heads, _ = system.heads_and_labels(state)
    assert heads[0, 1:].tolist() == [3, 0, 2]


def test_root_restrictions() -> None:
    """The three UD root restrictions of planar.reference, on hand-made configurations."""
    config = ref.run(3, 1, ["SHIFT", "SHIFT"])  # stack [1, 2], front 3 = the last word
    assert not config.is_legal("SHIFT")  # 2: the last word may leave only with 1 headless
    assert not config.is_legal("REDUCE")  # killing 2 would kill its tree {2}
    config = config.apply("RIGHT-ARC")  # 2 -> 3: the tree {2, 3} stays alive through 3
    assert config.is_legal("REDUCE")
    config = config.apply("REDUCE")
    assert config.killed_root == 2
    assert config.is_legal("LEFT-ARC")
    assert not config.is_legal("REDUCE")  # 1's tree {1} would die
    config = config.apply("LEFT-ARC")
    assert config.legal() == ["SHIFT", "REDUCE"]  # 1 now has a head; {1, 2, 3} lives on
    assert config.apply("SHIFT").tree() == [3, 0, 2]
    # 3: after the killed root 2 (whose tree lives on through 3), the last word 5 may only
    # take its head from that tree: 4 is a separate tree, so 5 -> 4 but not 4 -> 5.
    config = ref.run(5, 1, ["SHIFT", "SHIFT", "RIGHT-ARC", "REDUCE", "SHIFT", "SHIFT"])
    assert config.killed_root == 2 and config.stacks == ((1, 3, 4),) and config.front == 5
    assert config.legal() == ["LEFT-ARC"]


@pytest.mark.parametrize("n", range(1, 6))
def test_planar_exhaustively_sound_complete_and_dead_end_free(n: int) -> None:
    check_exhaustive(n, 1)


@pytest.mark.parametrize("n", [5, 6])
def test_planar_oracle_complete_on_every_small_tree(n: int) -> None:
    for heads in single_rooted_trees(n):
        assert ref.in_class(heads, 1) == is_planar(heads)
        if is_planar(heads):
            assert ref.run(n, 1, ref.oracle(heads, 1)).tree() == heads


@given(batch=st.lists(trees(max_words=15), min_size=1, max_size=24))
def test_planar_engine_oracle_is_complete(batch: list[list[int]]) -> None:
    system = Planar(LABELS)
    planar = [h for h in batch if system.in_class(h)]
    if planar:
        for heads, names in zip(planar, check_oracle_batch(system, planar), strict=True):
            # n SHIFTs, n - 1 arcs, at most n - 1 REDUCEs (the last word is never reduced).
            assert len(names) <= 3 * len(heads) - 2
    for h in batch:
        assert system.in_class(h) == (min_planarity(h, max_k=1) == 1)


@given(
    lengths=st.lists(st.integers(min_value=0, max_value=15), min_size=1, max_size=16),
    seed=st.integers(min_value=0, max_value=2**31),
)
def test_planar_random_walks_agree_with_reference(lengths: list[int], seed: int) -> None:
    lockstep_walks(Planar(LABELS), lengths, seed)


@pytest.mark.treebank
@pytest.mark.parametrize("treebank", shared_treebanks(), ids=lambda p: p.name)
def test_planar_oracle_reproduces_every_planar_training_tree(treebank: Path) -> None:
    stats = check_treebank(Planar(), treebank / "train.conllu")
    assert stats["max_per_word"] <= 3  # n SHIFTs, n - 1 arcs, at most n REDUCEs


def test_treebanks_present_or_skipped(ud_root: Path) -> None:
    """Fails loudly if the shared data exists but no treebank directory was found."""
    assert shared_treebanks(), f"no UD_* treebank under {ud_root}"
