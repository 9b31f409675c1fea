"""Property tests for mnemometer.stats: identities, symmetry, scipy agreement, coverage."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from mnemometer import stats
from mnemometer.errors import MnemometerError

outcomes = st.lists(st.booleans(), min_size=1, max_size=60)
values = st.lists(st.floats(-5, 5, allow_nan=False), min_size=2, max_size=40)
unit_values = st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=40)
paired_outcomes = st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=60)
counts = st.integers(1, 200).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))


def _items(n: int, per: int) -> list[str]:
    """Item ids for n observations, ``per`` repeats of each item."""
    return [f"i{k // per}" for k in range(n)]


# -- A sample compared with itself: delta 0 and p = 1 for every test -------------------


@settings(deadline=None)  # timing on a shared, loaded 2-core machine is no test
@given(outcomes, st.integers(1, 4))
def test_run_compared_with_itself_has_p_one_and_zero_delta(xs, per):
    m = stats.mcnemar_exact(xs, xs)
    assert (m.b, m.c, m.p_value, m.n) == (0, 0, 1.0, len(xs))
    items = stats.paired_per_item(xs, xs, _items(len(xs), per), how="majority")
    assert np.all(items.deltas == 0.0)
    assert stats.mcnemar_exact(items.baseline, items.candidate).p_value == 1.0
    r = stats.paired_bootstrap(np.zeros(len(xs)), resamples=200)
    assert r.mean == 0.0
    assert r.percentile.low == r.percentile.high == 0.0
    assert r.bca.low == r.bca.high == 0.0


@settings(max_examples=60, deadline=None)
@given(values, st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_metric_compared_with_itself_has_p_one_and_zero_delta(xs, per, seed):
    x = np.asarray(xs)
    items = stats.paired_per_item(x, x, _items(x.size, per))
    for d in (x - x, items.deltas):
        t = stats.paired_permutation_test(d, seed=seed)
        assert (t.mean_delta, t.p_value, t.nonzero) == (0.0, 1.0, 0)
        assert stats.paired_t_p(d) == 1.0
        r = stats.paired_bootstrap(d, resamples=100, seed=seed)
        assert r.bca.low == r.bca.high == r.percentile.low == r.percentile.high == 0.0
    cr = stats.cluster_robust_interval(x - x, _items(x.size, per))
    assert cr.low == cr.high == 0.0 or x.size <= per  # one cluster: undefined
    assert list(stats.holm([1.0] * x.size)) == [1.0] * x.size


# -- Swapping sides flips every sign and keeps every p ----------------------------------


@settings(deadline=None)  # timing on a shared, loaded 2-core machine is no test
@given(paired_outcomes, st.integers(1, 3))
def test_swapping_sides_swaps_counts_and_keeps_p(pairs, per):
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    fwd, back = stats.mcnemar_exact(a, b), stats.mcnemar_exact(b, a)
    assert (fwd.b, fwd.c) == (back.c, back.b)
    assert fwd.p_value == pytest.approx(back.p_value)
    ids = _items(len(pairs), per)
    i_fwd = stats.paired_per_item(a, b, ids, how="majority")
    i_back = stats.paired_per_item(b, a, ids, how="majority")
    np.testing.assert_array_equal(i_fwd.deltas, -i_back.deltas)
    assert (
        stats.mcnemar_exact(i_fwd.baseline, i_fwd.candidate).p_value
        == stats.mcnemar_exact(i_back.baseline, i_back.candidate).p_value
    )


@settings(max_examples=40, deadline=None)
@given(values, st.integers(0, 2**32 - 1))
def test_swapping_sides_flips_the_sign_of_every_interval(xs, seed):
    d = np.asarray(xs)
    fwd = stats.paired_bootstrap(d, resamples=300, seed=seed)
    back = stats.paired_bootstrap(-d, resamples=300, seed=seed)
    assert back.mean == pytest.approx(-fwd.mean)
    for f, b in ((fwd.percentile, back.percentile), (fwd.bca, back.bca)):
        assert b.low == pytest.approx(-f.high, abs=1e-9)
        assert b.high == pytest.approx(-f.low, abs=1e-9)
    assert fwd.percentile.low <= fwd.mean + 1e-12 <= fwd.percentile.high + 2e-12
    labels = _items(d.size, 3)
    cf = stats.cluster_robust_interval(d, labels)
    cb = stats.cluster_robust_interval(-d, labels)
    assert (cb.low, cb.high) == pytest.approx((-cf.high, -cf.low), abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.25, 1.0]), min_size=1, max_size=40)
    | st.lists(st.floats(-5, 5, allow_nan=False), min_size=1, max_size=40),
    st.integers(0, 2**32 - 1),
)
def test_swapping_sides_keeps_the_metric_test_p(xs, seed):
    d = np.asarray(xs)
    fwd = stats.paired_permutation_test(d, resamples=500, seed=seed)
    back = stats.paired_permutation_test(-d, resamples=500, seed=seed)
    assert back.p_value == fwd.p_value  # the same sign patterns, mirrored
    assert back.mean_delta == pytest.approx(-fwd.mean_delta)
    assert 0.0 < fwd.p_value <= 1.0 and fwd.n == d.size
    assert stats.paired_t_p(-d) == pytest.approx(stats.paired_t_p(d))
    assert stats.paired_t_p(d) > 0.0


@settings(deadline=None)  # timing on a shared, loaded 2-core machine is no test
@given(counts, counts)
def test_swapping_groups_mirrors_newcombe(a, b):
    fwd, back = stats.newcombe(*a, *b), stats.newcombe(*b, *a)
    assert (back.low, back.high) == pytest.approx((-fwd.high, -fwd.low), abs=1e-12)


# -- Intervals contain the estimate and stay in the feasible range ----------------------


@settings(max_examples=60, deadline=None)
@given(paired_outcomes, st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_success_delta_intervals_are_feasible_and_contain_the_delta(pairs, per, seed):
    d = np.array([float(c) - float(b) for b, c in pairs])
    ids = _items(d.size, per)
    plain = stats.paired_bootstrap(d, resamples=200, seed=seed, bounds=(-1, 1))
    clustered = stats.paired_bootstrap(d, resamples=200, seed=seed, bounds=(-1, 1), clusters=ids)
    for r in (plain, clustered):
        for iv in (r.percentile, r.bca):
            assert -1.0 <= iv.low <= r.mean <= iv.high <= 1.0, (iv, r.mean)
    cr = stats.cluster_robust_interval(d, ids, bounds=(-1, 1))
    assert -1.0 <= cr.low <= d.mean() + 1e-12 and d.mean() - 1e-12 <= cr.high <= 1.0


@settings(deadline=None)  # timing on a shared, loaded 2-core machine is no test
@given(counts)
def test_wilson_is_feasible_and_contains_the_proportion(c):
    s, n = c
    iv = stats.wilson(s, n)
    assert 0.0 <= iv.low <= s / n <= iv.high <= 1.0


@settings(deadline=None)  # timing on a shared, loaded 2-core machine is no test
@given(counts, counts)
def test_newcombe_is_feasible_and_contains_the_difference(a, b):
    iv = stats.newcombe(*a, *b)
    d = a[0] / a[1] - b[0] / b[1]
    assert -1.0 <= iv.low <= d + 1e-12 and d - 1e-12 <= iv.high <= 1.0


@settings(deadline=None)  # timing on a shared, loaded 2-core machine is no test
@given(unit_values)
def test_mean_interval_is_feasible_and_contains_the_mean(xs):
    iv = stats.mean_interval(xs, bounds=(0.0, 1.0))
    m = float(np.mean(xs))
    # 1e-12: constant data are reported at their exact value, the mean may be 1 ulp off
    assert 0.0 <= iv.low <= m + 1e-12 and m - 1e-12 <= iv.high <= 1.0


def test_mcnemar_matches_scipy_binomtest_on_every_small_case():
    for b in range(0, 16):
        for c in range(0, 16):
            expected = 1.0 if b + c == 0 else binomtest(b, b + c, 0.5).pvalue
            assert stats.mcnemar_p(b, c) == pytest.approx(expected, rel=1e-12)
            # and through the paired-outcome interface
            base = [False] * b + [True] * c + [True] * 3
            cand = [True] * b + [False] * c + [True] * 3
            assert stats.mcnemar_exact(base, cand).p_value == pytest.approx(expected)


def test_mcnemar_known_value():
    # 0 vs 6 discordant pairs: 2 * 0.5**6
    assert stats.mcnemar_p(0, 6) == pytest.approx(2 / 64)


def test_bootstrap_is_seeded_and_reproducible():
    d = np.random.default_rng(3).normal(size=50)
    assert stats.paired_bootstrap(d, seed=7, resamples=500) == stats.paired_bootstrap(
        d, seed=7, resamples=500
    )
    assert stats.paired_bootstrap(d, seed=7, resamples=500) != stats.paired_bootstrap(
        d, seed=8, resamples=500
    )


def test_bootstrap_intervals_reach_nominal_coverage():
    # 400 simulated experiments of 40 skewed paired deltas with known mean 0.5.
    rng = np.random.default_rng(11)
    trials, n, true_mean = 400, 40, 0.5
    data = rng.exponential(true_mean, size=(trials, n))
    columns = stats.bootstrap_columns(data.T, resamples=2000, seed=1)
    pct = np.mean([c.percentile.low <= true_mean <= c.percentile.high for c in columns])
    bca = np.mean([c.bca.low <= true_mean <= c.bca.high for c in columns])
    # Binomial sd of coverage over 400 trials is ~1.1 pp. Skewed data at n = 40 undercover
    # a little with either method (measured: percentile 0.920, BCa 0.918 with this seed),
    # the known small-sample behaviour of bootstrap intervals; far off nominal fails.
    assert 0.90 <= pct <= 0.98
    assert 0.91 <= bca <= 0.98


def test_bootstrap_coverage_on_paired_success_deltas():
    # The case compare bootstraps most: deltas in {-1, 0, 1} (candidate minus baseline
    # success), 60 pairs, true mean 0.3 - 0.2 = 0.1; measured 0.9475 / 0.9525.
    rng = np.random.default_rng(12)
    rng.normal(size=(400, 40))  # keep the stream aligned with the recorded figures
    data = (rng.random(size=(400, 60)) < 0.3).astype(float) - (rng.random(size=(400, 60)) < 0.2)
    columns = stats.bootstrap_columns(data.T, resamples=2000, seed=3)
    pct = np.mean([c.percentile.low <= 0.1 <= c.percentile.high for c in columns])
    bca = np.mean([c.bca.low <= 0.1 <= c.bca.high for c in columns])
    assert 0.93 <= pct <= 0.97
    assert 0.93 <= bca <= 0.97


def test_cluster_intervals_are_wider_when_clusters_are_correlated():
    rng = np.random.default_rng(5)
    clusters = np.repeat(np.arange(30), 10)
    d = np.repeat(rng.normal(size=30), 10) + rng.normal(scale=0.1, size=300)
    plain = stats.paired_bootstrap(d, resamples=2000)
    clustered = stats.paired_bootstrap(d, resamples=2000, clusters=clusters)
    cr = stats.cluster_robust_interval(d, clusters)
    plain_w = plain.percentile.high - plain.percentile.low
    assert clustered.percentile.high - clustered.percentile.low > 2 * plain_w
    assert cr.high - cr.low > 2 * plain_w
    assert clustered.percentile.method == "cluster-percentile"


def test_cluster_robust_coverage():
    rng = np.random.default_rng(9)
    hits = 0
    trials = 300
    clusters = np.repeat(np.arange(25), 4)
    for _ in range(trials):
        d = np.repeat(rng.normal(size=25), 4) + rng.normal(size=100)
        iv = stats.cluster_robust_interval(d, clusters)
        hits += iv.low <= 0.0 <= iv.high
    assert 0.90 <= hits / trials <= 0.99


def test_bootstrap_columns_skip_missing_values():
    v = np.array([[1.0, np.nan], [3.0, np.nan], [5.0, 2.0]])
    a, b = stats.bootstrap_columns(v, resamples=100)
    assert a.mean == 3.0 and b.mean == 2.0
    (none,) = stats.bootstrap_columns(np.full((3, 1), np.nan), resamples=10)
    assert none is None


@settings(deadline=None)  # timing on a shared, loaded 2-core machine is no test
@given(st.lists(st.floats(0, 1), min_size=1, max_size=20))
def test_holm_is_monotone_and_bounded(ps):
    adj = stats.holm(ps)
    assert np.all(adj >= np.asarray(ps) - 1e-15)
    assert np.all(adj <= 1.0)
    order = np.argsort(ps, kind="stable")
    assert np.all(np.diff(adj[order]) >= -1e-15)


def test_holm_known_values():
    np.testing.assert_allclose(stats.holm([0.01, 0.04, 0.03, 0.5]), [0.04, 0.09, 0.09, 0.5])


def test_minimum_detectable_effect():
    # (1.96 + 0.8416) * 1 / sqrt(100) = 0.2802
    assert stats.minimum_detectable_effect(100, 1.0) == pytest.approx(0.2802, abs=1e-3)
    assert stats.minimum_detectable_effect(0, 1.0) == math.inf


BAD_INPUT = [
    (partial(stats.paired_bootstrap, []), "no paired deltas"),
    (partial(stats.paired_bootstrap, [1.0, math.nan]), "finite"),
    (partial(stats.paired_bootstrap, [1.0, 2.0], clusters=["a"]), "one cluster label"),
    (partial(stats.mcnemar_exact, [True], [True, False]), "paired outcomes"),
    (partial(stats.paired_permutation_test, []), "no paired deltas"),
    (partial(stats.paired_permutation_test, [1.0, np.inf]), "finite"),
    (partial(stats.paired_permutation_test, [1.0] * 30, resamples=0), "resamples"),
]


@pytest.mark.parametrize(
    ("call", "message"), BAD_INPUT, ids=[f"{c.func.__name__}-{m}" for c, m in BAD_INPUT]
)
def test_bad_input_is_a_clear_error(call, message):
    with pytest.raises(MnemometerError, match=message):
        call()
