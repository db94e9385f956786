"""Exhaustive check of the two-registers fast-path closed form.

See docs/dev/two-registers-completability.md.

For every configuration reachable under the reference mask :func:`is_legal` with n words
(n <= 6 takes a few minutes), on the fast rows of :mod:`neuralparse.systems.two_registers_mask`
(registers empty, buffer not empty, ``β1 > last``) it compares, for each of the 12 moves, the
closed form (Table 4 in O(1) and the dead-end rule (I0) on the successor) with
:func:`is_legal`, and counts how many reachable non-terminal configurations are fast rows.

It also checks the register-phase closed form found for phase A (R1 held, R2 empty, buffer
not empty) on every Table 4 successor of a reachable configuration: the 16 completion plans
finish such a configuration iff the phase-A exit (:func:`phase_a_exit`) does iff
:func:`phase_a_closed_form` holds.  ``--plans`` instead reports how many of the configurations
on the oracle's derivations (every 2-CI tree with n words) each completion plan finishes.

    python docs/dev/two_registers_exhaustive.py 6
    python docs/dev/two_registers_exhaustive.py 5 --plans
"""

from __future__ import annotations

import sys
from collections import Counter
from itertools import product

from neuralparse.errors import TreeError
from neuralparse.systems.two_registers import (
    COMPLETION_PLANS,
    Configuration,
    Move,
    _arc_eager_completion_move,
    apply_move,
    completable,
    follows_to_tree,
    is_legal,
    successor,
    table4_legal,
)
from neuralparse.systems.two_registers_oracle import oracle_guide
from neuralparse.trees.core import check_tree
from neuralparse.trees.crossing import is_k_crossing_interval

INF = 1 << 30


def key(c: Configuration) -> tuple:
    return (tuple(c.stack), c.front, c.r1, c.r2, tuple(c.head), c.covered1, c.covered2, c.last)


def reachable(n: int) -> list[Configuration]:
    seen: dict[tuple, Configuration] = {}
    todo = [Configuration.initial(n)]
    while todo:
        c = todo.pop()
        if key(c) in seen:
            continue
        seen[key(c)] = c
        if not c.is_terminal():
            todo += [successor(c, m) for m in Move if is_legal(c, m)]
    return list(seen.values())


def i0(c: Configuration) -> bool:
    """root free ∨ minC < minH over the stack words other than 0."""
    headless = [v for v in c.stack if v != 0 and c.head[v] is None]
    connected = [v for v in c.stack if v != 0 and c.tree_root(v) == 0]
    return not c.root_has_dependent or min(connected, default=INF) < min(headless, default=INF)


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
        return _arc_eager_completion_move(c)
    s1 = c.sigma1
    if c.r2 is None:
        if s1 is not None and s1 > c.r1:
            return Move.LEFT_ARC if c.head[s1] is None else Move.REDUCE
        return Move.STORE_NO_ARC
    return Move.CLEAR


def phase_a_closed_form(c: Configuration) -> bool:
    """(I0) over the stack the phase-A exit leaves: the words below R1 and R1 itself, R1
    headless if it is, connected if its tree root is 0, otherwise headed and not connected
    (its tree root is a stack word left of it, or a headless word right of it, which the exit
    hangs below β1)."""
    r1 = c.r1
    assert r1 is not None
    below = [v for v in c.stack if v < r1]
    r1_headless = r1 != 0 and c.head[r1] is None
    r1_connected = r1 != 0 and c.head[r1] is not None and c.tree_root(r1) == 0
    headless = [v for v in below if v != 0 and c.head[v] is None] + [r1] * r1_headless
    connected = [v for v in below if v != 0 and c.tree_root(v) == 0] + [r1] * r1_connected
    return not c.root_has_dependent or min(connected, default=INF) < min(headless, default=INF)


def check_phase_a(configs: list[Configuration]) -> None:
    """Closed form = phase-A exit = the 16 plans on every Table 4 successor in phase A."""
    successors: dict[tuple, Configuration] = {}
    for c in configs:
        if not c.is_terminal():
            for move in Move:
                if table4_legal(c, move):
                    after = successor(c, move)
                    successors[key(after)] = after
    phase_a = [
        c for c in successors.values() if c.r1 is not None and c.r2 is None and not c.buffer_empty
    ]
    wrong = sum(
        len({phase_a_closed_form(c), follows_to_tree(c, phase_a_exit), completable(c)}) > 1
        for c in phase_a
    )
    done = sum(map(phase_a_closed_form, phase_a))
    print(f"phase A: {len(phase_a)} successors, {done} completable, {wrong} disagreements")
    assert not wrong


def oracle_configurations(n: int) -> list[Configuration]:
    """Every configuration on the oracle's derivations (full mask) of the 2-CI trees."""
    seen: dict[tuple, Configuration] = {}
    for heads in product(range(n + 1), repeat=n):
        tree = list(heads)
        try:
            check_tree(tree, single_root=True)
        except TreeError:
            continue
        if not is_k_crossing_interval(tree, 2):
            continue
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


if __name__ == "__main__":
    top = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    for n in range(1, top + 1):
        if "--plans" in sys.argv:
            plan_coverage(n)
        else:
            main(n)
