"""The contract every registered transition system meets, checked on each of them (and on the
toy system of ``tests/toy_system.py``, which registers itself in a fixture and runs these same
checks: ``tests/test_toy_system.py``).

* the action inventory: every action decodes and encodes back to itself;
* soundness: uniformly random legal walks never meet a dead end, stop within
  ``max_transitions`` and end in a well-formed single-rooted tree of the system's class,
  with the root label exactly on the root arc;
* the oracle round trip: for trees in the class, the static oracle reproduces the tree the
  system is trained to derive, and replaying its actions on a fresh state rebuilds it;
* beam reordering: a state gathered along parent indices continues exactly like states
  rebuilt separately from each selected history (per-word tables and subclass fields
  included);
* graph safety where a system offers steps for CUDA graphs (``graph_safe``, or a
  ``for_graphs`` variant): no step reads a device value on the host, and the step bound is
  linear (the census of ``tests/test_graphs.py``);
* CPU and CUDA agree step by step (skipped without a GPU).

``CHECKS`` lists the checks; each takes the registry name and the constructor options
(``name=``, ``options=``).  What is particular to one system (its paper's derivations, its
reference implementation) stays in that system's own test module.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tests.test_graphs as graphs
from neuralparse.systems import (
    SYSTEMS,
    TransitionSystem,
    get_system,
    random_actions,
    random_walks,
    replay,
    run_oracle,
)
from neuralparse.systems.two_registers import oracle as two_registers_oracle
from neuralparse.systems.two_registers import table4_legal
from neuralparse.trees.core import check_tree
from tests.trees_strategies import trees

LABELS = ("root", "dep", "obj")
NAMES = sorted(SYSTEMS)
VARIANTS = [
    *((name, {}) for name in NAMES),
    ("swap", {"oracle": "lazy"}),  # the shipped configuration (conf/system/swap.yaml)
    ("two_registers", {"dead_end_rule": "plans"}),
    ("two_registers", {"graph_rule": "tensor"}),  # the mask of its CUDA-graph variant
]
"""Every registered system with its default options, and the other option values that change
its mask (also its CUDA-graph variant's) or its oracle."""


def variant_id(value: object) -> str:
    if isinstance(value, dict):
        return "-".join(str(v) for v in value.values()) or "default"
    return str(value)


Options = dict[str, object] | None
FEW = settings(max_examples=25)
"""Hypothesis examples per system and check: nine systems (and the toy) share the budget."""


def labels_for(heads: list[int]) -> list[str]:
    """Deterministic labels, 'root' on the root arc, varied elsewhere."""
    return [
        "root" if h == 0 else ("dep" if (d + h) % 2 else "obj")
        for d, h in enumerate(heads, start=1)
    ]


def tree_of(heads_row: list[int], n: int) -> list[int]:
    return heads_row[1 : n + 1]


def documented_gap(name: str, heads: list[int]) -> bool:
    """Trees in a system's class that it documents as not derivable: two-registers'
    completeness gap (design note 03, item 4), where even the Table 4 oracle finds none."""
    return name == "two_registers" and two_registers_oracle(heads, table4_legal) is None


@pytest.mark.parametrize(("name", "options"), VARIANTS, ids=variant_id)
def test_action_inventory(name: str, options: Options) -> None:
    system = get_system(name, LABELS, **(options or {}))
    names = system.action_names()
    assert len(names) == system.num_actions == len(set(names))
    for a in range(system.num_actions):
        assert system.encode(*system.decode(a)) == a
    for transition in system.arc_transitions:
        assert f"{transition}:dep" in names
    unlabeled = get_system(name, **(options or {}))
    assert unlabeled.num_actions == len(unlabeled.transitions)
    state = system.initial([3, 1])
    assert system.features(state).shape == (2, len(system.feature_names))
    summary = system.summary_features(state)
    if system.summary_size:
        assert summary is not None and summary.shape == (2, system.summary_size)
        assert summary.dtype == torch.float32
    else:
        assert summary is None


@pytest.mark.parametrize(("name", "options"), VARIANTS, ids=variant_id)
@FEW
@given(
    lengths=st.lists(st.integers(min_value=0, max_value=12), min_size=1, max_size=16),
    seed=st.integers(min_value=0, max_value=2**31),
)
def test_random_walks_are_sound_and_never_stuck(
    name: str, lengths: list[int], seed: int, options: Options
) -> None:
    """Every uniformly random legal walk terminates within max_transitions with no dead end,
    and yields a well-formed tree with exactly one root dependent, in the system's class
    (where ``derivations_in_class``), with the root label exactly on the root arc."""
    system = get_system(name, LABELS, **(options or {}))
    state, ok = random_walks(system, lengths, generator=torch.Generator().manual_seed(seed))
    assert ok
    assert not system.legal(state).any()  # terminal configurations have no legal action
    heads, labels = system.heads_and_labels(state)
    steps = state.scalars["steps"].tolist()
    for b, n in enumerate(lengths):
        tree = tree_of(heads[b].tolist(), n)
        assert steps[b] <= system.max_transitions(n)
        if n == 0:
            assert tree == []
            continue
        check_tree(tree, single_root=True)
        names = [system.labels[x] for x in labels[b, 1 : n + 1].tolist()]
        if system.derivations_in_class:
            assert system.in_class(*system.output_tree(tree, names))
        assert all((lab == "root") == (h == 0) for h, lab in zip(tree, names, strict=True))


@pytest.mark.parametrize(("name", "options"), VARIANTS, ids=variant_id)
@FEW
@given(batch=st.lists(trees(min_words=1, max_words=12), min_size=1, max_size=12))
def test_oracle_round_trip(name: str, batch: list[list[int]], options: Options) -> None:
    """For every tree in the class, the static oracle reproduces the tree the system is
    trained to derive (the tree itself, or its encoding), and replaying the oracle's actions
    on a fresh state rebuilds it; trees outside the class are never reported reproduced."""
    probe = get_system(name, LABELS, **(options or {}))
    gold = [(heads, labels_for(heads)) for heads in batch]
    targets = [probe.training_tree(*tree) for tree in gold]
    inventory = sorted({*LABELS, *(label for _, labels in targets for label in labels)})
    system = get_system(name, inventory, **(options or {}))
    in_class = [system.in_class(*tree) and not documented_gap(name, tree[0]) for tree in gold]
    result = run_oracle(system, targets)
    for ok, member in zip(result.reproduced, in_class, strict=True):
        assert ok or not member
    chosen = [b for b, member in enumerate(in_class) if member]
    if not chosen:
        return
    sequences = [result.actions[b] for b in chosen]
    state, legal = replay(system, sequences, [len(batch[b]) for b in chosen])
    assert all(legal) and bool(system.terminal(state).all())
    heads, labels = system.heads_and_labels(state)
    for row, b in enumerate(chosen):
        n = len(batch[b])
        target_heads, target_labels = targets[b]
        assert tree_of(heads[row].tolist(), n) == list(target_heads)
        assert [system.labels[x] for x in labels[row, 1 : n + 1].tolist()] == target_labels
        assert len(sequences[row]) <= system.max_transitions(n)


def walk_and_reorder(
    system: TransitionSystem, lengths: list[int], seed: int, prefix: int
) -> tuple[object, list[list[int]], torch.Generator]:
    """Random steps, reordered twice along random parents; returns the state and the action
    history of each of its configurations."""
    gen = torch.Generator().manual_seed(seed)
    state = system.initial(lengths)
    history: list[list[int]] = [[] for _ in lengths]
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
    return state, history, gen


@pytest.mark.parametrize(("name", "options"), VARIANTS, ids=variant_id)
@FEW
@given(
    lengths=st.lists(st.integers(min_value=1, max_value=12), min_size=2, max_size=8),
    seed=st.integers(min_value=0, max_value=2**31),
    prefix=st.integers(min_value=0, max_value=10),
)
def test_beam_reorder_continues_identically(
    name: str, lengths: list[int], seed: int, prefix: int, options: Options
) -> None:
    """A reordered state (configurations duplicated and permuted, twice) is of the same class
    and continues exactly like states rebuilt from scratch by replaying each selected
    history: same legal actions, features and summary features at every step, same trees."""
    system = get_system(name, LABELS, **(options or {}))
    state, history, gen = walk_and_reorder(system, lengths, seed, prefix)
    reference, ok = replay(system, history, state.lengths.tolist())
    assert all(ok) and type(state) is type(reference)
    while not bool(system.terminal(state).all()):
        legal = system.legal(state)
        assert torch.equal(legal, system.legal(reference))
        assert torch.equal(system.features(state), system.features(reference))
        summary = system.summary_features(state)
        if summary is not None:
            assert torch.equal(summary, system.summary_features(reference))
        actions = random_actions(legal, gen)
        system.apply(state, actions)
        system.apply(reference, actions)
    assert bool(system.terminal(reference).all())
    for a, b in zip(
        system.heads_and_labels(state), system.heads_and_labels(reference), strict=True
    ):
        # Widths may differ (a system sizing its tables by the batch it started with pads
        # more); the columns of the words agree, and padding holds no arc.
        width = min(a.shape[1], b.shape[1])
        assert torch.equal(a[:, :width], b[:, :width])
        assert bool((a[:, width:] == -1).all()) and bool((b[:, width:] == -1).all())


@pytest.mark.parametrize(("name", "options"), VARIANTS, ids=variant_id)
@FEW
@given(
    lengths=st.lists(st.integers(min_value=1, max_value=12), min_size=1, max_size=8),
    seed=st.integers(min_value=0, max_value=2**31),
)
def test_arc_operands_name_the_arc_built(
    name: str, lengths: list[int], seed: int, options: Options
) -> None:
    """Along random legal walks, a transition of ``arc_operands`` builds exactly one arc, from
    the feature token it names as head to the one it names as dependent, wherever it is
    legal (decoding's arc term weighs the transition by that arc's probability)."""
    system = get_system(name, LABELS, **(options or {}))
    assert set(system.arc_operands) <= system.arc_transitions
    column = {feature: i for i, feature in enumerate(system.feature_names)}
    of_action = system.action_tensors(torch.device("cpu"))[0]
    gen = torch.Generator().manual_seed(seed)
    state = system.initial(lengths)
    rows = torch.arange(len(lengths))
    for _ in range(system.max_transitions(max(lengths))):
        if bool(system.terminal(state).all()):
            break
        legal, features = system.legal(state), system.features(state)
        before, _ = system.heads_and_labels(state)
        for transition, (head, dependent) in system.arc_operands.items():
            usable = legal & (of_action == system.transition_id(transition))
            where = usable.any(1)
            if not bool(where.any()):
                continue
            trial = system.reorder(state, rows)
            anywhere = random_actions(legal, gen)  # the rows where the transition is not legal
            system.apply(trial, torch.where(where, usable.long().argmax(1), anywhere))
            after, _ = system.heads_and_labels(trial)
            for b in where.nonzero()[:, 0].tolist():
                d = int(features[b, column[dependent]])
                assert (after[b] != before[b]).nonzero()[:, 0].tolist() == [d], transition
                assert int(after[b, d]) == int(features[b, column[head]]), transition
        system.apply(state, random_actions(legal, gen))


@pytest.mark.parametrize(("name", "options"), VARIANTS, ids=variant_id)
def test_graph_safety_where_declared(name: str, options: Options) -> None:
    """The steps that greedy graphs record (``graph_safe`` systems, or a system's
    ``for_graphs`` variant) never synchronise and have a linear step bound (the operator
    census of ``tests/test_graphs.py``)."""
    if get_system(name, **(options or {})).for_graphs() is None:
        pytest.skip(f"{name} has no steps for CUDA graphs")
    graphs.check_graph_safe_steps_never_synchronise(name, options or {})
    graphs.check_graph_safe_step_bounds_are_linear(name)


@pytest.mark.parametrize(("name", "options"), VARIANTS, ids=variant_id)
def test_cpu_and_cuda_agree(name: str, options: Options) -> None:
    """The same random walk on CPU and CUDA: same legal masks, features and trees at every
    step, and the same oracle sequences."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    system = get_system(name, LABELS, **(options or {}))
    lengths = [1, 4, 9, 12, 0, 7]
    cpu = system.initial(lengths, torch.device("cpu"))
    cuda = system.initial(lengths, torch.device("cuda"))
    gen = torch.Generator().manual_seed(11)
    for _ in range(system.max_transitions(max(lengths))):
        if bool(system.terminal(cpu).all()):
            break
        legal = system.legal(cpu)
        assert torch.equal(legal, system.legal(cuda).cpu())
        assert torch.equal(system.features(cpu), system.features(cuda).cpu())
        actions = random_actions(legal, gen)
        system.apply(cpu, actions)
        system.apply(cuda, actions.cuda())
    assert bool(system.terminal(cuda).all().cpu())
    for a, b in zip(system.heads_and_labels(cpu), system.heads_and_labels(cuda), strict=True):
        assert torch.equal(a, b.cpu())
    gold = [(h, labels_for(h)) for h in ([2, 0, 2], [0], [3, 3, 0, 3, 4])]
    trees_in_class = [t for t in gold if system.in_class(*t)]
    if trees_in_class:
        on_cpu = run_oracle(system, trees_in_class, "cpu")
        on_cuda = run_oracle(system, trees_in_class, "cuda")
        assert on_cpu.actions == on_cuda.actions and on_cpu.reproduced == on_cuda.reproduced


CHECKS = (
    test_action_inventory,
    test_random_walks_are_sound_and_never_stuck,
    test_oracle_round_trip,
    test_beam_reorder_continues_identically,
    test_arc_operands_name_the_arc_built,
    test_graph_safety_where_declared,
    test_cpu_and_cuda_agree,
)
"""Every contract check; call one with ``name=`` a registered system's name and ``options=``
its constructor options."""
