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

``--exit`` checks the exit rule of :mod:`neuralparse.systems.two_registers_exit` instead of
the reference mask (:func:`check_exit`): no dead end and only complete terminal
configurations among those reachable under it, the fast-path closed form agrees with it,
the rule allows every move the reference mask allows, on phase B (both registers, buffer
not empty) the closed form :func:`phase_b_closed_form` equals the exit plan's simulation
(and how far both are from exact completability, by memoised search, is reported), and the
static oracle under the rule derives every 2-CI tree the reference derives.

    python docs/dev/two_registers_exhaustive.py 6
    python docs/dev/two_registers_exhaustive.py 5 --plans
    python docs/dev/two_registers_exhaustive.py 6 --exit
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
from neuralparse.systems.two_registers_exit import exit_legal, exit_move
from neuralparse.systems.two_registers_oracle import LegalTest, oracle_guide
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


def gamma_closed_form(c: Configuration) -> bool:
    """Whether the arc-eager completion (every plan's, and E's, with empty registers)
    finishes a configuration whose buffer front is a word put back by Clear (β1 <= last):
    with β1 = n headed, iff β1 is connected; otherwise iff (I0) holds over the stack, or β1
    is headed and connected and every headless stack word lies in the run of headless words
    on top (those go to β1, β1 is shifted and takes the rest of the buffer)."""
    b, stack = c.front, c.stack
    assert c.r1 is None and not c.buffer_empty and b <= c.last
    b_connected = c.tree_root(b) == 0
    if b == c.n and c.head[b] is not None:
        return b_connected
    rest = list(stack)
    while rest and rest[-1] != 0 and c.head[rest[-1]] is None:
        rest.pop()
    only_on_top = all(v == 0 or c.head[v] is not None for v in rest)
    return i0(c) or (c.head[b] is not None and b_connected and only_on_top)


def anchor_on_stack(c: Configuration) -> bool:
    """The only stack word right of R1 is ``β1 − 1``: the exit plan's anchor (phase B)."""
    assert c.r1 is not None
    right = [v for v in c.stack if v > c.r1]
    return right == [c.front - 1] and c.r2 is not None and right[0] > c.r2


def phase_b_closed_form(c: Configuration) -> bool:
    """Whether the exit plan finishes a phase-B configuration (both registers held, buffer
    not empty) without an anchor yet (:func:`anchor_on_stack` false), by the stages of
    docs/dev/two-registers-completability.md instead of a simulation.  Still written over
    the stack lists; every quantity it reads is meant to become O(1) book-keeping."""
    r1, r2 = c.r1, c.r2
    assert r1 is not None and r2 is not None and not c.buffer_empty
    assert not anchor_on_stack(c)
    rf = not c.root_has_dependent
    below = [v for v in c.stack if v < r1]
    between = [v for v in c.stack if r1 < v < r2]
    right = [v for v in c.stack if v > r2]
    registers = {1: r1, 2: r2}
    roots = {k: c.tree_root(r) for k, r in registers.items()}
    connected = {1: (roots[1] == 0 and r1 != 0) or (r1 == 0 and rf), 2: roots[2] == 0}
    headless = {k: r != 0 and c.head[r] is None for k, r in registers.items()}
    covered = {1: c.covered1, 2: c.covered2}

    def may_adopt(word: int, k: int) -> bool:
        """Repair 2: the word's head must not lie between it and the register."""
        g, r = c.head[word], registers[k]
        return g is None or not min(word, r) < g < max(word, r)

    # 1. Words right of R2 are popped; the lowest can adopt (type (2)), and does when
    #    connected (type (3): not when its head is R2).
    if right and c.tree_root(right[0]) == 0 and c.head[right[0]] != r2:
        for k in (1, 2):
            if headless[k] and may_adopt(right[0], k):
                headless[k], connected[k] = False, True
                covered[2] = covered[2] or k == 1  # footnote 2
    # 2. Words between the registers, top down: a connected one adopts; a headless one needs
    #    a register whose tree it does not hold (the root only while free).
    root_used = False
    for m in reversed(between):
        if c.tree_root(m) == 0:
            for k in (1, 2):
                if headless[k] and may_adopt(m, k):
                    headless[k], connected[k] = False, True
        if c.head[m] is not None:
            continue
        usable = {1: roots[1] != m and (r1 != 0 or (rf and not root_used)), 2: roots[2] != m}
        order = (1, 2) if r1 != 0 and connected[1] and not connected[2] else (2, 1)
        k = next((k for k in order if usable[k]), None)
        if k is None:
            return False
        root_used = root_used or (k == 1 and r1 == 0)
        for other in (1, 2):
            if roots[other] == m:  # the register's tree now hangs from R_k
                roots[other] = roots[k]
                connected[other] = connected[other] or connected[k]
    rf = rf and not root_used
    if r1 == 0:
        connected[1] = rf
    # 3. The anchor w = β1 adopts every headless register (R1 covers R2), then hangs from a
    #    connected register: directly, or, when it heads R1, through the next buffer word.
    adopted = {k for k in (1, 2) if headless[k]}
    if 1 in adopted:
        covered[2] = True
    w_connected = False
    if connected[1] or connected[2]:
        w_connected = 1 not in adopted or c.n - c.front >= 1
        if w_connected and not connected[2] and r1 == 0:
            rf = False  # w hangs from the root
    # 4. After Clear, β1 = w: the arc-eager completion over the words below R1 and the
    #    uncovered registers; headless words on top hang from w.
    stack = below + [r for k, r in registers.items() if not covered[k]]
    headed_now = {registers[k] for k in adopted}
    is_headless = lambda v: v != 0 and c.head[v] is None and v not in headed_now  # noqa: E731
    while stack and is_headless(stack[-1]):
        stack.pop()
    headless_words = [v for v in stack if is_headless(v)]
    if w_connected and not headless_words:
        return True
    now_connected = {r for k, r in registers.items() if r != 0 and (w_connected or connected[k])}
    connected_words = [v for v in stack if v != 0 and (c.tree_root(v) == 0 or v in now_connected)]
    return rf or min(connected_words, default=INF) < min(headless_words, default=INF)


