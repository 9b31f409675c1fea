"""The bootstrap against scipy.stats.bootstrap and against a plain cluster bootstrap."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats as st

from mnemometer import stats
from mnemometer.errors import MnemometerError


def _inputs(count: int, seed: int, *, continuous_min_n: int = 2) -> list[np.ndarray]:
    """Random and tie-heavy samples: 0/1 data, {-1, 0, 1} deltas, quarters, continuous."""
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    while len(out) < count:
        kind = len(out) % 4
        n = int(rng.integers(2, 60))
        if kind == 0:  # 0/1 data: few distinct resampled means, many exact ties
            d = (rng.random(n) < rng.uniform(0.05, 0.6)).astype(float)
        elif kind == 1:  # paired success deltas, mostly 0
            d = (rng.random(n) < 0.25).astype(float) - (rng.random(n) < 0.2)
        elif kind == 2:  # a metric on a grid of quarters (exact in binary)
            d = rng.integers(-4, 5, n) / 4.0
        else:  # continuous, skewed
            n = max(n, continuous_min_n)
            d = rng.exponential(1.0, n) - 0.7
        if np.ptp(d) > 0:
            out.append(d)
    return out


def _scipy(d: np.ndarray, method: str, resamples: int, seed: int):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degenerate BCa: scipy warns and returns NaN
        return st.bootstrap(
            (d,),
            np.mean,
            method=method,
            n_resamples=resamples,
            rng=np.random.default_rng(seed),
        )


def test_hp_example_ties_are_counted_as_the_documented_formula_says():
    # 130 queries, the candidate wins 1 and loses 7 (the shape of HP bm25 vs tfidf): the
    # shipped float32 path gave [-0.1077, -0.0154], a whole item off on both ends; the
    # documented formula (and scipy on the same draws) gives [-0.0923, -0.0077].
    d = np.array([1.0] + [-1.0] * 7 + [0.0] * 122)
    r = stats.paired_bootstrap(d, bounds=stats.delta_bounds(0, 1))
    assert (r.bca.low, r.bca.high) == (-12 / 130, -1 / 130)
    ref = _scipy(d, "BCa", stats.DEFAULT_RESAMPLES, stats.DEFAULT_SEED).confidence_interval
    assert (r.bca.low, r.bca.high) == (ref.low, ref.high)


@pytest.mark.parametrize("method", ["BCa", "percentile"])
def test_equals_scipy_on_the_same_resamples(method):
    # Drawn from the same generator, our resamples are scipy's (rng.integers(0, n, (R, n))),
    # so both must compute the same numbers. On 0/1, {-1, 0, 1} and quarter-grid data every
    # resampled mean is exact in float64, so ties are counted alike and the bounds agree
    # up to the last bits of the interpolation (1e-12; a miscounted tie moves a bound by
    # a whole 1/n). Continuous data start at n = 20: a resample that permutes the sample
    # is a true tie that scipy's float mean may break (we count it), with chance n!/n^n,
    # 2e-8 at n = 20 but 5e-5 at n = 12 (seen once in 120 samples).
    for i, d in enumerate(_inputs(120, 1, continuous_min_n=20)):
        seed, resamples = 100 + i, 2000
        r = stats.paired_bootstrap(d, resamples=resamples, seed=seed)
        ours = r.bca if method == "BCa" else r.percentile
        ref = _scipy(d, method, resamples, seed).confidence_interval
        if not np.isfinite([ref.low, ref.high]).all():
            continue
        assert ours.low == pytest.approx(ref.low, abs=1e-12), (d.tolist(), seed)
        assert ours.high == pytest.approx(ref.high, abs=1e-12), (d.tolist(), seed)


def test_agrees_with_scipy_within_monte_carlo_error():
    # Independent draws (different seeds). Tolerance, from the Monte Carlo error at
    # R = 10,000: a bootstrap 2.5% quantile has sd ~ sqrt(.025 * .975 / R) / phi(1.96) * se
    # = 0.027 se; BCa's z0 (a proportion of R) has sd ~ 0.0125 and moves an end by about
    # twice that in se, so one run's end has sd ~ 0.037 se and the difference of two runs
    # ~ 0.052 se; 0.3 se is ~6 sd. On lattice data (0/1, quarters) the ends sit on atoms
    # 1/n (a quarter/n) apart and noise can move an end to the next atom: one more step.
    resamples = 10_000
    for i, d in enumerate(_inputs(60, 2, continuous_min_n=8)):
        r = stats.paired_bootstrap(d, resamples=resamples, seed=7_000 + i)
        ref = _scipy(d, "BCa", resamples, i)
        ci = ref.confidence_interval
        if not np.isfinite([ci.low, ci.high]).all():
            continue
        step = {0: 1.0, 1: 1.0, 2: 0.25, 3: 0.0}[i % 4] / d.size
        tol = 0.3 * ref.standard_error + step
        assert abs(r.bca.low - ci.low) <= tol, (d.tolist(), r.bca, ci)
        assert abs(r.bca.high - ci.high) <= tol, (d.tolist(), r.bca, ci)


def _plain_cluster_bootstrap(d, labels, resamples, seed, confidence=0.95):
    """Textbook cluster bootstrap written out with loops, for comparison only.

    Units are the clusters in sorted label order; a resample draws G clusters with
    replacement and takes the mean of every value they hold. Sums are math.fsum (exactly
    rounded, so order-free): a resample that permutes the clusters, a true tie, equals the
    observed mean exactly, as it does mathematically. BCa: z0 from the share of
    resampled means below (ties: half) the observed one, acceleration from the
    leave-one-cluster-out means, bounds at Phi(z0 + (z0 + z) / (1 - a (z0 + z))).
    """
    names = sorted(set(labels))
    members = {g: [x for x, lab in zip(d, labels, strict=True) if lab == g] for g in names}
    sums = [math.fsum(members[g]) for g in names]
    sizes = [len(members[g]) for g in names]
    theta = math.fsum(sums) / sum(sizes)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(names), size=(resamples, len(names)))
    boot = []
    for row in draws:
        boot.append(math.fsum(sums[k] for k in row) / sum(sizes[k] for k in row))
    boot = np.array(boot)
    below = sum(1 for b in boot if b < theta)
    ties = sum(1 for b in boot if b == theta)
    prop = (below + 0.5 * ties) / resamples
    z0 = st.norm.ppf(prop)
    jack = []
    for k in range(len(names)):
        rest_sum = math.fsum(sums) - sums[k]
        rest_size = sum(sizes) - sizes[k]
        jack.append(rest_sum / rest_size)
    jbar = sum(jack) / len(jack)
    num = sum((jbar - j) ** 3 for j in jack)
    den = 6.0 * sum((jbar - j) ** 2 for j in jack) ** 1.5
    a = num / den if den > 0 else 0.0
    alpha = (1 - confidence) / 2
    levels = []
    for z in (st.norm.ppf(alpha), st.norm.ppf(1 - alpha)):
        levels.append(st.norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z))))
    pct = np.quantile(boot, [alpha, 1 - alpha])
    bca = np.quantile(boot, levels)
    return theta, pct, bca, float(np.std(boot, ddof=1))


def _cluster_inputs(count, seed):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        g = int(rng.integers(3, 25))
        sizes = rng.integers(1, 6, g)  # unequal clusters: a ratio estimator, not a mean
        labels = [f"c{k:02d}" for k in range(g) for _ in range(sizes[k])]
        effect = np.repeat(rng.normal(0, 0.5, g), sizes)
        if len(out) % 2 == 0:  # success deltas with a cluster effect: heavy ties
            d = (rng.random(len(labels)) < 0.3 + 0.2 * (effect > 0)).astype(float)
            d -= rng.random(len(labels)) < 0.25
        else:
            d = effect + rng.normal(0, 0.3, len(labels))
        if np.ptp(d) > 0:
            out.append((d, labels))
    return out


def test_cluster_bootstrap_equals_a_plain_implementation_on_the_same_draws():
    for i, (d, labels) in enumerate(_cluster_inputs(30, 3)):
        seed, resamples = 50 + i, 1000
        theta, pct, bca, _ = _plain_cluster_bootstrap(d, labels, resamples, seed)
        r = stats.paired_bootstrap(d, clusters=labels, resamples=resamples, seed=seed)
        assert r.mean == pytest.approx(theta, abs=1e-12)
        assert r.percentile.method == "cluster-percentile" and r.bca.method == "cluster-bca"
        # Only the last bits of the acceleration and interpolation may differ.
        np.testing.assert_allclose([r.percentile.low, r.percentile.high], pct, rtol=0, atol=1e-12)
        np.testing.assert_allclose([r.bca.low, r.bca.high], bca, rtol=0, atol=1e-12)


def test_cluster_bootstrap_agrees_with_a_plain_implementation_within_monte_carlo_error():
    # Independent draws; the same Monte Carlo argument as for scipy (0.3 se), plus, for
    # integer deltas, the spacing of the resampled ratios near the ends (~1 / n).
    for i, (d, labels) in enumerate(_cluster_inputs(12, 4)):
        _, _, bca, se = _plain_cluster_bootstrap(d, labels, 4000, 900 + i)
        r = stats.paired_bootstrap(d, clusters=labels, resamples=4000, seed=i)
        step = 1.0 / d.size if i % 2 == 0 else 0.0
        # 4,000 resamples: the 10,000-resample sd grows by sqrt(2.5); 0.5 se is ~6 sd.
        tol = 0.5 * se + step
        assert abs(r.bca.low - bca[0]) <= tol and abs(r.bca.high - bca[1]) <= tol


def test_every_interval_lies_in_the_declared_range():
    # Success deltas near the top of the range: a t-style interval would pass 1.
    d = np.array([1.0] * 29 + [0.0])
    labels = np.repeat(np.arange(10), 3)
    for r in (
        stats.paired_bootstrap(d, bounds=(-1, 1)),
        stats.paired_bootstrap(d, bounds=(-1, 1), clusters=labels),
    ):
        for iv in (r.percentile, r.bca):
            assert -1.0 <= iv.low <= r.mean <= iv.high <= 1.0
    raw = stats.cluster_robust_interval(d, labels)
    assert raw.high > 1.0  # the normal-theory interval leaves the feasible range ...
    cr = stats.cluster_robust_interval(d, labels, bounds=stats.delta_bounds(0, 1))
    assert cr.high == 1.0 and cr.low == raw.low  # ... and is clipped to it


def test_per_column_bounds_and_the_hull_of_the_data():
    v = np.column_stack([np.linspace(0.5, 0.9, 20), np.linspace(-3, 3, 20)])
    a, b = stats.bootstrap_columns(v, resamples=500, bounds=[(0.0, 0.6), None])
    assert a.bca.high <= 0.6 and a.percentile.high <= 0.6
    assert b.bca.low >= -3 and b.bca.high <= 3
    with pytest.raises(MnemometerError, match="one \\(low, high\\) bound per column"):
        stats.bootstrap_columns(v, resamples=10, bounds=[(0, 1)] * 3)
    assert stats.delta_bounds(0, 1) == (-1, 1)
    assert stats.delta_bounds(2, 5) == (-3, 3)


def test_constant_columns_give_the_exact_value():
    # Float64 dust around a constant that is not a binary fraction snaps back onto it.
    for c in (0.1, 1 / 3, -2.7):
        r = stats.paired_bootstrap(np.full(37, c), resamples=300)
        assert r.percentile.low == r.percentile.high == r.bca.low == r.bca.high == r.mean
    clustered = stats.paired_bootstrap(np.full(12, 0.1), clusters=np.arange(12) // 3)
    assert clustered.bca.low == clustered.bca.high == clustered.mean


@pytest.mark.parametrize("columns", [stats.bootstrap_columns, stats.permutation_columns])
def test_columns_refuse_a_flat_array_and_no_resamples(columns) -> None:
    name = columns.__name__
    with pytest.raises(MnemometerError, match=rf"^{name} needs an \(n, k\) array$"):
        columns(np.zeros(5))
    with pytest.raises(MnemometerError, match="resamples must be at least 1, got 0"):
        columns(np.zeros((5, 2)), resamples=0)
    # NaN is "not applicable": it leaves its column's statistic, an all-NaN column is None.
    v = np.array([[1.0, np.nan], [0.0, np.nan], [1.0, np.nan], [np.nan, np.nan]])
    first, second = columns(v, resamples=50)
    assert first is not None and second is None
    mean = first.mean if isinstance(first, stats.BootstrapResult) else first.mean_delta
    assert mean == pytest.approx(2 / 3)
