"""Exact completability of two-registers configurations with an empty buffer and a register
held: the checks behind docs/dev/two-registers-completability.md ("Empty buffer, R1 alone",
"How the completable both-register configurations end").

On every Table 4 successor in that phase of every configuration reachable under the exit
rule with n words, against exact completability by memoised search over Table 4 moves
(:func:`endings` also records how the Clear that empties the registers ends the parse):

* R1 alone: ``r1_empty_buffer_closed_form`` is exact;
* both registers, R2 = n: the only ending is G2 (Clear returns R2 = n), decided by the
  search over scenarios of :func:`g2_by_scenarios` (those of T for each depth of the Clear);
* both registers, R2 < n: the endings are T (Clear ends the parse) and G1 (Clear returns
  σ1 = n); "G1 possible" is decided locally by :func:`g1_local`, and "T possible" by the
  search over scenarios of :func:`t_by_scenarios`, which fixes only who adopts each
  headless register and which register heads the few headless words whose trees hold a
  register or an adopter; every other headless word takes R1 when its turn allows that,
  else R2 (R2 first when R1 is the root, which can give one head only).  The adopters can
  be sought among the lowest stack word of each kind (:func:`adopter_kind`) only.

    python docs/dev/two_registers_empty_buffer.py 6      # n = 1..6, about 5 minutes
"""

from __future__ import annotations

import sys
from collections import Counter
from itertools import combinations, permutations, product

from two_registers_exhaustive import key, reachable, table4_successors

from neuralparse.systems.two_registers.configuration import (
    REGISTER_STACK_MOVES,
    Configuration,
    Move,
    apply_move,
    gamma,
    successor,
    table4_legal,
)
from neuralparse.systems.two_registers.empty_buffer import r1_empty_buffer_closed_form
from neuralparse.systems.two_registers.exit import exit_finishes, exit_legal
from neuralparse.systems.two_registers.registers_empty import gamma_closed_form

RS = {(k, to_register): move for move, (k, to_register) in REGISTER_STACK_MOVES.items()}


def endings(c: Configuration, memo: dict[tuple, frozenset[str]]) -> frozenset[str]:
    """How some move sequence completes ``c`` (empty buffer, a register held): by a Clear
    that ends the parse ("T"), returns σ1 = n ("G1") or returns R2 = n ("G2"); empty when
    none does."""
    k = key(c)
    if k not in memo:
        memo[k] = frozenset()  # a configuration on the current path does not complete itself
        found: set[str] = set()
        for move in (m for m in Move if table4_legal(c, m)):
            after = successor(c, move)
            if move is not Move.CLEAR:
                found |= endings(after, memo)
            elif gamma(c) is None:
                if after.unattached == 0:
                    found.add("T")
            elif gamma_closed_form(after):
                found.add("G1" if gamma(c) == c.sigma1 else "G2")
        memo[k] = frozenset(found)
    return memo[k]


def g1_local(c: Configuration) -> bool:
    """G1 needs σ1 = n alone right of R1; only n's own turn (at most three Register-Stack
    arcs) comes before the Clear, after which ``gamma_closed_form`` decides."""
    stack = c.stack
    if not stack or stack[-1] != c.n or (len(stack) > 1 and stack[-2] > c.r1):  # type: ignore[operator]
        return False
    frontier = [c]
    for _ in range(4):
        arcs = []
        for d in frontier:
            if table4_legal(d, Move.CLEAR) and gamma_closed_form(successor(d, Move.CLEAR)):
                return True
            arcs += [successor(d, m) for m in RS.values() if table4_legal(d, m)]
        frontier = arcs
    return False


def _turn(c: Configuration, arcs: list[Move]) -> Configuration | None:
    """σ1's turn: ``arcs`` in the first order in which all are legal."""
    for order in permutations(arcs):
        d = c.copy()
        for move in order:
            if not table4_legal(d, move):
                break
            apply_move(d, move)
        else:
            return d
    return None


