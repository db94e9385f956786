"""The closed forms of the two-registers exit rule (:mod:`neuralparse.systems.two_registers.exit`)
against the simulation of the exit plan they replace, and those of the empty-buffer phases
against exact completability (docs/dev/two-registers-completability.md; ``python
docs/dev/two_registers_exhaustive.py 6 --exit`` checks n <= 6)."""

from __future__ import annotations

import random
from collections import Counter

from neuralparse.systems.two_registers import empty_buffer
from neuralparse.systems.two_registers.configuration import (
    Configuration,
    Move,
    apply_move,
    table4_legal,
)
from neuralparse.systems.two_registers.empty_buffer import (
    both_registers_empty_buffer,
    r1_empty_buffer_closed_form,
)
from neuralparse.systems.two_registers.exit import (
    exit_finishes,
    exit_finishes_by_simulation,
    exit_legal,
    exit_legal_by_simulation,
    phase,
)
from neuralparse.trees.core import check_tree
from tests.systems.test_two_registers import (
    completable_by_search,
    configuration_key,
    random_forest,
    reachable,
    successor,
)


def test_closed_forms_equal_the_simulation_on_every_small_successor() -> None:
    """Every Table 4 successor of every configuration reachable under the rule, n <= 4:
    the closed forms decide "E finishes it" as the simulation does, in every phase.  (Where
    they agree on all successors, the two rules give the same mask on every reachable
    configuration, so reachability under either is the same.)"""
    seen: set[tuple] = set()
    phases: Counter[str] = Counter()
    for c in reachable(4, exit_legal):
        if c.is_terminal():
            continue
        for move in Move:
            if not table4_legal(c, move):
                continue
            after = successor(c, move)
            if configuration_key(after) in seen:
                continue
            seen.add(configuration_key(after))
            phases[phase(after)] += 1
            assert exit_finishes(after) == exit_finishes_by_simulation(after), (move, after)
    assert min(phases.values()) >= 50 and len(phases) == 8, phases


def empty_buffer_closed_form(c: Configuration) -> bool:
    return r1_empty_buffer_closed_form(c) if c.r2 is None else both_registers_empty_buffer(c)


def test_empty_buffer_with_a_register_is_decided_exactly() -> None:
    """Empty buffer, a register held: the closed forms are exact completability (memoised
    search over Table 4 moves) on every Table 4 successor of every configuration reachable
    under the rule, n <= 4, completable or not, R1 alone and both registers, R2 = n or not
    (``python docs/dev/two_registers_empty_buffer.py 6`` checks n <= 6)."""
    memo: dict[tuple, bool] = {}
    seen: set[tuple] = set()
    verdicts: Counter[tuple[str, bool]] = Counter()
    for n in range(1, 5):
        for c in reachable(n, exit_legal):
            if c.is_terminal():
                continue
            for move in (m for m in Move if table4_legal(c, m)):
                after = successor(c, move)
                key = configuration_key(after)
                if after.r1 is None or not after.buffer_empty or key in seen:
                    continue
                seen.add(key)
                verdict = empty_buffer_closed_form(after)
                kind = "R1 alone" if after.r2 is None else "R2 = n" if after.r2 == n else "R2 < n"
                verdicts[kind, verdict] += 1
                assert verdict == completable_by_search(after, memo), after
    assert len(verdicts) == 6 and min(verdicts.values()) >= 40, verdicts


def test_empty_buffer_closed_forms_are_exact_on_long_random_walks() -> None:
    """Seeded random walks under the rule over sentences of 7 to 30 words: every Table 4
    successor with an empty buffer and both registers held is decided as the memoised
    search decides it (the exhaustive checks stop at n = 6)."""
    rng = random.Random(20261203)
    verdicts: Counter[bool] = Counter()
    for _ in range(150):
        c = Configuration.initial(rng.randint(7, 30))
        while not c.is_terminal():
            legal = [m for m in Move if exit_legal(c, m)]
            if c.r2 is not None and c.buffer_empty:
                for move in (m for m in Move if table4_legal(c, m)):
                    after = successor(c, move)
                    if after.r2 is not None and after.buffer_empty:
                        verdict = both_registers_empty_buffer(after)
                        verdicts[verdict] += 1
                        assert verdict == completable_by_search(after, {}), after
            apply_move(c, rng.choice(legal))
    assert len(verdicts) == 2 and min(verdicts.values()) >= 50, verdicts


