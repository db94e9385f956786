"""The two-registers exit rule with an empty buffer, both registers held, R2 = n and a deep
stack: the reference's search of G2 (``empty_buffer._clear_returns_r2``, no budget) against
its enumeration as tensors (``tensor_both_registers.clear_returns_r2`` with a row per
column of the width), on random configurations of the phase; prints, per sentence length,
how many are completable, how many verdicts differ, and what each costs (one thread).

    python docs/dev/two_registers_deep_g2.py [--configs 200] [--lengths 12-20 30 60 120]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from neuralparse.systems.two_registers import empty_buffer
from neuralparse.systems.two_registers.tensor_both_registers import clear_returns_r2
from neuralparse.systems.two_registers.tensor_forms import words_of
from tests.systems.test_two_registers_exit import deep_configuration


def timed(function, *args):
    start = time.perf_counter()
    value = function(*args)
    return value, 1000 * (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=int, default=200, help="per length range")
    parser.add_argument("--lengths", nargs="+", default=["12-20", "30", "60", "120"])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rng = random.Random(args.seed)
    print(
        "| n | configurations | completable | differ | over budget | search ms (mean / max) "
        "| tensors ms (mean / max) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for lengths in args.lengths:
        smallest, _, largest = lengths.partition("-")
        low, high = int(smallest), int(largest or smallest)
        count = args.configs if high <= 20 else max(3, args.configs // (high // 10))
        searched, enumerated, over = [], [], 0
        differ = completable = 0
        for _ in range(count):
            c = deep_configuration(rng, low, high)
            plays = empty_buffer._Plays(c)
            found, search_ms = timed(empty_buffer._clear_returns_r2, c, plays)
            over += empty_buffer._clear_returns_r2(c, plays, empty_buffer.SEARCH_BUDGET) is None
            value, tensor_ms = timed(clear_returns_r2, words_of([c]), len(c.stack) + 1)
            differ += bool(value) != found
            completable += found
            searched.append(search_ms)
            enumerated.append(tensor_ms)
        print(
            f"| {lengths} | {count} | {completable} | {differ} | {over} | "
            f"{statistics.mean(searched):.1f} / {max(searched):.0f} | "
            f"{statistics.mean(enumerated):.1f} / {max(enumerated):.0f} |"
        )


if __name__ == "__main__":
    main()
