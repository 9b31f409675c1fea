"""Inference on a mean over items that cluster: CR2 standard errors with Bell-McCaffrey df.

Questions of one LoCoMo conversation, a LongMemEval haystack or one scenario's epochs are
not independent. With few clusters the usual cluster-robust (CR1) t test on G - 1 degrees
of freedom rejects a true null too often when clusters differ in size, and a cluster
bootstrap is worse (with two clusters it has three possible resample means). Here:

* the **CR2** ("bias-reduced linearisation", Bell & McCaffrey 2002) variance of the mean:
  ``V = sum_g (S_g^2 / (1 - n_g / n)) / n^2``, ``S_g`` the sum of cluster g's residuals
  (for a mean, ``(I - H_gg)^(-1/2)`` scales a cluster's residual sum by
  ``1 / sqrt(1 - n_g / n)``);
* a t reference on the **Bell-McCaffrey** degrees of freedom, the Satterthwaite
  approximation ``(tr B)^2 / tr(B^2)`` under an independent working model (Imbens &
  Kolesár 2016 recommend exactly this pair). With equal cluster sizes it is the t test on
  the cluster means with G - 1 df; with unequal sizes the df shrink.

Below :data:`MIN_CLUSTERS` clusters no claim is made (no interval, no p): the spread between
clusters cannot be estimated from so few. ``benchmarks/bench_null.py`` simulates true nulls
and prints the false-positive rate of this test beside McNemar's and the cluster
bootstrap's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mnemometer.errors import MnemometerError
from mnemometer.stats._common import as_deltas
from mnemometer.stats._intervals import MIN_CLUSTERS, Bounds, Interval, _check_confidence, clip

METHOD = "cluster-robust CR2 (Bell-McCaffrey df)"


@dataclass(frozen=True, slots=True)
class ClusteredTest:
    """A mean over clustered items, its CR2 standard error, t test and interval."""

    estimate: float
    """The mean over items."""
    se: float
    """CR2 standard error of the mean."""
    df: float
    """Bell-McCaffrey degrees of freedom."""
    p_value: float
    """Two-sided p of "the mean is 0"."""
    interval: Interval
    """The t interval on ``df`` degrees of freedom (clipped to the feasible range)."""
    clusters: int
    """How many clusters."""


def too_few_clusters(clusters: int) -> str | None:
    """Why no claim can be made with this many clusters (``None``: enough)."""
    if clusters >= MIN_CLUSTERS:
        return None
    return (
        f"only {clusters} cluster{'s' if clusters != 1 else ''} (items of one cluster are not "
        f"independent): no interval or test is valid with fewer than {MIN_CLUSTERS}; add "
        "clusters (conversations, haystacks, scenarios) before any claim"
    )


def cluster_robust_test(
    values: Sequence[float] | np.ndarray,
    clusters: Sequence[str] | np.ndarray,
    *,
    confidence: float = 0.95,
    bounds: Bounds | None = None,
    null: float = 0.0,
) -> ClusteredTest:
    """CR2 / Bell-McCaffrey inference on ``mean(values)`` (see the module docstring).

    Raises:
        MnemometerError: no values, a label count that differs, fewer than two clusters,
            or a confidence outside (0, 1).
    """
    _check_confidence(confidence)
    d = as_deltas(values)
    labels = np.asarray(clusters)
    if d.size == 0:
        raise MnemometerError("no values for a clustered test")
    if labels.shape != d.shape:
        raise MnemometerError(f"one cluster label per value: {labels.size} vs {d.size}")
    _, inverse = np.unique(labels, return_inverse=True)
    sizes = np.bincount(inverse).astype(float)
    g = sizes.size
    if g < 2:
        raise MnemometerError("a clustered test needs at least two clusters")
    n = float(d.size)
    mean = float(d.mean())
    sums = np.bincount(inverse, weights=d - mean)
    share = sizes / n
    a2 = 1.0 / (n * n * (1.0 - share))  # CR2's per-cluster weight of a squared residual sum
    var = float(np.sum(a2 * sums * sums))
    se = math.sqrt(max(var, 0.0))
    df = bell_mccaffrey_df(sizes)
    from scipy import stats as st

    t_crit = float(st.t.ppf(1.0 - (1.0 - confidence) / 2.0, df))
    if se == 0.0:
        p = 1.0 if mean == null else 0.0
        iv = Interval(METHOD, mean, mean, confidence)
    else:
        p = float(2.0 * st.t.sf(abs(mean - null) / se, df))
        iv = Interval(METHOD, mean - t_crit * se, mean + t_crit * se, confidence)
    return ClusteredTest(mean, se, df, min(1.0, p), clip(iv, bounds), g)


def cluster_robust_interval(
    deltas: Sequence[float] | np.ndarray,
    clusters: Sequence[str] | np.ndarray,
    *,
    confidence: float = 0.95,
    bounds: Bounds | None = None,
) -> Interval:
    """The CR2 / Bell-McCaffrey interval of a mean over clustered items.

    The interval of :func:`cluster_robust_test`. With one cluster the spread between
    clusters is unknown and the interval is infinite (then clipped to ``bounds``).

    Raises:
        MnemometerError: no values, a label count that differs, or a confidence outside
            (0, 1).
    """
    _check_confidence(confidence)
    if np.unique(np.asarray(clusters)).size < 2:
        if as_deltas(deltas).size == 0:
            raise MnemometerError("no values for a clustered interval")
        return clip(Interval("cluster-robust", -math.inf, math.inf, confidence), bounds)
    iv = cluster_robust_test(deltas, clusters, confidence=confidence, bounds=bounds).interval
    return Interval("cluster-robust", iv.low, iv.high, iv.confidence)


def bell_mccaffrey_df(sizes: Sequence[float] | np.ndarray) -> float:
    """Satterthwaite df of the CR2 variance of a mean, clusters of ``sizes`` items.

    ``(tr B)^2 / tr(B^2)`` with ``B = sum_g a_g^2 u_g u_g'``, ``u_g = M c_g`` (``M`` centres,
    ``c_g`` indicates cluster g), so ``u_g'u_h = [g = h] n_g - n_g n_h / n``.
    """
    m = np.asarray(sizes, dtype=float)
    n = float(m.sum())
    a2 = 1.0 / (n * n * (1.0 - m / n))
    u = -np.outer(m, m) / n
    u[np.diag_indices_from(u)] += m
    tr_b = float(np.sum(a2 * np.diag(u)))
    w = np.outer(a2, a2) * u * u
    return tr_b * tr_b / float(np.sum(w))


__all__ = [
    "METHOD",
    "MIN_CLUSTERS",
    "ClusteredTest",
    "cluster_robust_interval",
    "cluster_robust_test",
    "too_few_clusters",
]
