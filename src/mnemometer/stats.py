"""Paired statistics for comparisons: McNemar, bootstrap intervals, clustering, Holm, MDE.

Everything here is pure numpy/scipy over arrays of paired observations (candidate minus
baseline). Distributions come from :mod:`scipy.stats`; only the resampling loop, the BCa
correction and Holm's step-down are written out, because they are procedures, not
distributions.

Conventions: ``deltas[i] = candidate[i] - baseline[i]``; a positive delta favours the
candidate. Every random draw uses :func:`numpy.random.default_rng` with an explicit seed,
so a comparison is byte-stable.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as _st

from mnemometer.errors import MnemometerError

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0x5EED
# Resamples drawn per block: bounds memory at block * n indices (int64) per step.
_BLOCK_CELLS = 4_000_000


@dataclass(frozen=True, slots=True)
class McNemar:
    """Exact McNemar test on paired binary outcomes."""

    b: int
    """Pairs where the baseline failed and the candidate succeeded."""
    c: int
    """Pairs where the baseline succeeded and the candidate failed."""
    p_value: float
    """Two-sided exact p (binomial test of b out of b + c at 0.5); 1 when b + c = 0."""


@dataclass(frozen=True, slots=True)
class Interval:
    """A confidence interval for a mean paired delta."""

    method: str
    """``percentile``, ``bca``, ``cluster-percentile`` or ``cluster-robust``."""
    low: float
    """Lower bound."""
    high: float
    """Upper bound."""
    confidence: float
    """Nominal coverage, e.g. 0.95."""


@dataclass(frozen=True, slots=True)
class BootstrapResult:
    """Bootstrap intervals of the mean paired delta."""

    mean: float
    """Observed mean delta."""
    percentile: Interval
    """Percentile interval."""
    bca: Interval
    """Bias-corrected and accelerated interval."""
    resamples: int
    """Number of resamples."""
    seed: int
    """Seed of the generator."""


def mcnemar_exact(
    baseline: Sequence[bool] | np.ndarray, candidate: Sequence[bool] | np.ndarray
) -> McNemar:
    """Exact two-sided McNemar test over paired successes.

    Args:
        baseline: success of each pair on the baseline side.
        candidate: success of the same pairs on the candidate side.

    Raises:
        MnemometerError: the two sides have different lengths.
    """
    a = np.asarray(baseline, dtype=bool)
    c_ = np.asarray(candidate, dtype=bool)
    if a.shape != c_.shape:
        raise MnemometerError(f"McNemar needs paired outcomes: {a.size} vs {c_.size}")
    b = int(np.sum(~a & c_))
    c = int(np.sum(a & ~c_))
    return McNemar(b, c, mcnemar_p(b, c))


def mcnemar_p(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts ``b`` and ``c``."""
    n = b + c
    if n == 0:
        return 1.0
    return float(_st.binomtest(b, n, 0.5, alternative="two-sided").pvalue)


def _as_deltas(deltas: Sequence[float] | np.ndarray) -> np.ndarray:
    d = np.asarray(deltas, dtype=float)
    if d.ndim != 1:
        raise MnemometerError("paired deltas must be a flat sequence")
    if not np.all(np.isfinite(d)):
        raise MnemometerError("paired deltas must be finite numbers")
    return d


