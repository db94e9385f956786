"""Paired significance tests for two parsers on the same gold test set.

Gómez-Rodríguez & Nivre (2013) Table 2 mark LAS differences "at the 0.05 level using McNemar's
test"; both tests here compare two systems A and B that parsed the same sentences:

* :func:`mcnemar` on per-word correctness (McNemar 1947): only the discordant words count,
  ``b`` (A right, B wrong) and ``c`` (A wrong, B right).  Under the null hypothesis each
  discordant word is a fair coin, so with few discordant words the two-sided p-value is the
  exact binomial one, ``min(1, 2 * P(X <= min(b, c)))`` for ``X ~ Bin(b + c, 1/2)``; with many,
  the chi-square statistic with continuity correction (Edwards 1948),
  ``(|b - c| - 1)^2 / (b + c)``, on one degree of freedom.
* :func:`paired_bootstrap` over sentences (Efron & Tibshirani 1993; Koehn 2004;
  Berg-Kirkpatrick et al. 2012): resample the test sentences with replacement, recompute the
  score difference B - A (a ratio of summed counts, so long sentences weigh more, as in UAS),
  and read a percentile confidence interval and a two-sided p-value off the resampled
  differences, the latter under the null shifted to zero: the share of resamples with
  ``|d* - d| >= |d|``, smoothed to ``(count + 1) / (resamples + 1)`` so that it is never 0.

Pure functions over plain sequences; no SciPy (the chi-square tail on one degree of freedom is
``erfc(sqrt(x / 2))``).  :func:`word_correctness` and :func:`sentence_counts` turn gold and
predicted trees into the inputs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

#: Below this many discordant words McNemar's test is exact (binomial); the chi-square
#: approximation is commonly trusted from about 25 on.
EXACT_BELOW = 25


@dataclass(frozen=True)
class McNemarResult:
    """McNemar's test of A against B on paired binary outcomes."""

    a_only: int
    """``b``: items A got right and B got wrong."""
    b_only: int
    """``c``: items B got right and A got wrong."""
    statistic: float | None
    """The continuity-corrected chi-square statistic; ``None`` for the exact test."""
    p_value: float
    method: Literal["exact", "chi2"]

    def significant(self, alpha: float = 0.05) -> bool:
        return self.p_value < alpha


def binomial_two_sided(k: int, n: int) -> float:
    """Two-sided exact p-value of ``k`` successes in ``n`` fair coin tosses: twice the
    smaller tail, capped at 1."""
    low = min(k, n - k)
    tail = sum(math.comb(n, i) for i in range(low + 1)) / 2**n
    return min(1.0, 2.0 * tail)


def chi2_sf_1df(statistic: float) -> float:
    """``P(X >= statistic)`` for a chi-square variable with one degree of freedom."""
    return math.erfc(math.sqrt(max(statistic, 0.0) / 2.0))


def mcnemar_counts(a_only: int, b_only: int, *, exact_below: int = EXACT_BELOW) -> McNemarResult:
    """McNemar's test from the two discordant counts (see the module docstring)."""
    if a_only < 0 or b_only < 0:
        raise ValueError(f"discordant counts must be non-negative, got {a_only}, {b_only}")
    discordant = a_only + b_only
    if discordant < exact_below:
        p = 1.0 if discordant == 0 else binomial_two_sided(a_only, discordant)
        return McNemarResult(a_only, b_only, None, p, "exact")
    statistic = (abs(a_only - b_only) - 1) ** 2 / discordant
    return McNemarResult(a_only, b_only, statistic, chi2_sf_1df(statistic), "chi2")


