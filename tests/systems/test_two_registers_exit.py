"""The closed forms of the two-registers exit rule (:mod:`neuralparse.systems.two_registers.exit`)
against the simulation of the exit plan they replace (docs/dev/two-registers-completability.md;
``python docs/dev/two_registers_exhaustive.py 6 --exit`` checks n <= 6)."""

from __future__ import annotations

import random
from collections import Counter

from neuralparse.systems.two_registers.configuration import (
    Configuration,
    Move,
    apply_move,
    table4_legal,
)
from neuralparse.systems.two_registers.empty_buffer import (
    r1_empty_buffer_closed_form,
    registers_trapped_below_a_headless_word,
    stuck_right_of_registers,
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


def test_no_completable_configuration_is_cut_short() -> None:
    """The two quick tests of the empty-buffer phase claim that no move sequence completes
    the configuration; exhaustively for n <= 4 (memoised search) they never claim it of a
    completable one, and they do fire."""
    memo: dict[tuple, bool] = {}
    fired: Counter[str] = Counter()
    for c in reachable(4, exit_legal):
        if c.is_terminal():
            continue
        for move in (m for m in Move if table4_legal(c, m)):
            after = successor(c, move)
            if after.r1 is None or not after.buffer_empty:
                continue
            tests = (stuck_right_of_registers, registers_trapped_below_a_headless_word)
            for test in tests:
                if test(after):
                    fired[test.__name__] += 1
                    assert not completable_by_search(after, memo), (test.__name__, after)
    assert len(fired) == 2 and min(fired.values()) >= 10, fired


def test_r1_alone_with_an_empty_buffer_is_decided_exactly() -> None:
    """Empty buffer, R1 held alone: the closed form is exact completability (memoised search
    over Table 4 moves) on every Table 4 successor of every configuration reachable under
    the rule, n <= 4, completable or not, by every way of ending (Clear ends the parse,
    Clear returns n; ``python docs/dev/two_registers_empty_buffer.py 6`` checks n <= 6)."""
    memo: dict[tuple, bool] = {}
    seen: set[tuple] = set()
    verdicts: Counter[bool] = Counter()
    for n in range(1, 5):
        for c in reachable(n, exit_legal):
            if c.is_terminal():
                continue
            for move in (m for m in Move if table4_legal(c, m)):
                after = successor(c, move)
                key = configuration_key(after)
                if (
                    after.r1 is None
                    or after.r2 is not None
                    or not after.buffer_empty
                    or key in seen
                ):
                    continue
                seen.add(key)
                verdict = r1_empty_buffer_closed_form(after)
                verdicts[verdict] += 1
                assert verdict == completable_by_search(after, memo), after
    assert min(verdicts.values()) >= 300, verdicts


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