def _word_turn(
    c: Configuration,
    d: Configuration,
    giver: dict[int, int],
    adopter: dict[int, int],
    auto: set[int],
) -> Configuration | None:
    """σ1's turn in a scenario on ``c``: it adopts the registers ``adopter`` gives it and
    takes its head from register ``giver[w]`` (words in ``auto``: R1 when legal, else R2; R2
    first when R1 = 0, which can give one head only); ``None`` when no order is legal."""
    w = d.stack[-1]
    adopt = [RS[k, True] for k, x in adopter.items() if x == w]
    if w in giver:
        heads = [[RS[giver[w], False]]]
    elif w in auto:
        heads = [[RS[k, False]] for k in ((2, 1) if c.r1 == 0 else (1, 2))]
    else:
        heads = [[]]  # an adopter with its head already
    for head in heads:
        after = _turn(d, adopt + head)
        if after is not None:
            return after
    return None


def _popped(d: Configuration, w: int) -> Configuration | None:
    """``d`` with ``w`` gone from the top (by its own arc already, or reduced)."""
    if not d.stack or d.stack[-1] != w:
        return d
    return successor(d, Move.REDUCE) if table4_legal(d, Move.REDUCE) else None


def _plays_to_t(
    c: Configuration, giver: dict[int, int], adopter: dict[int, int], auto: set[int]
) -> bool:
    """Whether processing the stack top-down ends in a complete tree by a Clear that ends
    the parse: each word takes its turn (:func:`_word_turn`) and is popped; words with
    nothing to do are reduced."""
    todo = set(giver) | set(adopter.values()) | auto
    d: Configuration | None = c
    while todo and d is not None:
        if not d.stack:
            return False
        w = d.stack[-1]
        if w in todo:
            d = _word_turn(c, d, giver, adopter, auto)
            todo.discard(w)
            if d is not None and not todo and not table4_legal(d, Move.REDUCE):
                break  # w may be the Clear's σ1
        if d is not None:
            d = _popped(d, w)
    while d is not None and not (table4_legal(d, Move.CLEAR) and gamma(d) is None):
        d = _popped(d, d.stack[-1]) if d.stack else None
    return d is not None and successor(d, Move.CLEAR).unattached == 0


def adopter_kind(c: Configuration, x: int) -> tuple[str, str]:
    """A stack word's region (right of R2, between the registers, left of R1 right or not
    right of ``last``, the root) and status (headless, connected, in the tree of R1, of R2 or
    of a headless stack word; the root free or not)."""
    region = "U" if x > c.r2 else "M" if x > c.r1 else "0" if x == 0 else "L"  # type: ignore[operator]
    if region == "L":
        region += ">last" if x > c.last else "<=last"
    if x == 0:
        return region, "free" if c.leftmost[0] is None else "taken"
    if c.head[x] is None:
        return region, "headless"
    root = c.tree_root(x)
    return region, {0: "connected", c.r1: "R1 tree", c.r2: "R2 tree"}.get(root, "word tree")


def t_by_scenarios(c: Configuration, lowest_of_each_kind: bool = False) -> bool:
    """Whether T is possible with both registers held: some choice of adopters for the
    headless registers and of registers for the headless words that are tree roots of a
    register or an adopter (the only ones whose choice can close a cycle) plays to a
    complete tree.  ``lowest_of_each_kind``: adopters only among the lowest stack word of
    each :func:`adopter_kind`."""
    headless = {w for w in c.stack if w != 0 and c.head[w] is None}
    needs = [k for k in (1, 2) if c.register(k) != 0 and c.head[c.register(k)] is None]  # type: ignore[index]
    candidates = c.stack
    if lowest_of_each_kind:
        lowest: dict[tuple[str, str], int] = {}
        for w in c.stack:
            lowest.setdefault(adopter_kind(c, w), w)
        candidates = sorted(lowest.values())
    for adopters in product(candidates, repeat=len(needs)):
        roots = {c.tree_root(v) for v in (c.r1, c.r2, *adopters)}  # type: ignore[arg-type]
        special = sorted(roots & headless)
        for givers in product((1, 2), repeat=len(special)):
            giver = dict(zip(special, givers, strict=True))
            adopter = dict(zip(needs, adopters, strict=True))
            if _plays_to_t(c, giver, adopter, headless - set(special)):
                return True
    return False


