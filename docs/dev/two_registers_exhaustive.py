"""Exhaustive check of the two-registers fast-path closed form.

See docs/dev/two-registers-completability.md.

For every configuration reachable under the reference mask :func:`is_legal` with n words
(n <= 6 takes a few minutes), on the fast rows of :mod:`neuralparse.systems.two_registers_mask`
(registers empty, buffer not empty, ``β1 > last``) it compares, for each of the 12 moves, the
closed form (Table 4 in O(1) and the dead-end rule (I0) on the successor) with
:func:`is_legal`, and counts how many reachable non-terminal configurations are fast rows.

    python docs/dev/two_registers_exhaustive.py 6
"""

from __future__ import annotations

import sys
from collections import Counter

from neuralparse.systems.two_registers import Configuration, Move, is_legal, successor

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


if __name__ == "__main__":
    for n in range(1, int(sys.argv[1]) + 1 if len(sys.argv) > 1 else 6):
        main(n)
