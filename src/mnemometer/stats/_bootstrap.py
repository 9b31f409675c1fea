"""Paired bootstrap intervals of mean deltas: percentile and BCa, plain and clustered."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as _st

from mnemometer.errors import MnemometerError
from mnemometer.stats._intervals import Interval, _as_deltas

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0x5EED
# Resamples drawn per block: bounds memory at block * n indices (int64) per step.
_BLOCK_CELLS = 4_000_000


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
