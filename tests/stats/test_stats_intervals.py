"""Closed-form intervals: Wilson, Newcombe (method 10) and the Student-t mean interval."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as st
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint
from statsmodels.stats.weightstats import DescrStatsW

from mnemometer import stats
from mnemometer.errors import MnemometerError
from mnemometer.scoring.scenarios import mean_ci


def test_wilson_matches_statsmodels():
    for n in [*range(1, 25), 57, 100, 1000]:
        for s in sorted({*range(min(n, 24) + 1), n // 2, n - 1, n}):
            for confidence in (0.8, 0.95, 0.99):
                iv = stats.wilson(s, n, confidence=confidence)
                lo, hi = proportion_confint(s, n, alpha=1 - confidence, method="wilson")
                assert (iv.method, iv.confidence) == ("wilson", confidence)
                assert iv.low == pytest.approx(lo, abs=1e-12)
                assert iv.high == pytest.approx(hi, abs=1e-12)
    assert stats.wilson(0, 0) == stats.Interval("wilson", 0.0, 1.0, 0.95)


def test_newcombe_reproduces_newcombe_1998_table_ii_method_10():
    # Hand check of example (a), 56/70 vs 48/80, z = 1.959964:
    #   Wilson 56/70 = [0.69183, 0.87695], Wilson 48/80 = [0.49045, 0.70038], d = 0.2;
    #   low  = 0.2 - sqrt((0.8 - 0.69183)^2 + (0.70038 - 0.6)^2) = 0.2 - 0.14759 = 0.05241
    #   high = 0.2 + sqrt((0.87695 - 0.8)^2 + (0.6 - 0.49045)^2) = 0.2 + 0.13386 = 0.33386
    # which is the paper's 0.0524 to 0.3339. The other rows are from the same table.
    table = {
        (56, 70, 48, 80): (0.0524, 0.3339),
        (9, 10, 3, 10): (0.1705, 0.8090),
        (0, 10, 0, 10): (-0.2775, 0.2775),
        (10, 10, 0, 20): (0.6791, 1.0000),
        (10, 10, 0, 10): (0.6075, 1.0000),
    }
    for (s1, n1, s2, n2), (lo, hi) in table.items():
        iv = stats.newcombe(s1, n1, s2, n2)
        assert iv.method == "newcombe"
        assert round(iv.low, 4) == pytest.approx(lo, abs=1.5e-4)
        assert round(iv.high, 4) == pytest.approx(hi, abs=1e-4)


def test_newcombe_matches_statsmodels():
    rng = np.random.default_rng(0)
    for _ in range(300):
        n1, n2 = (int(x) for x in rng.integers(1, 80, 2))
        s1, s2 = int(rng.integers(0, n1 + 1)), int(rng.integers(0, n2 + 1))
        iv = stats.newcombe(s1, n1, s2, n2)
        ref = confint_proportions_2indep(s1, n1, s2, n2, method="newcomb", compare="diff")
        assert (iv.low, iv.high) == pytest.approx(ref, abs=1e-12)
        assert -1.0 <= iv.low <= s1 / n1 - s2 / n2 <= iv.high <= 1.0
        iv90 = stats.newcombe(s1, n1, s2, n2, confidence=0.9)
        ref90 = confint_proportions_2indep(
            s1, n1, s2, n2, method="newcomb", compare="diff", alpha=0.1
        )
        assert (iv90.low, iv90.high) == pytest.approx(ref90, abs=1e-12)


def test_mean_interval_matches_scipy_statsmodels_and_the_scenarios_function():
    rng = np.random.default_rng(1)
    for _ in range(200):
        n = int(rng.integers(2, 50))
        x = rng.beta(2, 3, n)
        iv = stats.mean_interval(x)
        lo, hi = st.t.interval(0.95, n - 1, loc=x.mean(), scale=st.sem(x))
        assert (iv.method, iv.low, iv.high) == ("t", pytest.approx(lo), pytest.approx(hi))
        sm = DescrStatsW(x).tconfint_mean(alpha=0.1)
        iv90 = stats.mean_interval(x, confidence=0.9)
        assert (iv90.low, iv90.high) == pytest.approx(sm, abs=1e-12)
        # the scenarios suite's mean_ci clips accuracies to [0, 1]
        _, old_lo, old_hi = mean_ci(x.tolist())
        clipped = stats.mean_interval(x, bounds=(0.0, 1.0))
        assert (clipped.low, clipped.high) == pytest.approx((old_lo, old_hi), abs=1e-12)


def test_mean_interval_edge_cases():
    assert stats.mean_interval([0.4]) == stats.Interval("t", -math.inf, math.inf, 0.95)
    assert stats.mean_interval([0.4], bounds=(0, 1)) == stats.Interval("t", 0.0, 1.0, 0.95)
    assert stats.mean_interval([0.7, 0.7, 0.7]) == stats.Interval("t", 0.7, 0.7, 0.95)
    with pytest.raises(MnemometerError, match="no values"):
        stats.mean_interval([])
    with pytest.raises(MnemometerError, match="finite"):
        stats.mean_interval([1.0, math.nan])
    with pytest.raises(MnemometerError, match="confidence"):
        stats.mean_interval([1.0, 2.0], confidence=1.0)


def test_proportion_intervals_reject_impossible_counts():
    with pytest.raises(MnemometerError, match="successes"):
        stats.wilson(5, 4)
    with pytest.raises(MnemometerError, match="non-empty"):
        stats.newcombe(0, 0, 1, 2)
    with pytest.raises(MnemometerError, match="low <= high"):
        stats.delta_bounds(1, 0)


def test_intervals_are_frozen():
    iv = stats.wilson(3, 10)
    with pytest.raises((AttributeError, TypeError)):
        iv.low = 0.0  # type: ignore[misc]