def anchored_closed_form(c: Configuration) -> bool:
    """Phase B with the anchor on the stack: E's next few moves keep it there (at most two
    adoptions, a head from a register, Clear) or drop it (popped, or Left-Arced to the next
    word, which anchors instead); each changes O(1) book-keeping, after which a closed form
    above decides.  Written as those moves applied to a copy."""
    assert anchor_on_stack(c)
    d = c.copy()
    for _ in range(6):
        if d.r1 is None or d.buffer_empty or not anchor_on_stack(d):
            break
        move = exit_move(d)
        if move is None or not table4_legal(d, move):
            return False
        apply_move(d, move)
    else:
        raise AssertionError("the anchor stayed more than six moves")
    if d.is_terminal():
        return d.unattached == 0
    if d.r1 is None:
        return gamma_closed_form(d) if d.front <= d.last else i0(d)
    assert d.r2 is not None and not d.buffer_empty
    return phase_b_closed_form(d)


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
    for heads in product(range(n + 1), repeat=n):
        tree = list(heads)
        try:
            check_tree(tree, single_root=True)
        except TreeError:
            continue
        if is_k_crossing_interval(tree, 2):
            trees += 1
            derived += oracle_guide(tree, legal) is not None
    return trees, derived


def check_exit(n: int) -> None:
    """The exit rule: sound, agrees with the fast path, extends the reference mask, has the
    phase-B closed form, complete for the oracle (see the module docstring)."""
    configs = reachable(n, exit_legal)
    live = [c for c in configs if not c.is_terminal()]
    dead = sum(not any(exit_legal(c, m) for m in Move) for c in live)
    incomplete = sum(c.unattached != 0 for c in configs if c.is_terminal())
    fast = [c for c in live if c.r1 is None and not c.buffer_empty and c.front > c.last]
    fast_wrong = sum(closed_form(c, m) != exit_legal(c, m) for c in fast for m in Move)
    narrower = sum(is_legal(c, m) and not exit_legal(c, m) for c in live for m in Move)
    wider = sum(exit_legal(c, m) and not is_legal(c, m) for c in live for m in Move)
    print(f"n={n}: {len(configs)} reachable under the exit rule, {dead} dead ends, ")
    print(f"  {incomplete} incomplete terminals, fast path disagrees on {fast_wrong} pairs")
    print(f"  moves the reference allows and the rule does not: {narrower}; the converse: {wider}")
    # Every distinct Table 4 successor of a configuration reachable under the rule.
    successors = table4_successors(configs)
    phase_b = [c for c in successors if c.r2 is not None and not c.buffer_empty]
    # Closed forms of E elsewhere: phase A (the one found for the phase-A exit, which E
    # extends) and a buffer front put back by Clear.
    phase_a_wrong = gamma_wrong = 0
    for after in successors:
        if after.r1 is not None and after.r2 is None and not after.buffer_empty:
            phase_a_wrong += phase_a_closed_form(after) != follows_to_tree(after, exit_move)
        elif after.r1 is None and not after.buffer_empty and after.front <= after.last:
            gamma_wrong += gamma_closed_form(after) != follows_to_tree(after, exit_move)
    print(f"  closed forms disagree with E: phase A {phase_a_wrong}, β1 = γ {gamma_wrong}")
    memo: dict[tuple, bool] = {}
    exact = [completable_by_search(c, memo) for c in phase_b]
    by_exit = [follows_to_tree(c, exit_move) for c in phase_b]
    by_plans = [completable(c) for c in phase_b]
    fresh = [not anchor_on_stack(c) for c in phase_b]
    form_wrong = sum(
        (phase_b_closed_form(c) if f else anchored_closed_form(c)) != e
        for c, e, f in zip(phase_b, by_exit, fresh, strict=True)
    )
    exit_misses = sum(a and not b for a, b in zip(exact, by_exit, strict=True))
    plan_misses = sum(a and not b for a, b in zip(exact, by_plans, strict=True))
    print(
        f"  phase B: {len(exact)} successors, {sum(exact)} completable, the exit plan "
        f"finishes {sum(by_exit)} (misses {exit_misses}; the plans miss {plan_misses}), the "
        f"closed form disagrees with it on {form_wrong} ({sum(fresh)} without an anchor)"
    )
    trees, derived = derived_trees(n, exit_legal)
    _, reference = derived_trees(n, is_legal)
    print(f"  oracle: {derived} of {trees} 2-CI trees derived (reference mask: {reference})")
    assert not dead and not incomplete and not fast_wrong and not narrower
    assert not form_wrong and not phase_a_wrong and not gamma_wrong and derived == reference


if __name__ == "__main__":
    top = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    for n in range(1, top + 1):
        if "--plans" in sys.argv:
            plan_coverage(n)
        elif "--exit" in sys.argv:
            check_exit(n)
        else:
            main(n)
