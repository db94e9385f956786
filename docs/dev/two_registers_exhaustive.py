"""Exhaustive check of the two-registers fast-path closed form.

See docs/dev/two-registers-completability.md.

For every configuration reachable under the reference mask :func:`is_legal` with n words
(n <= 6 takes a few minutes), on the fast rows of :mod:`neuralparse.systems.two_registers.mask`
(registers empty, buffer not empty, ``β1 > last``) it compares, for each of the 12 moves, the
closed form (Table 4 in O(1) and the dead-end rule (I0) on the successor) with
:func:`is_legal`, and counts how many reachable non-terminal configurations are fast rows.

It also checks the register-phase closed form found for phase A (R1 held, R2 empty, buffer
not empty) on every Table 4 successor of a reachable configuration: the 16 completion plans
finish such a configuration iff the phase-A exit (:func:`phase_a_exit`) does iff
:func:`phase_a_closed_form` holds.  ``--plans`` instead reports how many of the configurations
on the oracle's derivations (every 2-CI tree with n words) each completion plan finishes.

``--exit`` checks the exit rule of :mod:`neuralparse.systems.two_registers.exit` instead of
the reference mask (:func:`check_exit`): on every Table 4 successor of a configuration
reachable under it, the library's closed forms (``exit_finishes``, per phase) equal the
simulation of the exit plan (``exit_finishes_by_simulation``); no dead end and only complete
terminal configurations are reachable, the fast-path closed form agrees with the rule, the
rule allows every move the reference mask allows, how far the exit plan is from exact
completability in phase B (memoised search) is reported, and the static oracle under the
rule derives every 2-CI tree the reference derives.

    python docs/dev/two_registers_exhaustive.py 6
    python docs/dev/two_registers_exhaustive.py 5 --plans
    python docs/dev/two_registers_exhaustive.py 6 --exit
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from itertools import product

from neuralparse.errors import TreeError
from neuralparse.systems.two_registers.configuration import (
    COMPLETION_PLANS,
    Configuration,
    Move,
    apply_move,
    arc_eager_completion_move,
    completable,
    follows_to_tree,
    is_legal,
    successor,
    table4_legal,
)
from neuralparse.systems.two_registers.exit import (
    exit_finishes,
    exit_finishes_by_simulation,
    exit_legal,
    exit_move,
    i0,
    phase,
    phase_a_closed_form,
)
from neuralparse.systems.two_registers.oracle import LegalTest, oracle_guide
from neuralparse.trees.core import check_tree
from neuralparse.trees.crossing import is_k_crossing_interval

INF = 1 << 30


def key(c: Configuration) -> tuple:
    return (tuple(c.stack), c.front, c.r1, c.r2, tuple(c.head), c.covered1, c.covered2, c.last)


def reachable(n: int, legal: LegalTest = is_legal) -> list[Configuration]:
    seen: dict[tuple, Configuration] = {}
    todo = [Configuration.initial(n)]
    while todo:
        c = todo.pop()
        if key(c) in seen:
            continue
        seen[key(c)] = c
        if not c.is_terminal():
            todo += [successor(c, m) for m in Move if legal(c, m)]
    return list(seen.values())


def closed_form(c: Configuration, move: Move) -> bool:
    s1, b1 = c.sigma1, c.beta1
    if move is Move.STORE_NO_ARC:
        return i0(c)
    if move is Move.LEFT_ARC:
        ok = s1 is not None and s1 != 0 and c.head[s1] is None
    elif move is Move.RIGHT_ARC:
        # Acyclicity by tree roots here; the engine sends rows where it cannot tell in O(1)
        # to the reference (``tangled`` in fast_rows).
        ok = s1 is not None and (s1 != 0 or not c.root_has_dependent) and c.tree_root(s1) != b1
    elif move is Move.SHIFT:
        ok = True
    elif move is Move.REDUCE:
        ok = s1 is not None and c.head[s1] is not None
    else:
        return False
    if not ok:
        return False
    after = successor(c, move)
    return after.unattached == 0 if after.is_terminal() else i0(after)


def phase_a_exit(c: Configuration) -> Move | None:
    """A one-way exit from phase A (R1 held, R2 empty, buffer not empty): pop the words above
    R1 (Left-Arc to β1 when headless, else Reduce), Store(no-arc) β1 and Clear at once (γ =
    that β1 comes back, R1 joins the stack), then the arc-eager completion."""
    if c.r1 is None:
        return arc_eager_completion_move(c)
    s1 = c.sigma1
    if c.r2 is None:
        if s1 is not None and s1 > c.r1:
            return Move.LEFT_ARC if c.head[s1] is None else Move.REDUCE
        return Move.STORE_NO_ARC
    return Move.CLEAR


def table4_successors(configs: list[Configuration]) -> list[Configuration]:
    """Every distinct Table 4 successor of the non-terminal ``configs``."""
    successors: dict[tuple, Configuration] = {}
    for c in configs:
        if not c.is_terminal():
            for move in Move:
                if table4_legal(c, move):
                    after = successor(c, move)
                    successors[key(after)] = after
    return list(successors.values())


def check_phase_a(configs: list[Configuration]) -> None:
    """Closed form = phase-A exit = the 16 plans on every Table 4 successor in phase A."""
    phase_a = [
        c
        for c in table4_successors(configs)
        if c.r1 is not None and c.r2 is None and not c.buffer_empty
    ]
    wrong = sum(
        len({phase_a_closed_form(c), follows_to_tree(c, phase_a_exit), completable(c)}) > 1
        for c in phase_a
    )
    done = sum(map(phase_a_closed_form, phase_a))
    print(f"phase A: {len(phase_a)} successors, {done} completable, {wrong} disagreements")
    assert not wrong


def two_ci_trees(n: int) -> Iterator[list[int]]:
    """Every single-rooted 2-Crossing-Interval tree with ``n`` words (head lists)."""
    for heads in product(range(n + 1), repeat=n):
        tree = list(heads)
        try:
            check_tree(tree, single_root=True)
        except TreeError:
            continue
        if is_k_crossing_interval(tree, 2):
            yield tree


def oracle_configurations(n: int) -> list[Configuration]:
    """Every configuration on the oracle's derivations (full mask) of the 2-CI trees."""
    seen: dict[tuple, Configuration] = {}
    for tree in two_ci_trees(n):
        guide = oracle_guide(tree)
        if guide is None:
            continue
        c = Configuration.initial(n)
        for move in guide.moves:
            seen[key(c)] = c.copy()
            apply_move(c, move)
    return list(seen.values())


