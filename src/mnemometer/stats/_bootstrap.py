"""Paired bootstrap intervals of mean deltas: percentile and BCa, plain and clustered."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as _st

from mnemometer.errors import MnemometerError
from mnemometer.stats._common import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    TIE_RTOL,
    as_columns,
    as_deltas,
    blocks,
)
from mnemometer.stats._intervals import Bounds, Interval, clip, column_bounds


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


def _weights(units: int, resamples: int, rng: np.random.Generator):
    """Yield blocks of bootstrap weights: row r counts how often each unit was drawn.

    A resample of ``units`` draws with replacement is the same as a row of draw counts,
    which turns every resampled mean into one matrix product (fast for many columns).
    The draws are ``rng.integers(0, units, size=(resamples, units))`` block by block, the
    same stream :func:`scipy.stats.bootstrap` draws from the same generator (int32 draws
    give the same values as int64 ones and take a third of the time).
    """
    for _, rows in blocks(resamples, units):
        dtype = np.int32 if rows * units < 2**31 else np.int64
        idx = rng.integers(0, units, size=(rows, units), dtype=dtype)
        idx += (np.arange(rows, dtype=dtype) * units)[:, None]
        counts = np.bincount(idx.ravel(), minlength=rows * units)
        yield counts.reshape(rows, units).astype(np.float64)


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
    bounds: Bounds | Sequence[Bounds | None] | None = None,
) -> list[BootstrapResult | None]:
    """Bootstrap the mean of every column of ``values`` with one shared set of resamples.

    ``values`` is ``(n, k)``: one row per pair, one column per quantity (a metric's paired
    delta, the same restricted to a group, ...); NaN marks "not applicable to this pair"
    and is left out of that column's mean. Sharing resamples across columns makes the
    whole comparison one pass (and the columns' intervals mutually consistent).

    Args:
        values: ``(n, k)`` array; NaN where a column has no value for a pair.
        resamples: number of bootstrap resamples.
        seed: generator seed.
        confidence: nominal coverage in (0, 1).
        clusters: optional cluster label per row; whole clusters are resampled.
        bounds: the feasible range of the values, one ``(low, high)`` for every column or
            one per column (``None``: unbounded); see :func:`delta_bounds`. Every interval
            is clipped to it and to the range of the column's values.

    Returns:
        One result per column; ``None`` for a column with no finite value.
    """
    v, mask, x = as_columns(values, resamples, "bootstrap_columns")
    if not 0.0 < confidence < 1.0:
        raise MnemometerError(f"confidence must be in (0, 1), got {confidence}")
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
        # float64 ratios of resampled sums to resampled counts: for integer-valued data
        # (success deltas in {-1, 0, 1}) both are exact, so a resampled mean equal to the
        # observed one compares equal, as the BCa tie count needs. (float32 deviations
        # from the mean, shipped before, scattered those ties and moved BCa bounds by a
        # whole item: -0.1077 instead of -0.0923 at n = 130.)
        # One product per block for sums and counts: it reads the weights once.
        both = np.hstack([sums, patterns])
        k = v.shape[1]
        for w in _weights(sums.shape[0], resamples, rng):
            prod = w @ both
            boot[row : row + w.shape[0]] = prod[:, :k] / prod[:, k:][:, which]
            row += w.shape[0]
        # For other data, rounding is snapped back onto the observed mean (see TIE_RTOL).
        scale = np.max(np.abs(x), axis=0) * TIE_RTOL
        np.copyto(boot, theta, where=np.abs(boot - theta) <= scale)
        # Leave-one-unit-out estimates for the BCa acceleration.
        jack = (total - sums) / (n - counts)
        jack = np.where(counts > 0, jack, np.nan)
        # A mean never leaves the hull of its values; bounds may narrow that further.
        hull_lo = np.min(np.where(mask, v, np.inf), axis=0)
        hull_hi = np.max(np.where(mask, v, -np.inf), axis=0)
    limits = column_bounds(bounds, v.shape[1])
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
        # (The observed mean joins the hull: its own rounding may put it 1 ulp outside.)
        feasible = (
            max(min(hull_lo[j], theta[j]), limits[j][0]),
            min(max(hull_hi[j], theta[j]), limits[j][1]),
        )
        out.append(
            BootstrapResult(
                mean=float(theta[j]),
                percentile=clip(
                    Interval(f"{kind}percentile", float(lo), float(hi), confidence), feasible
                ),
                bca=clip(Interval(f"{kind}bca", blo, bhi, confidence), feasible),
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
    bounds: Bounds | None = None,
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
        bounds: feasible range of a delta, e.g. ``delta_bounds(0, 1) == (-1, 1)`` for
            differences of proportions; intervals are clipped to it.

    Raises:
        MnemometerError: empty or non-finite deltas, bad settings, mismatched clusters.
    """
    d = as_deltas(deltas)
    if d.size == 0:
        raise MnemometerError("no paired deltas to bootstrap")
    (result,) = bootstrap_columns(
        d[:, None],
        resamples=resamples,
        seed=seed,
        confidence=confidence,
        clusters=clusters,
        bounds=bounds,
    )
    assert result is not None
    return result
