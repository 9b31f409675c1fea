"""Paired significance tests, multiple-comparison adjustment and the minimum detectable effect."""

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


@dataclass(frozen=True, slots=True)
class McNemar:
    """Exact McNemar test on paired binary outcomes."""

    b: int
    """Pairs where the baseline failed and the candidate succeeded."""
    c: int
    """Pairs where the baseline succeeded and the candidate failed."""
    p_value: float
    """Two-sided exact p (binomial test of b out of b + c at 0.5); 1 when b + c = 0."""
    n: int
    """Pairs tested (concordant ones included): pairs, or items with repeats aggregated."""


def mcnemar_exact(
    baseline: Sequence[bool] | np.ndarray, candidate: Sequence[bool] | np.ndarray
) -> McNemar:
    """Exact two-sided McNemar test over paired successes.

    Args:
        baseline: success of each pair on the baseline side.
        candidate: success of the same pairs on the candidate side.

    Raises:
        MnemometerError: the two sides have different lengths, or an outcome is neither
            true/false nor 0/1 (an undecided NaN from :func:`per_item` included).
    """
    a, c_ = _outcomes(baseline), _outcomes(candidate)
    if a.shape != c_.shape:
        raise MnemometerError(f"McNemar needs paired outcomes: {a.size} vs {c_.size}")
    b = int(np.sum(~a & c_))
    c = int(np.sum(a & ~c_))
    return McNemar(b, c, mcnemar_p(b, c), int(a.size))


def _outcomes(x: Sequence[bool] | np.ndarray) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype != bool and arr.size and not np.all((arr == 0) | (arr == 1)):
        raise MnemometerError(
            "McNemar needs outcomes that are true/false or 0/1 (resolve undecided "
            "majority votes first, e.g. with stats.paired_per_item)"
        )
    return arr.astype(bool).reshape(-1)


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
    """Two-sided p of the paired t test on the mean delta (superseded; see below).

    Kept while the comparison layer still calls it; new code should use
    :func:`paired_permutation_test`, which is exact and reports n. With no spread the t
    statistic is undefined: equal zero deltas give 1 and a constant non-zero delta gives
    the exact sign-flip p (``2^(1-n)`` up to 16 pairs), never 0.
    """
    d = as_deltas(deltas)
    if d.size < 2:
        return 1.0
    if float(np.ptp(d)) == 0.0:  # no spread: either no effect or a constant one
        return 1.0 if float(d[0]) == 0.0 else paired_permutation_test(d).p_value
    # t is scale-free; rescaling keeps squares of tiny (or huge) deltas from under- or
    # overflowing into a zero (or infinite) variance and a p of 0.
    return float(_st.ttest_1samp(d / np.max(np.abs(d)), 0.0).pvalue)


# Up to this many non-zero deltas every sign pattern is enumerated (2^16 = 65,536).
EXACT_MAX_PAIRS = 16


@dataclass(frozen=True, slots=True)
class PairedTest:
    """A two-sided paired sign-flip (permutation) test of "no difference"."""

    method: str
    """``sign-flip-exact`` (every sign pattern) or ``sign-flip-monte-carlo``."""
    mean_delta: float
    """Observed mean delta, candidate minus baseline."""
    p_value: float
    """Two-sided p: the share of sign patterns whose |mean| reaches the observed one."""
    n: int
    """Pairs (or items, or clusters) tested: the unit the p-value assumes independent."""
    nonzero: int
    """Units with a non-zero delta: only these carry information."""
    resamples: int
    """Random sign patterns drawn; 0 when the test is exact."""
    seed: int
    """Seed of the generator (unused when exact)."""