def plan_coverage(n: int) -> None:
    configs = oracle_configurations(n)
    print(f"n={n}: {len(configs)} configurations on the oracle's derivations")
    for plan in COMPLETION_PLANS:
        print(f"  {sum(follows_to_tree(c, plan) for c in configs):6d}  {plan}")


def main(n: int) -> None:
    configs = reachable(n)
    live = [c for c in configs if not c.is_terminal()]
    fast = [c for c in live if c.r1 is None and not c.buffer_empty and c.front > c.last]
    wrong: Counter[Move] = Counter()
    for c in fast:
        for move in Move:
            if closed_form(c, move) != is_legal(c, move):
                wrong[move] += 1
    print(f"n={n}: {len(configs)} reachable, {len(live)} non-terminal, {len(fast)} fast")
    print(f"closed form disagrees with is_legal on {sum(wrong.values())} (config, move) pairs")
    assert not wrong, wrong
    check_phase_a(configs)


def completable_by_search(c: Configuration, memo: dict[tuple, bool]) -> bool:
    """Exact completability: some sequence of Table 4 moves ends in a complete tree."""
    k = key(c)
    if k not in memo:
        memo[k] = False  # a configuration on the current path does not complete itself
        if c.is_terminal():
            memo[k] = c.unattached == 0
        else:
            memo[k] = any(
                completable_by_search(successor(c, m), memo) for m in Move if table4_legal(c, m)
            )
    return memo[k]


def derived_trees(n: int, legal: LegalTest) -> tuple[int, int]:
    """(2-CI trees with n words, how many of them the oracle derives under ``legal``)."""
    trees = derived = 0
    for tree in two_ci_trees(n):
        trees += 1
        derived += oracle_guide(tree, legal) is not None
    return trees, derived


def check_exit(n: int) -> None:
    """The exit rule: its closed forms equal the simulation of the exit plan, it is sound,
    agrees with the fast path, extends the reference mask, and is complete for the oracle
    (see the module docstring)."""
    configs = reachable(n, exit_legal)
    live = [c for c in configs if not c.is_terminal()]
    # The closed forms against the simulation on every distinct Table 4 successor of a
    # configuration reachable under the rule: where they agree, exit_legal (closed forms)
    # is exit_legal_by_simulation, so the reachable set is the simulated rule's too.
    successors = table4_successors(configs)
    by_phase: Counter[str] = Counter()
    wrong: Counter[str] = Counter()
    for after in successors:
        by_phase[phase(after)] += 1
        wrong[phase(after)] += exit_finishes(after) != exit_finishes_by_simulation(after)
    print(f"n={n}: {len(configs)} reachable under the exit rule; closed forms vs simulation:")
    for name, count in sorted(by_phase.items()):
        print(f"  {name}: {count} successors, {wrong[name]} disagreements")
    dead = sum(not any(exit_legal(c, m) for m in Move) for c in live)
    incomplete = sum(c.unattached != 0 for c in configs if c.is_terminal())
    fast = [c for c in live if c.r1 is None and not c.buffer_empty and c.front > c.last]
    fast_wrong = sum(closed_form(c, m) != exit_legal(c, m) for c in fast for m in Move)
    narrower = sum(is_legal(c, m) and not exit_legal(c, m) for c in live for m in Move)
    wider = sum(exit_legal(c, m) and not is_legal(c, m) for c in live for m in Move)
    print(f"  {dead} dead ends, {incomplete} incomplete terminals, fast path disagrees on")
    print(f"  {fast_wrong} pairs; moves the reference allows and the rule does not: {narrower},")
    print(f"  the converse: {wider}")
    # How far E is from exact completability in phase B.
    phase_b = [c for c in successors if c.r2 is not None and not c.buffer_empty]
    memo: dict[tuple, bool] = {}
    exact = [completable_by_search(c, memo) for c in phase_b]
    by_exit = [follows_to_tree(c, exit_move) for c in phase_b]
    by_plans = [completable(c) for c in phase_b]
    exit_misses = sum(a and not b for a, b in zip(exact, by_exit, strict=True))
    plan_misses = sum(a and not b for a, b in zip(exact, by_plans, strict=True))
    print(
        f"  phase B: {len(exact)} successors, {sum(exact)} completable, the exit plan "
        f"finishes {sum(by_exit)} (misses {exit_misses}; the plans miss {plan_misses})"
    )
    trees, derived = derived_trees(n, exit_legal)
    _, reference = derived_trees(n, is_legal)
    print(f"  oracle: {derived} of {trees} 2-CI trees derived (reference mask: {reference})")
    assert not sum(wrong.values()), wrong
    assert not dead and not incomplete and not fast_wrong and not narrower
    assert derived == reference


if __name__ == "__main__":
    top = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    for n in range(1, top + 1):
        if "--plans" in sys.argv:
            plan_coverage(n)
        elif "--exit" in sys.argv:
            check_exit(n)
        else:
            main(n)