def _weights(units: int, resamples: int, rng: np.random.Generator):
    """Yield blocks of bootstrap weights: row r counts how often each unit was drawn.

    A resample of ``units`` draws with replacement is the same as a row of draw counts,
    which turns every resampled mean into one matrix product (fast for many columns).
    """
    block = max(1, min(resamples, _BLOCK_CELLS // max(units, 1)))
    for start in range(0, resamples, block):
        rows = min(block, resamples - start)
        # int64 indices: bincount works in intp, so narrower draws only add a conversion.
        idx = rng.integers(0, units, size=(rows, units))
        idx += (np.arange(rows, dtype=np.int64) * units)[:, None]
        counts = np.bincount(idx.ravel(), minlength=rows * units)
        yield counts.reshape(rows, units).astype(np.float32)


def _bca(
    boot: np.ndarray, theta: float, jack: np.ndarray, confidence: float
) -> tuple[float, float]:
    """BCa bounds from bootstrap replicates and leave-one-out (jackknife) estimates."""
    boot = boot[np.isfinite(boot)]
    jack = jack[np.isfinite(jack)]
    if boot.size == 0:
        return math.nan, math.nan
    alpha = (1.0 - confidence) / 2.0
    # Bias correction: where the observed value sits in the bootstrap distribution
    # (ties count half, so a degenerate distribution gives z0 = 0).
    prop = (np.sum(boot < theta) + 0.5 * np.sum(boot == theta)) / boot.size
    prop = min(max(prop, 1.0 / (2 * boot.size)), 1.0 - 1.0 / (2 * boot.size))
    z0 = _st.norm.ppf(prop)
    diff = jack.mean() - jack if jack.size else jack
    denom = 6.0 * np.sum(diff**2) ** 1.5
    a = float(np.sum(diff**3) / denom) if denom > 0 else 0.0
    qs = []
    for z in (_st.norm.ppf(alpha), _st.norm.ppf(1.0 - alpha)):
        q = _st.norm.cdf(z0 + (z0 + z) / (1.0 - a * (z0 + z)))
        qs.append(float(np.clip(q, 0.0, 1.0)))
    lo, hi = np.quantile(boot, qs)
    return float(lo), float(hi)


def bootstrap_columns(
    values: np.ndarray,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
    clusters: Sequence[str] | np.ndarray | None = None,
) -> list[BootstrapResult | None]:
    """Bootstrap the mean of every column of ``values`` with one shared set of resamples.

    ``values`` is ``(n, k)``: one row per pair, one column per quantity (a metric's paired
    delta, the same restricted to a group, ...); NaN marks "not applicable to this pair"
    and is left out of that column's mean. Sharing resamples across columns makes the
    whole comparison one pass (and the columns' intervals mutually consistent).

    Returns:
        One result per column; ``None`` for a column with no finite value.
    """
    v = np.asarray(values, dtype=float)
    if v.ndim != 2:
        raise MnemometerError("bootstrap_columns needs an (n, k) array")
    if resamples < 1:
        raise MnemometerError(f"resamples must be at least 1, got {resamples}")
    if not 0.0 < confidence < 1.0:
        raise MnemometerError(f"confidence must be in (0, 1), got {confidence}")
    mask = np.isfinite(v)
    x = np.where(mask, v, 0.0)
    if clusters is None:
        sums, counts, kind = x, mask.astype(float), ""
    else:
        labels = np.asarray(clusters)
        if labels.shape != (v.shape[0],):
            raise MnemometerError(f"one cluster label per pair: {labels.size} vs {v.shape[0]}")
        _, inverse = np.unique(labels, return_inverse=True)
        g = int(inverse.max()) + 1 if inverse.size else 0
        sums = np.zeros((g, v.shape[1]))
        counts = np.zeros((g, v.shape[1]))
        np.add.at(sums, inverse, x)
        np.add.at(counts, inverse, mask.astype(float))
        kind = "cluster-"
    total, n = sums.sum(axis=0), counts.sum(axis=0)
    # Columns often share their pattern of present values (every metric of one group):
    # each distinct pattern's resampled count is computed once.
    patterns, which = np.unique(counts, axis=1, return_inverse=True)
    which = np.asarray(which).reshape(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        theta = total / n
        boot = np.empty((resamples, v.shape[1]))
        rng = np.random.default_rng(seed)
        row = 0
        # float32 products over deviations from the observed mean: the mean itself stays
        # exact (constant data give a degenerate interval at exactly that value) and the
        # rounding (~1e-7 of the spread) is far below any reported digit.
        dev = (sums - counts * np.nan_to_num(theta)).astype(np.float32)
        c32 = patterns.astype(np.float32)
        for w in _weights(sums.shape[0], resamples, rng):
            den = (w @ c32)[:, which]
            boot[row : row + w.shape[0]] = theta + (w @ dev) / den
            row += w.shape[0]
        # Leave-one-unit-out estimates for the BCa acceleration.
        jack = (total - sums) / (n - counts)
        jack = np.where(counts > 0, jack, np.nan)
    alpha = (1.0 - confidence) / 2.0
    out: list[BootstrapResult | None] = []
    for j in range(v.shape[1]):
        if n[j] == 0:
            out.append(None)
            continue
        b = boot[:, j]
        fin = b[np.isfinite(b)]
        lo, hi = np.quantile(fin, [alpha, 1.0 - alpha])
        blo, bhi = _bca(fin, float(theta[j]), jack[:, j], confidence)
        out.append(
            BootstrapResult(
                mean=float(theta[j]),
                percentile=Interval(f"{kind}percentile", float(lo), float(hi), confidence),
                bca=Interval(f"{kind}bca", blo, bhi, confidence),
                resamples=resamples,
                seed=seed,
            )
        )
    return out


def paired_bootstrap(
    deltas: Sequence[float] | np.ndarray,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
    clusters: Sequence[str] | np.ndarray | None = None,
) -> BootstrapResult:
    """Percentile and BCa bootstrap intervals for the mean paired delta.

    With ``clusters`` the resampling unit is a cluster (all pairs sharing a conversation,
    fixture or item across repeats), so dependence inside a cluster widens the interval
    instead of being ignored.

    Args:
        deltas: paired deltas, candidate minus baseline.
        resamples: number of bootstrap resamples.
        seed: generator seed.
        confidence: nominal coverage in (0, 1).
        clusters: optional cluster label per delta.

    Raises:
        MnemometerError: empty or non-finite deltas, bad settings, mismatched clusters.
    """
    d = _as_deltas(deltas)
    if d.size == 0:
        raise MnemometerError("no paired deltas to bootstrap")
    (result,) = bootstrap_columns(
        d[:, None], resamples=resamples, seed=seed, confidence=confidence, clusters=clusters
    )
    assert result is not None
    return result


def _cluster_sums(
    d: np.ndarray, clusters: Sequence[str] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    labels = np.asarray(clusters)
    if labels.shape != d.shape:
        raise MnemometerError(f"one cluster label per delta: {labels.size} vs {d.size}")
    _, inverse = np.unique(labels, return_inverse=True)
    sums = np.bincount(inverse, weights=d)
    counts = np.bincount(inverse).astype(float)
    return sums, counts


def cluster_robust_interval(
    deltas: Sequence[float] | np.ndarray,
    clusters: Sequence[str] | np.ndarray,
    *,
    confidence: float = 0.95,
) -> Interval:
    """Cluster-robust (CR1) interval for the mean delta, with a t reference on G - 1 df.

    ``SE^2 = G/(G-1) * sum_g (sum_{i in g} (d_i - mean))^2 / n^2``. With one cluster the
    standard error is undefined and the interval is infinite.
    """
    d = _as_deltas(deltas)
    if d.size == 0:
        raise MnemometerError("no paired deltas")
    mean = float(d.mean())
    sums, counts = _cluster_sums(d - mean, clusters)
    g = sums.size
    if g < 2:
        return Interval("cluster-robust", -math.inf, math.inf, confidence)
    se = math.sqrt(g / (g - 1) * float(np.sum(sums**2))) / d.size
    t = float(_st.t.ppf(1.0 - (1.0 - confidence) / 2.0, g - 1))
    return Interval("cluster-robust", mean - t * se, mean + t * se, confidence)


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values (family-wise error), in the input order."""
    p = np.asarray(p_values, dtype=float)
    if p.size == 0:
        return p
    if np.any((p < 0) | (p > 1) | ~np.isfinite(p)):
        raise MnemometerError("p-values must lie in [0, 1]")
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = (m - np.arange(m)) * p[order]
    adjusted = np.minimum(np.maximum.accumulate(scaled), 1.0)
    out = np.empty(m)
    out[order] = adjusted
    return out


def minimum_detectable_effect(
    n: int, sd: float, *, alpha: float = 0.05, power: float = 0.8
) -> float:
    """Smallest true mean delta a two-sided paired test detects with ``power``.

    ``MDE = (z_{1-alpha/2} + z_{power}) * sd / sqrt(n)`` (normal approximation; ``sd`` is
    the standard deviation of the paired deltas). Infinite when ``n`` is 0.
    """
    if n <= 0:
        return math.inf
    z = _st.norm.ppf(1.0 - alpha / 2.0) + _st.norm.ppf(power)
    return float(z * sd / math.sqrt(n))


def paired_t_p(deltas: Sequence[float] | np.ndarray) -> float:
    """Two-sided p of the paired t test on the mean delta; 1 when every delta is equal."""
    d = _as_deltas(deltas)
    if d.size < 2:
        return 1.0
    if float(np.ptp(d)) == 0.0:  # no spread: either no effect or an exact, constant one
        return 1.0 if float(d[0]) == 0.0 else 0.0
    return float(_st.ttest_1samp(d, 0.0).pvalue)
