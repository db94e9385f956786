"""The two-registers exit rule as tensor operations
(:mod:`neuralparse.systems.two_registers.tensor_rule`,
:mod:`neuralparse.systems.two_registers.tensor_forms`) against the reference on
configurations (:func:`~neuralparse.systems.two_registers.exit.exit_legal`): searching every
row, it decides every row, with the reference's mask."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

import pytest
import torch

from neuralparse.io import read_conllu
from neuralparse.systems import random_actions
from neuralparse.systems.two_registers import empty_buffer, tensor_forms, tensor_rule
from neuralparse.systems.two_registers import exit as exit_module
from neuralparse.systems.two_registers import system as system_module
from neuralparse.systems.two_registers.configuration import (
    Configuration,
    Move,
    apply_move,
    successor,
    table4_legal,
)
from neuralparse.systems.two_registers.exit import (
    exit_legal,
    exit_move,
    phase,
)
from neuralparse.systems.two_registers.mask import HEAD
from neuralparse.systems.two_registers.oracle import oracle
from neuralparse.systems.two_registers.registers_empty import gamma_closed_form, i0
from neuralparse.systems.two_registers.system import SEARCH_ROWS, TwoRegisters, root_arc_move
from neuralparse.systems.two_registers.tensor_both_registers import search_some
from neuralparse.systems.two_registers.tensor_forms import Words, tree_roots
from neuralparse.systems.two_registers.tensor_moves import table4
from neuralparse.systems.two_registers.tensor_rule import exit_rule
from neuralparse.trees.core import is_projective
from neuralparse.trees.crossing import is_k_crossing_interval
from tests.conftest import shared_treebanks
from tests.systems.test_two_registers import random_forest, reachable


def words_of(configs: list[Configuration]) -> Words:
    """The configurations as :class:`Words` rows (written from the reference, not the
    engine, so that these tests check the tensor rule alone), the heads laid out as a row of
    the engine's per-word table (mask.words_view): a rule traced here then serves the
    engine's rows too (no recompilation on strides)."""
    w = tensor_forms.words_of(configs)
    table = torch.full((len(configs), 3, w.head.shape[1]), -1, dtype=torch.long)
    table[:, HEAD] = w.head
    return replace(w, head=table[:, HEAD])


def resolved(c: Configuration) -> Configuration | None:
    """The configuration whose phase decides ``c``: with the anchor on the stack, the one E's
    next moves lead to (``None`` when E cannot move)."""
    d = c.copy()
    for _ in range(tensor_rule.ANCHORED_MOVES):
        if phase(d) != "phase B, anchor on the stack":
            break
        move = exit_move(d)
        if move is None or not table4_legal(d, move):
            return None
        apply_move(d, move)
    return d


def check(configs: list[Configuration], phases: Counter[str]) -> None:
    """Compare the tensor rule with the reference on ``configs`` (counting the phases of
    the successors in ``phases``): it decides every row, as the reference does."""
    legal, roots, decided = exit_rule(words_of(configs))
    assert table4(words_of(configs)).tolist() == [
        [table4_legal(c, m) for m in Move] for c in configs
    ]
    for b, c in enumerate(configs):
        assert bool(decided[b]), c  # every row is searched: every phase has a tensor form
        expected = [False] * len(Move) if c.is_terminal() else [exit_legal(c, m) for m in Move]
        assert legal[b].tolist() == expected, c
        for m in Move:
            if table4_legal(c, m):
                phases[phase(successor(c, m))] += 1
        arcs_from_root = [expected[m] and root_arc_move(c, m) for m in Move]
        assert roots[b].tolist() == arcs_from_root, c


def test_tree_roots_by_pointer_doubling() -> None:
    heads = torch.tensor([[-1, 3, 1, -1, 3, 0, -1, -1]])
    assert tree_roots(heads).tolist() == [[0, 3, 3, 3, 3, 0, 6, 7]]


def test_every_small_reachable_configuration() -> None:
    """Every configuration reachable under the rule, n <= 5, in batches of mixed lengths."""
    configs = [c for n in range(1, 6) for c in reachable(n, exit_legal)]
    phases: Counter[str] = Counter()
    for i in range(0, len(configs), 512):
        check(configs[i : i + 512], phases)
    assert len(phases) == 8 and min(phases.values()) >= 50, phases


def test_random_walks_of_longer_sentences() -> None:
    """Configurations along seeded random walks under the rule, 8-40 words."""
    rng = random.Random(20261203)
    phases: Counter[str] = Counter()
    configs = []
    for _ in range(60):
        c = Configuration.initial(rng.randint(8, 40))
        while not c.is_terminal():
            configs.append(c.copy())
            apply_move(c, rng.choice([m for m in Move if exit_legal(c, m)]))
    check(configs, phases)
    assert len(phases) == 8 and min(phases.values()) >= 20, phases


