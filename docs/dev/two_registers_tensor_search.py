"""The tensor form of two-registers' both-registers empty-buffer search, checked against the
reference: the check behind docs/dev/two-registers-completability.md ("The exit rule as
tensor operations", row "empty buffer, both registers").

On every Table 4 successor with an empty buffer and both registers held of every
configuration reachable under the exit rule with n words, the endings computed in tensors
(:mod:`neuralparse.systems.two_registers.tensor_both_registers`: with R2 < n, G1, Clear
returning σ1 = n, and T, Clear ending the parse; with R2 = n, G2, Clear returning R2) must
equal the reference's searches (:mod:`neuralparse.systems.two_registers.empty_buffer`).
Prints, for R2 < n and R2 = n, the number of such configurations, of completable ones, and
of disagreements (exit status 1 if any).

    python docs/dev/two_registers_tensor_search.py 6      # n = 6, about 4 minutes
"""

from __future__ import annotations

import sys
from pathlib import Path

from two_registers_exhaustive import reachable, table4_successors

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from neuralparse.systems.two_registers.empty_buffer import (
    _clear_ends_the_parse,
    _clear_returns_r2,
    _clear_returns_sigma1,
    _Plays,
)
from neuralparse.systems.two_registers.exit import exit_legal
from neuralparse.systems.two_registers.tensor_both_registers import (
    clear_ends_the_parse,
    clear_returns_r2,
    clear_returns_sigma1,
)
from tests.systems.test_two_registers_tensor_rule import words_of

CHUNK = 256


def main(n: int) -> int:
    phase = [
        c
        for c in table4_successors(reachable(n, exit_legal))
        if c.buffer_empty and c.r1 is not None and c.r2 is not None
    ]
    disagreements = 0
    for name, configs, tensor, reference in (
        (
            "R2 < n (G1, T)",
            [c for c in phase if c.r2 != c.n],
            lambda w: zip(
                clear_returns_sigma1(w).tolist(), clear_ends_the_parse(w).tolist(), strict=True
            ),
            lambda c: (_clear_returns_sigma1(c), _clear_ends_the_parse(c, _Plays(c))),
        ),
        (
            "R2 = n (G2)",
            [c for c in phase if c.r2 == c.n],
            lambda w: clear_returns_r2(w, w.head.shape[1]).tolist(),
            lambda c: _clear_returns_r2(c, _Plays(c)),
        ),
    ):
        completable = wrong = 0
        for start in range(0, len(configs), CHUNK):
            chunk = configs[start : start + CHUNK]
            for c, got in zip(chunk, tensor(words_of(chunk)), strict=True):
                expected = reference(c)
                completable += any(expected) if isinstance(expected, tuple) else expected
                if got != expected:
                    wrong += 1
                    print(f"disagree ({name}): tensors {got}, reference {expected}: {c}")
        print(
            f"n = {n}, {name}: {len(configs)} configurations, {completable} completable; "
            f"{wrong} disagreements"
        )
        disagreements += wrong
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5))