def paired_permutation_test(
    deltas: Sequence[float] | np.ndarray,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> PairedTest:
    """Paired sign-flip permutation test of the mean delta: the metric-delta test.

    Under "no difference" the two sides of a pair are exchangeable, so every delta is as
    likely to carry either sign. The p-value is the share of the ``2^n`` sign patterns
    whose mean delta is at least as far from 0 as the observed one: enumerated exactly
    when at most :data:`EXACT_MAX_PAIRS` deltas are non-zero, else estimated from
    ``resamples`` random patterns as ``(1 + hits) / (1 + resamples)``, which is never 0.

    Why this test and not the others: it tests the mean, the quantity the comparison
    reports and bootstraps; it needs no normality (the t test does) and is exact for
    small n; it is defined when every delta is equal (a constant non-zero delta over n
    pairs gives ``2^(1-n)``, e.g. 0.5 for two pairs, where the t test has no answer);
    and it takes ties and zeros as they are (zeros cannot flip), where the exact
    Wilcoxon signed-rank test is invalid with ties or zeros and tests a different
    quantity, and the sign test throws away every magnitude. It agrees with
    :func:`scipy.stats.permutation_test` (``permutation_type="samples"``) on one sample.

    Args:
        deltas: paired deltas (one per unit: aggregate repeats first with
            :func:`paired_per_item`).
        resamples: random sign patterns when the test cannot be exact.
        seed: generator seed.

    Raises:
        MnemometerError: empty or non-finite deltas, or fewer than 1 resample.
    """
    d = as_deltas(deltas)
    if d.size == 0:
        raise MnemometerError("no paired deltas to test")
    (result,) = permutation_columns(d[:, None], resamples=resamples, seed=seed)
    assert result is not None
    return result


def permutation_columns(
    values: np.ndarray, *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> list[PairedTest | None]:
    """:func:`paired_permutation_test` of every column of ``(n, k)`` ``values`` at once.

    NaN marks "not applicable to this pair" and is left out of that column. Columns
    that need random sign patterns share them (one matrix product for all columns).

    Returns:
        One result per column; ``None`` for a column with no finite value.
    """
    v, mask, x = as_columns(values, resamples, "permutation_columns")
    n = mask.sum(axis=0)
    nonzero = (x != 0).sum(axis=0)
    observed = x.sum(axis=0)
    tol = TIE_RTOL * np.abs(x).sum(axis=0)
    random = nonzero > EXACT_MAX_PAIRS
    mc_p = np.full(v.shape[1], np.nan)
    if random.any():
        flipped = _random_sign_sums(x[:, random], resamples, np.random.default_rng(seed))
        hits = np.sum(np.abs(flipped) >= np.abs(observed[random]) - tol[random], axis=0)
        mc_p[random] = (1 + hits) / (1 + resamples)
    out: list[PairedTest | None] = []
    for j in range(v.shape[1]):
        if n[j] == 0:
            out.append(None)
            continue
        if random[j]:
            p, method, drawn = float(mc_p[j]), "sign-flip-monte-carlo", resamples
        else:
            d = x[:, j][x[:, j] != 0]
            sums = _all_sign_sums(d)
            p = float(np.mean(np.abs(sums) >= abs(observed[j]) - tol[j]))
            method, drawn = "sign-flip-exact", 0
        mean = float(observed[j] / n[j])
        out.append(PairedTest(method, mean, min(p, 1.0), int(n[j]), int(nonzero[j]), drawn, seed))
    return out


def _all_sign_sums(d: np.ndarray) -> np.ndarray:
    """``sum(s * d)`` for every one of the ``2^m`` sign patterns ``s`` (``m <= 16``)."""
    m = d.size
    bits = (np.arange(2**m)[:, None] >> np.arange(m)) & 1
    # s = 1 - 2b: flipping the deltas where b = 1. Exact for integer-valued deltas.
    return d.sum() - 2.0 * (bits.astype(np.float64) @ d)


def _random_sign_sums(x: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``sum(s * x_j)`` for ``resamples`` random sign patterns, every column at once."""
    units = x.shape[0]
    total = x.sum(axis=0)
    out = np.empty((resamples, x.shape[1]))
    for start, rows in blocks(resamples, units):
        # One random bit per sign (unpacked bytes: ten times faster than integers(0, 2)).
        raw = np.frombuffer(rng.bytes(rows * ((units + 7) // 8)), dtype=np.uint8)
        bits = np.unpackbits(raw.reshape(rows, -1), axis=1, count=units)
        out[start : start + rows] = total - 2.0 * (bits.astype(np.float64) @ x)
    return out
