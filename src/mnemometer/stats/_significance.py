"""Paired significance tests, multiple-comparison adjustment and the minimum detectable effect."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as _st

from mnemometer.errors import MnemometerError
from mnemometer.stats._common import as_deltas


@dataclass(frozen=True, slots=True)
class McNemar:
    """Exact McNemar test on paired binary outcomes."""

    b: int
    """Pairs where the baseline failed and the candidate succeeded."""
    c: int
    """Pairs where the baseline succeeded and the candidate failed."""
    p_value: float
    """Two-sided exact p (binomial test of b out of b + c at 0.5); 1 when b + c = 0."""


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
    d = as_deltas(deltas)
    if d.size < 2:
        return 1.0
    if float(np.ptp(d)) == 0.0:  # no spread: either no effect or an exact, constant one
        return 1.0 if float(d[0]) == 0.0 else 0.0
    return float(_st.ttest_1samp(d, 0.0).pvalue)