def random_configuration(rng: random.Random) -> Configuration:
    """A configuration that need not be reachable: a random forest over 0..n (0 a root), an
    increasing stack, registers off the stack left of the buffer front, random IsCovered
    flags and ``last``."""
    n = rng.randint(3, 14)
    c = random_forest(rng, n, 0.6)
    if c is None:
        return random_configuration(rng)
    c.front = rng.randint(1, n + 1)
    held = rng.choice((0, 1, 2, 2, 2))  # phase B has the most to get wrong
    registers = sorted(rng.sample(range(c.front), min(c.front, held)))
    c.r1, c.r2 = [*registers, None, None][:2]
    c.stack = [v for v in range(c.front) if v not in registers and rng.random() < 0.5]
    c.covered1, c.covered2 = rng.random() < 0.3, rng.random() < 0.3
    c.last = rng.randint(-1, n)
    return c


def test_closed_forms_match_the_reference_on_arbitrary_configurations() -> None:
    """Each phase's tensor closed form computes what the reference's does, also on
    configurations no walk reaches (stressing the order of phase B's events)."""
    rng = random.Random(41)
    configs = [random_configuration(rng) for _ in range(8000)]
    w = words_of(configs)
    assert table4(w).tolist() == [[table4_legal(c, m) for m in Move] for c in configs]
    forms = {
        "phase B, no anchor": (tensor_forms.phase_b_closed_form, exit_module.phase_b_closed_form),
        "phase A": (tensor_forms.phase_a_closed_form, exit_module.phase_a_closed_form),
        "registers empty, β1 = γ": (tensor_forms.gamma_closed_form, gamma_closed_form),
        "registers empty, fresh β1": (tensor_forms.i0, i0),
        "empty buffer, R1 alone": (
            tensor_forms.r1_empty_buffer_closed_form,
            empty_buffer.r1_empty_buffer_closed_form,
        ),
    }
    seen: Counter[tuple[str, bool]] = Counter()
    for name, (tensor_form, reference) in forms.items():
        values = tensor_form(w).tolist()
        for c, value in zip(configs, values, strict=True):
            if phase(c) == name:
                assert value == reference(c), (name, c)
                seen[name, value] += 1
    assert len(seen) == 2 * len(forms) and min(seen.values()) >= 20, seen


def anchored_configuration(rng: random.Random) -> Configuration:
    """A :func:`random_configuration` made to have the anchor on the stack: both registers
    held, ``β1 − 1`` on top of the stack and no other stack word right of R1."""
    while True:
        c = random_configuration(rng)
        if c.r2 is None or c.buffer_empty or c.front - 1 == c.r2:
            continue
        c.stack = [v for v in c.stack if v < c.r1] + [c.front - 1]
        return c


def emptied_configuration(rng: random.Random) -> Configuration:
    """A :func:`random_configuration` with an empty buffer and both registers held."""
    while True:
        c = random_configuration(rng)
        if c.r2 is not None:
            c.front = c.n + 1
            return c


def test_exit_finishes_matches_the_reference_on_arbitrary_configurations() -> None:
    """The whole dispatch, E's anchored moves included, on configurations no walk reaches:
    the tensor rule decides every one, as the reference does."""
    rng = random.Random(42)
    configs = [random_configuration(rng) for _ in range(6000)]
    configs += [anchored_configuration(rng) for _ in range(3000)]
    configs += [emptied_configuration(rng) for _ in range(3000)]
    decided, finishes = tensor_rule.exit_finishes(words_of(configs))
    seen: Counter[tuple[str, bool]] = Counter()
    for c, known, value in zip(configs, decided.tolist(), finishes.tolist(), strict=True):
        name = phase(c)
        assert known, c
        assert value == exit_module.exit_finishes(c), c
        seen[name, value] += 1
    assert len(seen) == 16 and min(seen.values()) >= 5, seen


def test_the_search_takes_at_most_its_limit_of_the_wanted_rows() -> None:
    """``search_some`` with a limit searches that many of the wanted rows (fewer when fewer
    are wanted) and no other, and finds there what the search of every wanted row finds."""
    rng = random.Random(44)
    configs = [emptied_configuration(rng) for _ in range(60)]
    configs = configs[:40]
    w = words_of(configs)
    wanted = torch.tensor([rng.random() < 0.5 for _ in configs])
    every, completable = search_some(w, wanted, None)
    assert torch.equal(every, wanted)
    assert completable.tolist() == [
        bool(want) and empty_buffer.both_registers_empty_buffer(c)
        for c, want in zip(configs, wanted.tolist(), strict=True)
    ]
    assert 0 < int(completable.sum()) < int(wanted.sum())
    for limit in (1, 5, 40):
        searched, found = search_some(w, wanted, limit)
        assert int(searched.sum()) == min(limit, int(wanted.sum()))
        assert not bool((searched & ~wanted).any())
        assert torch.equal(found, completable & searched)
    # In groups of 4 (one configuration's successors): whole groups, the first that fit
    # together, skipping a group larger than the limit.
    groups = wanted.view(-1, 4)
    for limit in (1, 3, 7):
        searched, found = search_some(w, wanted, limit, group=4)
        taken, total = [], 0
        for count in groups.sum(1).tolist():
            total += count if count <= limit else 0
            taken.append(0 < count <= limit and total <= limit)
        assert torch.equal(searched.view(-1, 4), groups & torch.tensor(taken)[:, None])
        assert any(taken)
        assert torch.equal(found, completable & searched)