def mcnemar(
    correct_a: Sequence[bool], correct_b: Sequence[bool], *, exact_below: int = EXACT_BELOW
) -> McNemarResult:
    """McNemar's test on paired per-item correctness of systems A and B."""
    if len(correct_a) != len(correct_b):
        raise ValueError(f"unpaired outcomes: {len(correct_a)} vs {len(correct_b)} items")
    a_only = sum(1 for a, b in zip(correct_a, correct_b, strict=True) if a and not b)
    b_only = sum(1 for a, b in zip(correct_a, correct_b, strict=True) if b and not a)
    return mcnemar_counts(a_only, b_only, exact_below=exact_below)


@dataclass(frozen=True)
class BootstrapResult:
    """Paired bootstrap of the score difference B - A (percentage points)."""

    difference: float
    low: float
    high: float
    """The percentile interval of the resampled differences at ``confidence``."""
    p_value: float
    resamples: int
    confidence: float

    def significant(self, alpha: float = 0.05) -> bool:
        return self.p_value < alpha


def paired_bootstrap(
    counts_a: Sequence[tuple[int, int]],
    counts_b: Sequence[tuple[int, int]],
    *,
    resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
    chunk: int = 500,
) -> BootstrapResult:
    """Paired bootstrap over sentences of ``100 * sum(correct) / sum(total)``.

    ``counts_a[i]`` and ``counts_b[i]`` are ``(correct, total)`` of sentence ``i`` for A and B;
    the totals must agree (same gold sentence).  Deterministic for a given ``seed``.
    """
    if len(counts_a) != len(counts_b):
        raise ValueError(f"unpaired sentences: {len(counts_a)} vs {len(counts_b)}")
    if not counts_a:
        raise ValueError("no sentences to resample")
    a = np.asarray(counts_a, dtype=np.float64).reshape(-1, 2)
    b = np.asarray(counts_b, dtype=np.float64).reshape(-1, 2)
    if not np.array_equal(a[:, 1], b[:, 1]):
        raise ValueError("the two systems' sentence totals differ: not the same gold sentences")
    if a[:, 1].sum() <= 0:
        raise ValueError("no scored items")
    delta = b[:, 0] - a[:, 0]
    total = a[:, 1]
    observed = 100.0 * delta.sum() / total.sum()
    rng = np.random.default_rng(seed)
    sentences = len(total)
    uniform = np.full(sentences, 1.0 / sentences)
    differences = np.empty(resamples)
    for lo in range(0, resamples, chunk):
        size = min(chunk, resamples - lo)
        # How often each sentence is drawn in each resample (same law as index sampling).
        weights = rng.multinomial(sentences, uniform, size=size).astype(np.float64)
        denominators = weights @ total
        # A resample can (rarely) draw only empty sentences; it has no score difference.
        safe = np.where(denominators > 0, denominators, 1.0)
        differences[lo : lo + size] = np.where(
            denominators > 0, 100.0 * (weights @ delta) / safe, 0.0
        )
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(differences, [tail, 1.0 - tail])
    extreme = int(np.count_nonzero(np.abs(differences - observed) >= abs(observed)))
    p_value = (extreme + 1) / (resamples + 1)
    return BootstrapResult(
        float(observed), float(low), float(high), min(1.0, p_value), resamples, confidence
    )


def word_correctness(
    gold_heads: Sequence[int],
    gold_deprels: Sequence[str],
    pred_heads: Sequence[int],
    pred_deprels: Sequence[str | None],
    *,
    labeled: bool,
) -> list[bool]:
    """Per word of one sentence: correct head (and full label when ``labeled``)."""
    if not len(gold_heads) == len(gold_deprels) == len(pred_heads) == len(pred_deprels):
        raise ValueError("gold and predicted trees differ in length")
    return [
        gh == ph and (not labeled or gl == pl)
        for gh, gl, ph, pl in zip(gold_heads, gold_deprels, pred_heads, pred_deprels, strict=True)
    ]


def sentence_counts(correct: Sequence[bool]) -> tuple[int, int]:
    """``(correct, total)`` of one sentence's per-word outcomes, for :func:`paired_bootstrap`."""
    return sum(map(bool, correct)), len(correct)
