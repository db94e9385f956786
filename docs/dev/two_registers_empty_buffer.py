"""Exact completability of two-registers configurations with an empty buffer and a register
held: the checks behind docs/dev/two-registers-completability.md ("Empty buffer, R1 alone",
"Empty buffer, both registers held").

On every Table 4 successor in that phase of every configuration reachable under the exit
rule with n words, against exact completability by memoised search over Table 4 moves
(:func:`endings` also records how the Clear that empties the registers ends the parse):

* R1 alone: ``r1_empty_buffer_closed_form`` is exact;
* both registers: ``both_registers_empty_buffer`` is exact; with R2 = n the only ending is
  G2 (Clear returns R2 = n), with R2 < n the endings are T (Clear ends the parse) and G1
  (Clear returns σ1 = n);
* how many completable configurations the exit plan E itself finishes (the rule accepts
  every completable one there).

    python docs/dev/two_registers_empty_buffer.py 6      # n = 1..6, about 3 minutes
"""

from __future__ import annotations

import sys
from collections import Counter

from two_registers_exhaustive import key, reachable, table4_successors

from neuralparse.systems.two_registers.configuration import (
    Configuration,
    Move,
    follows_to_tree,
    gamma,
    successor,
    table4_legal,
)
from neuralparse.systems.two_registers.empty_buffer import (
    both_registers_empty_buffer,
    r1_empty_buffer_closed_form,
)
from neuralparse.systems.two_registers.exit import exit_legal, exit_move
from neuralparse.systems.two_registers.registers_empty import gamma_closed_form


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
            part = "R1 alone"
            wrong[part] += r1_empty_buffer_closed_form(c) != bool(ends)
        else:
            part = "both registers, R2 = n" if c.r2 == n else "both registers, R2 < n"
            wrong[part] += both_registers_empty_buffer(c) != bool(ends)
        counts[part, tuple(sorted(ends)), follows_to_tree(c, exit_move)] += 1
    print(f"n={n}: {len(phase)} successors with an empty buffer and a register held")
    for (part, ends, by_exit), count in sorted(counts.items()):
        plan = "E finishes them" if by_exit else "E does not finish them"
        print(f"  {part}, endings {'+'.join(ends) or 'none'}: {count} ({plan})")
    print(f"  disagreements: {dict(wrong)}")
    assert not sum(wrong.values()), wrong


if __name__ == "__main__":
    top = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    for size in range(1, top + 1):
        check(size)
