"""The metric-delta test (paired sign-flip permutation) against scipy, and McNemar's n."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import stats as st

from mnemometer import stats
from mnemometer.errors import MnemometerError


def _scipy_p(d: np.ndarray, resamples: float, seed: int = 0) -> float:
    # One sample with permutation_type="samples" flips the sign of each observation.
    return float(
        st.permutation_test(
            (d,),
            lambda x, axis: np.mean(x, axis=axis),
            permutation_type="samples",
            n_resamples=resamples,
            rng=np.random.default_rng(seed),
        ).pvalue
    )


def _samples(count: int, seed: int, n_range: tuple[int, int]) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        n = int(rng.integers(*n_range))
        kind = i % 4
        if kind == 0:
            d = rng.normal(rng.uniform(-0.5, 1.0), 1.0, n)
        elif kind == 1:  # success deltas: ties and zeros everywhere
            d = (rng.random(n) < 0.4).astype(float) - (rng.random(n) < 0.2)
        elif kind == 2:  # a metric on a grid of quarters
            d = rng.integers(-2, 5, n) / 4.0
        else:  # skewed with zeros
            d = np.where(rng.random(n) < 0.3, 0.0, rng.exponential(1.0, n) - 0.4)
        out.append(d)
    return out


def test_exact_test_equals_scipy_permutation_test():
    # Up to EXACT_MAX_PAIRS non-zero deltas both enumerate every sign pattern, so the
    # p-values are the same fraction (scipy's two-sided 2 * min(one-sided) equals our
    # |mean| >= |observed| because the sign-flip distribution is symmetric).
    full = _samples(4, 7, (stats.EXACT_MAX_PAIRS, stats.EXACT_MAX_PAIRS + 1))
    for d in _samples(60, 1, (2, 13)) + full:
        ours = stats.paired_permutation_test(d)
        assert ours.method == "sign-flip-exact" and ours.resamples == 0
        assert ours.n == d.size and ours.nonzero == int(np.sum(d != 0))
        assert ours.p_value == pytest.approx(_scipy_p(d, np.inf), rel=1e-12, abs=1e-15)


def test_monte_carlo_test_agrees_with_scipy_within_its_error():
    # Independent random sign patterns, R = 10,000 on each side: a Monte Carlo p has sd
    # sqrt(p (1 - p) / R) <= 0.005, so two runs differ by sd <= 0.0071; allow 5 sd
    # (0.035), plus the 1 / (R + 1) each adds so that p is never 0.
    for i, d in enumerate(_samples(12, 2, (stats.EXACT_MAX_PAIRS + 1, 120))):
        if np.sum(d != 0) <= stats.EXACT_MAX_PAIRS:
            continue
        ours = stats.paired_permutation_test(d, seed=i)
        assert ours.method == "sign-flip-monte-carlo" and ours.resamples == 10_000
        ref = _scipy_p(d, 10_000, seed=1000 + i)
        sd = np.sqrt(max(ref * (1 - ref), 1e-4) / 10_000)
        assert abs(ours.p_value - ref) <= 5 * np.sqrt(2) * sd + 2e-4, (d.tolist(), ref)


def test_a_constant_nonzero_delta_has_an_exact_p_never_zero():
    # Two items, both +1: the t test has no spread and the shipped code said p = 0.
    two = stats.paired_permutation_test([1.0, 1.0])
    assert (two.p_value, two.n, two.method) == (0.5, 2, "sign-flip-exact")
    assert stats.paired_t_p([1.0, 1.0]) == 0.5
    assert stats.paired_permutation_test([0.3]).p_value == 1.0  # one pair: no evidence
    for n in range(2, 17):  # only the all-plus and all-minus patterns reach the mean
        assert stats.paired_permutation_test([0.3] * n).p_value == pytest.approx(2.0 ** (1 - n))
        if n <= 12:
            assert stats.paired_permutation_test([0.3] * n).p_value == pytest.approx(
                _scipy_p(np.full(n, 0.3), np.inf)
            )
    big = stats.paired_permutation_test(np.full(40, -0.25))
    assert big.p_value == 1 / 10_001  # (1 + 0 hits) / (R + 1): small, never 0
    assert stats.paired_t_p(np.full(40, -0.25)) == big.p_value


def test_zero_deltas_have_p_one():
    for n in (1, 5, 40):
        r = stats.paired_permutation_test(np.zeros(n))
        assert (r.p_value, r.mean_delta, r.nonzero, r.n) == (1.0, 0.0, 0, n)
    assert stats.paired_t_p(np.zeros(3)) == 1.0


def test_permutation_columns_match_one_column_at_a_time():
    rng = np.random.default_rng(4)
    v = rng.normal(0.2, 1, size=(60, 3))
    v[:45, 1] = np.nan  # 15 values: exact
    v[::2, 2] = np.nan  # 30 values: Monte Carlo
    cols = stats.permutation_columns(v, seed=9)
    assert [c.method for c in cols] == [
        "sign-flip-monte-carlo",
        "sign-flip-exact",
        "sign-flip-monte-carlo",
    ]
    alone = stats.paired_permutation_test(v[45:, 1], seed=9)
    assert cols[1] == dataclasses.replace(alone, mean_delta=cols[1].mean_delta)
    assert cols[1].mean_delta == pytest.approx(alone.mean_delta, abs=1e-15)
    assert cols[1].n == 15 and cols[2].n == 30
    assert cols[2].mean_delta == pytest.approx(float(np.nanmean(v[:, 2])))
    assert stats.permutation_columns(np.full((4, 1), np.nan)) == [None]


def test_permutation_test_is_seeded():
    d = np.random.default_rng(5).normal(size=50)
    assert stats.paired_permutation_test(d, seed=1) == stats.paired_permutation_test(d, seed=1)
    assert stats.paired_permutation_test(d, seed=1).seed == 1


def test_mcnemar_reports_n_and_refuses_undecided_outcomes():
    m = stats.mcnemar_exact([0, 0, 1, 1], [1, 1, 1, 0])
    assert (m.b, m.c, m.n) == (2, 1, 4)
    with pytest.raises(MnemometerError, match="0/1"):
        stats.mcnemar_exact([0.0, np.nan], [1.0, 1.0])  # a tied majority vote
    with pytest.raises(MnemometerError, match="0/1"):
        stats.mcnemar_exact([0.0, 0.5], [1.0, 1.0])