def test_closed_forms_equal_the_simulation_on_random_walks() -> None:
    """Seeded random walks under the rule over sentences of 8 to 40 words: at every step
    the mask by closed forms equals the simulated one, leaves the configuration unchanged
    (successors share its lists), and the walk ends in a single-rooted tree."""
    rng = random.Random(20261125)
    phases: Counter[str] = Counter()
    for _ in range(80):
        c = Configuration.initial(rng.randint(8, 40))
        while not c.is_terminal():
            before = (configuration_key(c), list(c.leftmost), list(c.rightmost), list(c.arcs))
            legal = [exit_legal(c, m) for m in Move]
            assert (configuration_key(c), c.leftmost, c.rightmost, c.arcs) == before
            assert legal == [exit_legal_by_simulation(c, m) for m in Move], c
            phases[phase(c)] += 1
            apply_move(c, rng.choice([m for m, ok in zip(Move, legal, strict=True) if ok]))
        check_tree(c.heads(), single_root=True)
    assert len(phases) == 7, phases  # every non-terminal phase visited


def deep_configuration(rng: random.Random, smallest: int = 12, largest: int = 18) -> Configuration:
    """An empty buffer, both registers held, R2 = n and a stack of more than ten words (a
    random forest over 0..n, ``smallest <= n <= largest``, R1 anywhere left of n, most other
    words on the stack)."""
    while True:
        n = rng.randint(smallest, largest)
        c = random_forest(rng, n, rng.choice((0.5, 0.7, 0.9)))
        if c is None:
            continue
        c.front, c.r2, c.r1 = n + 1, n, rng.randrange(n)
        c.stack = [v for v in range(n) if v != c.r1 and rng.random() < 0.85]
        c.covered1, c.covered2 = rng.random() < 0.3, rng.random() < 0.3
        c.last = rng.randint(-1, n)
        if len(c.stack) > 10:
            return c


def test_the_search_hands_long_ones_to_the_tensor_enumeration(monkeypatch) -> None:
    """With R2 = n the search of G2 stops after ``SEARCH_BUDGET`` sets of plays and the
    tensor enumeration decides; the two agree on deep stacks, where the search can take
    seconds (with no budget, it is the reference)."""
    rng = random.Random(7)
    configs = [deep_configuration(rng) for _ in range(80)]
    searched = [empty_buffer._clear_returns_r2(c, empty_buffer._Plays(c)) for c in configs]
    assert Counter(searched)[True] >= 20 and Counter(searched)[False] >= 20
    monkeypatch.setattr(empty_buffer, "SEARCH_BUDGET", 0)
    assert [both_registers_empty_buffer(c) for c in configs] == searched


def test_the_tensor_enumeration_leaves_no_dead_end(monkeypatch) -> None:
    """Every configuration of G2 decided by the tensor enumeration (budget 0): seeded random
    walks of 7 to 14 words under the rule still meet no dead end and end in single-rooted
    trees."""
    monkeypatch.setattr(empty_buffer, "SEARCH_BUDGET", 0)
    calls: Counter[bool] = Counter()

    def enumeration(*args):
        found = enumerate_plays(*args)
        calls[bool(found)] += 1
        return found

    enumerate_plays = empty_buffer.clear_returns_r2
    monkeypatch.setattr(empty_buffer, "clear_returns_r2", enumeration)
    rng = random.Random(3)
    for _ in range(200):
        c = Configuration.initial(rng.randint(7, 14))
        while not c.is_terminal():
            legal = [m for m in Move if exit_legal(c, m)]
            assert legal, c
            apply_move(c, rng.choice(legal))
        check_tree(c.heads(), single_root=True)
    assert min(calls[True], calls[False]) >= 20, calls
