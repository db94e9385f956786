"""McNemar's test and the paired bootstrap against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from neuralparse.evaluation.significance import (
    binomial_two_sided,
    chi2_sf_1df,
    mcnemar,
    mcnemar_counts,
    paired_bootstrap,
    sentence_counts,
    word_correctness,
)


def test_exact_binomial_by_hand() -> None:
    # 2 of 12: 2 * (C(12,0) + C(12,1) + C(12,2)) / 2^12 = 2 * 79 / 4096.
    assert binomial_two_sided(2, 12) == pytest.approx(158 / 4096)
    assert binomial_two_sided(10, 12) == pytest.approx(158 / 4096)  # symmetric
    assert binomial_two_sided(0, 5) == pytest.approx(2 / 32)
    assert binomial_two_sided(3, 6) == 1.0  # the doubled tail (84/64) is capped


def test_chi_square_tail_at_table_quantiles() -> None:
    # Textbook critical values of chi-square with one degree of freedom.
    assert chi2_sf_1df(3.841459) == pytest.approx(0.05, abs=1e-6)
    assert chi2_sf_1df(6.634897) == pytest.approx(0.01, abs=1e-7)
    assert chi2_sf_1df(10.827566) == pytest.approx(0.001, abs=1e-8)
    assert chi2_sf_1df(0.0) == 1.0


def test_mcnemar_small_counts_are_exact() -> None:
    result = mcnemar_counts(10, 2)
    assert result.method == "exact"
    assert result.statistic is None
    assert result.p_value == pytest.approx(158 / 4096)
    assert result.significant()
    assert mcnemar_counts(0, 0).p_value == 1.0


def test_mcnemar_large_counts_use_continuity_corrected_chi_square() -> None:
    result = mcnemar_counts(30, 15)
    assert result.method == "chi2"
    assert result.statistic == pytest.approx(196 / 45)  # (|30 - 15| - 1)^2 / 45
    assert result.p_value == pytest.approx(math.erfc(math.sqrt(196 / 90)))
    assert 0.036 < result.p_value < 0.038
    balanced = mcnemar_counts(20, 21)
    assert balanced.statistic == pytest.approx(0.0)
    assert balanced.p_value == pytest.approx(1.0)
    assert not balanced.significant()


def test_mcnemar_counts_only_discordant_items() -> None:
    a = [True, True, False, False, True, True, True]
    b = [True, False, True, False, False, False, True]
    result = mcnemar(a, b)
    assert (result.a_only, result.b_only) == (3, 1)
    assert result.p_value == pytest.approx(2 * (1 + 4) / 16)  # 1 of 4, doubled tail
    with pytest.raises(ValueError):
        mcnemar([True], [True, False])


def test_word_correctness_and_sentence_counts() -> None:
    gold_heads, gold_labels = [2, 0, 2], ["nsubj", "root", "obj"]
    pred_heads, pred_labels = [2, 0, 1], ["obj", "root", "obj"]
    assert word_correctness(gold_heads, gold_labels, pred_heads, pred_labels, labeled=False) == [
        True,
        True,
        False,
    ]
    labeled = word_correctness(gold_heads, gold_labels, pred_heads, pred_labels, labeled=True)
    assert labeled == [False, True, False]
    assert sentence_counts(labeled) == (1, 3)


def test_bootstrap_two_sentences_by_hand() -> None:
    # A gets 1 of 2 words, B 2 of 2: d = +50.  Resamples of 2 sentences draw (s1, s1) with
    # probability 1/4 (d* = 0), one of each with 1/2 (d* = 50), (s2, s2) with 1/4 (d* = 100).
    # |d* - 50| >= 50 has probability 1/2; the 95% interval is [0, 100].
    result = paired_bootstrap([(1, 1), (0, 1)], [(1, 1), (1, 1)], resamples=20_000, seed=3)
    assert result.difference == pytest.approx(50.0)
    assert result.p_value == pytest.approx(0.5, abs=0.02)
    assert (result.low, result.high) == (pytest.approx(0.0), pytest.approx(100.0))
    assert not result.significant()


def test_bootstrap_constant_difference_is_as_significant_as_resampling_allows() -> None:
    # B is right on exactly one more word of every 4-word sentence: every resample gives
    # d* = 25 = d, never as far from d as the null 0 is.
    a = [(2, 4), (1, 4), (3, 4), (0, 4)]
    b = [(3, 4), (2, 4), (4, 4), (1, 4)]
    result = paired_bootstrap(a, b, resamples=999, seed=0)
    assert result.difference == pytest.approx(25.0)
    assert (result.low, result.high) == (pytest.approx(25.0), pytest.approx(25.0))
    assert result.p_value == pytest.approx(1 / 1000)
    assert result.significant()


def test_bootstrap_identical_systems_and_determinism() -> None:
    counts = [(3, 5), (7, 9), (0, 2), (4, 4)]
    same = paired_bootstrap(counts, counts, resamples=500)
    assert (same.difference, same.p_value) == (0.0, 1.0)
    other = [(4, 5), (6, 9), (1, 2), (4, 4)]
    first = paired_bootstrap(counts, other, resamples=2000, seed=7)
    assert first == paired_bootstrap(counts, other, resamples=2000, seed=7)
    assert first.difference == pytest.approx(100 * 1 / 20)
    assert first.low <= first.difference <= first.high


def test_bootstrap_rejects_unpaired_input() -> None:
    with pytest.raises(ValueError):
        paired_bootstrap([(1, 2)], [(1, 3)])
    with pytest.raises(ValueError):
        paired_bootstrap([(1, 2)], [(1, 2), (0, 1)])
    with pytest.raises(ValueError):
        paired_bootstrap([], [])