def test_the_rule_compiles_as_one_graph() -> None:
    """``torch.compile`` traces the whole rule with no graph break (what ``graph_rule=
    "compiled"`` needs to fuse it), and the traced rule computes the eager masks: an
    ``IntEnum`` operand in a tensor comparison, which tracing turns into a Python bool,
    would make them differ."""
    rng = random.Random(43)
    configs = [random_configuration(rng) for _ in range(300)]
    configs += [anchored_configuration(rng) for _ in range(100)]
    configs += [emptied_configuration(rng) for _ in range(100)]
    w = words_of(configs)
    traced = torch.compile(exit_rule, backend="eager", fullgraph=True, dynamic=True)
    for got, expected in zip(traced(w, SEARCH_ROWS), exit_rule(w, SEARCH_ROWS), strict=True):
        assert torch.equal(got, expected)


@pytest.mark.parametrize(
    ("rule", "search_rows"), [("tensor", None), ("compiled", 2), ("tensor", 1)]
)
def test_the_graph_variant_decides_the_engines_rows_as_the_host_does(
    rule: str, search_rows: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batched random walks on the engine: at every step the ``graph_rule="tensor"`` (or
    ``"compiled"``) variant's mask equals the host's on every row it does not abandon, and,
    when it may search every row (``search_rows=None``, eager only), it abandons none;
    searching at most one or two rows a step, it abandons some.  (``"compiled"`` is traced
    here, not compiled to kernels, which would take minutes: ``benchmarks.exit_rule_cost``
    compares the kernels' masks.)"""
    monkeypatch.setitem(system_module.COMPILE_OPTIONS, "backend", "eager")
    monkeypatch.setattr(system_module, "SEARCH_ROWS", search_rows)
    system = TwoRegisters()
    variant = TwoRegisters(graph_rule=rule).for_graphs()
    generator = torch.Generator().manual_seed(5)
    rng = random.Random(5)
    kept = abandoned = 0
    for _ in range(6 if search_rows is None else 2):
        lengths = [rng.randint(1, 30) for _ in range(12)]
        state = system.initial(lengths)
        configs = [Configuration.initial(n) for n in lengths]
        while not bool(system.terminal(state).all()):
            expected, _ = system.transition_legal(state)
            got, _ = variant.transition_legal(state)
            # The greedy variant makes a row beyond the search limit wait: given up too.
            gave_up = (state.scalars["abandoned"] == 1) | (state.scalars["waiting"] == 1)
            state.scalars["abandoned"].zero_()
            for b, c in enumerate(configs):
                assert not (search_rows is None and gave_up[b]), c
                if not gave_up[b]:
                    assert got[b].tolist() == expected[b].tolist(), c
            kept += int((~gave_up).sum())
            abandoned += int(gave_up.sum())
            actions = random_actions(system.legal(state), generator)
            for c, action in zip(configs, actions.tolist(), strict=True):
                if not c.is_terminal():
                    apply_move(c, Move(system.transition_id(system.decode(action)[0])))
            system.apply(state, actions)
    assert kept > 4 * abandoned, (kept, abandoned)
    assert abandoned > 0 or search_rows is None, "the limited search should abandon some rows"


@pytest.mark.treebank
@pytest.mark.parametrize("treebank", [p.name for p in shared_treebanks()] or ["absent"])
def test_configurations_of_treebank_derivations(treebank: str, ud_root) -> None:
    """Every configuration on the oracle's derivations (under the exit rule) of the first
    60 training trees with crossing arcs in the class: the tensor rule decides as the
    reference, and decides every one."""
    path = ud_root / treebank / "train.conllu"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    sentences = read_conllu(path)
    configs: list[Configuration] = []
    trees = 0
    for sentence in sentences:
        heads = list(sentence.heads)
        if trees == 60 or len(heads) > 40:
            continue
        if is_projective(heads) or not is_k_crossing_interval(heads, 2):
            continue
        moves = oracle(heads, legal=exit_legal)
        if moves is None:
            continue
        trees += 1
        c = Configuration.initial(len(heads))
        for move in moves:
            configs.append(c.copy())
            apply_move(c, move)
    if not configs:
        pytest.skip("no crossing tree in the class")
    phases: Counter[str] = Counter()
    for i in range(0, len(configs), 512):
        check(configs[i : i + 512], phases)