def g2_by_scenarios(c: Configuration, lowest_of_each_kind: bool = False) -> bool:
    """Whether G2 is possible (R2 = n held with R1, empty buffer): some number of top stack
    words takes its turn (:func:`_word_turn`) and is popped, the word then on top may still
    adopt, and Clear returns R2 = n, after which ``gamma_closed_form`` decides; the
    scenarios are those of :func:`t_by_scenarios`, for each depth, with registers left
    without an adopter allowed."""
    stack = c.stack
    headless = {w for w in stack if w != 0 and c.head[w] is None}
    held = [k for k in (1, 2) if c.register(k) != 0 and c.head[c.register(k)] is None]  # type: ignore[index]
    for depth in range(len(stack) + 1):
        turns = stack[len(stack) - depth :][::-1]  # top first
        candidates = stack[max(len(stack) - depth - 1, 0) :]
        if lowest_of_each_kind:
            lowest: dict[tuple[str, str], int] = {}
            for w in candidates:
                lowest.setdefault(adopter_kind(c, w), w)
            candidates = sorted(lowest.values())
        for needs in (ks for size in range(len(held) + 1) for ks in combinations(held, size)):
            for adopters in product(candidates, repeat=len(needs)):
                adopter = dict(zip(needs, adopters, strict=True))
                roots = {c.tree_root(v) for v in (c.r1, c.r2, *adopters)}  # type: ignore[arg-type]
                special = sorted(roots & headless & set(turns))
                for givers in product((1, 2), repeat=len(special)):
                    giver = dict(zip(special, givers, strict=True))
                    auto = (headless & set(turns)) - set(special)
                    if _plays_to_g2(c, turns, giver, adopter, auto):
                        return True
    return False


def _plays_to_g2(
    c: Configuration,
    turns: list[int],
    giver: dict[int, int],
    adopter: dict[int, int],
    auto: set[int],
) -> bool:
    """Whether the words ``turns`` (top first) each take their turn and are popped, the
    word then on top adopts what ``adopter`` gives it, and the Clear that returns R2 = n
    leaves a configuration the arc-eager completion finishes."""
    d: Configuration | None = c
    for w in turns:
        if d is None or not d.stack:
            return False
        d = _word_turn(c, d, giver, adopter, auto)
        d = _popped(d, w) if d is not None else None
    if d is not None and d.stack and any(x == d.stack[-1] for x in adopter.values()):
        d = _word_turn(c, d, {}, adopter, set())  # the Clear's σ1 adopts
    if d is None or not table4_legal(d, Move.CLEAR):
        return False
    return gamma_closed_form(successor(d, Move.CLEAR))


def check(n: int) -> None:
    """Every check of the module docstring for sentences of ``n`` words; prints the counts
    of each ending and fails on any disagreement."""
    configs = reachable(n, exit_legal)
    phase = [s for s in table4_successors(configs) if s.r1 is not None and s.buffer_empty]
    memo: dict[tuple, frozenset[str]] = {}
    counts: Counter[tuple] = Counter()
    wrong: Counter[str] = Counter()
    for c in phase:
        ends = endings(c, memo)
        if c.r2 is None:
            wrong["R1 alone"] += r1_empty_buffer_closed_form(c) != bool(ends)
            continue
        part = "R2 = n" if c.r2 == n else "R2 < n"
        counts[part, tuple(sorted(ends)), exit_finishes(c)] += 1
        if part == "R2 = n":
            wrong["R2 = n ends other than G2"] += bool(ends - {"G2"})
            wrong["G2 by scenarios"] += g2_by_scenarios(c) != ("G2" in ends)
            wrong["G2, lowest adopters"] += g2_by_scenarios(c, True) != ("G2" in ends)
        else:
            wrong["G1 local"] += g1_local(c) != ("G1" in ends)
            wrong["T by scenarios"] += t_by_scenarios(c) != ("T" in ends)
            wrong["T, lowest adopters"] += t_by_scenarios(c, True) != ("T" in ends)
    print(f"n={n}: {len(phase)} successors with an empty buffer and a register held")
    for (part, ends, by_exit), count in sorted(counts.items()):
        rule = "the exit rule finishes" if by_exit else "the exit rule does not finish"
        print(f"  both registers, {part}, endings {'+'.join(ends) or 'none'}: {count} ({rule})")
    print(f"  disagreements: {dict(wrong)}")
    assert not sum(wrong.values()), wrong


if __name__ == "__main__":
    top = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    for size in range(1, top + 1):
        check(size)
