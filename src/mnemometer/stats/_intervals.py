"""Confidence intervals with a closed form, and the interval record every method returns.

Every interval is clipped to the feasible range of what it estimates: ``[0, 1]`` for a
proportion, ``[-1, 1]`` for a difference of proportions, ``[a - b, b - a]`` for a mean
difference of values in ``[a, b]`` (:func:`delta_bounds`), or a range the caller declares.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Real
from typing import TYPE_CHECKING

from mnemometer.errors import MnemometerError
from mnemometer.stats._quantiles import norm_ppf, t_ppf

if TYPE_CHECKING:
    import numpy as np

MIN_CLUSTERS = 5
"""Fewer clusters than this support no claim: no interval and no test are reported.

Kept here, with no numpy, rather than beside the clustered inference that uses it: a
summary over fewer clusters reads it and needs nothing else."""

Bounds = tuple[float, float]
"""A feasible range ``(low, high)``; either end may be infinite."""

UNBOUNDED: Bounds = (-math.inf, math.inf)


@dataclass(frozen=True, slots=True)
class Interval:
    """A confidence interval."""

    method: str
    """``percentile``, ``bca``, ``cluster-percentile``, ``cluster-bca``, ``cluster-robust``,
    ``wilson``, ``newcombe`` or ``t``."""
    low: float
    """Lower bound."""
    high: float
    """Upper bound."""
    confidence: float
    """Nominal coverage, e.g. 0.95."""


def delta_bounds(low: float, high: float) -> Bounds:
    """Feasible range of a difference (or mean difference) of two values in ``[low, high]``.

    ``delta_bounds(0, 1) == (-1, 1)``: success deltas and deltas of any metric in [0, 1].
    """
    if not low <= high:
        raise MnemometerError(f"bounds must satisfy low <= high, got ({low}, {high})")
    return (low - high, high - low)


def clip(iv: Interval, bounds: Bounds | None) -> Interval:
    """``iv`` with both ends clipped to ``bounds`` (NaN ends stay NaN)."""
    if bounds is None:
        return iv
    import numpy as np  # here, as in each function below: a run that computes no interval

    lo, hi = bounds
    return Interval(
        iv.method,
        float(np.clip(iv.low, lo, hi)),
        float(np.clip(iv.high, lo, hi)),
        iv.confidence,
    )


def column_bounds(bounds: Bounds | Sequence[Bounds | None] | None, k: int) -> list[Bounds]:
    """One ``(low, high)`` per column from a shared pair, a per-column list or ``None``."""
    if bounds is None:
        return [UNBOUNDED] * k
    if len(bounds) == 2 and all(isinstance(b, Real) for b in bounds):
        lo, hi = bounds  # type: ignore[misc]
        return [(float(lo), float(hi))] * k
    per = [UNBOUNDED if b is None else (float(b[0]), float(b[1])) for b in bounds]  # type: ignore[index]
    if len(per) != k:
        raise MnemometerError(f"one (low, high) bound per column: {len(per)} vs {k}")
    return per


def _check_confidence(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise MnemometerError(f"confidence must be in (0, 1), got {confidence}")
    return norm_ppf(1.0 - (1.0 - confidence) / 2.0)


def wilson(successes: int, n: int, *, confidence: float = 0.95) -> Interval:
    """Wilson score interval of the proportion ``successes / n``.

    ``(p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)``, ``z = Φ⁻¹(1 - α/2)``
    (Wilson 1927; Newcombe 1998's method 3). With ``n = 0`` nothing is known: ``[0, 1]``.

    Raises:
        MnemometerError: counts out of range, or confidence outside (0, 1).
    """
    z = _check_confidence(confidence)
    if n < 0 or not 0 <= successes <= n:
        raise MnemometerError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return Interval("wilson", 0.0, 1.0, confidence)
    p = successes / n
    den = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4 * n * n)) / den
    # At 0 and n one end is exactly 0 or 1 (rounding would leave ~1e-18 of dust).
    low = 0.0 if successes == 0 else centre - half
    high = 1.0 if successes == n else centre + half
    return clip(Interval("wilson", low, high, confidence), (0.0, 1.0))


def newcombe(s1: int, n1: int, s2: int, n2: int, *, confidence: float = 0.95) -> Interval:
    """Newcombe's hybrid score interval for ``p1 - p2`` of two independent proportions.

    Method 10 of Newcombe (1998, Statistics in Medicine 17:873-890): with Wilson limits
    ``[l1, u1]`` and ``[l2, u2]`` and ``d = p1 - p2``, the interval is
    ``[d - sqrt((p1 - l1)² + (u2 - p2)²), d + sqrt((u1 - p1)² + (p2 - l2)²)]``. It is for
    independent groups; for paired outcomes use McNemar and the paired bootstrap.

    Raises:
        MnemometerError: an empty group, counts out of range, or a bad confidence.
    """
    if n1 <= 0 or n2 <= 0:
        raise MnemometerError(f"Newcombe's interval needs two non-empty groups: {n1}, {n2}")
    a, b = wilson(s1, n1, confidence=confidence), wilson(s2, n2, confidence=confidence)
    p1, p2 = s1 / n1, s2 / n2
    d = p1 - p2
    low = d - math.sqrt((p1 - a.low) ** 2 + (b.high - p2) ** 2)
    high = d + math.sqrt((a.high - p1) ** 2 + (p2 - b.low) ** 2)
    return clip(Interval("newcombe", low, high, confidence), (-1.0, 1.0))


def mean_interval(
    values: Sequence[float] | np.ndarray,
    *,
    confidence: float = 0.95,
    bounds: Bounds | None = None,
) -> Interval:
    """Student-t interval of a mean: ``mean ± t_{n-1, 1-α/2} · sd / sqrt(n)``.

    With one value the spread is unknown and the interval is the whole feasible range
    (``bounds``, else infinite).

    Args:
        values: the observations (finite).
        confidence: nominal coverage in (0, 1).
        bounds: feasible range of the mean, e.g. ``(0, 1)`` for accuracies.

    Raises:
        MnemometerError: no values, non-finite values, or a bad confidence.
    """
    import numpy as np

    _check_confidence(confidence)
    x = np.asarray(values, dtype=float).reshape(-1)
    if x.size == 0:
        raise MnemometerError("no values for a mean interval")
    if not np.all(np.isfinite(x)):
        raise MnemometerError("values must be finite numbers")
    if x.size < 2:
        return clip(Interval("t", -math.inf, math.inf, confidence), bounds)
    if float(np.ptp(x)) == 0.0:  # no spread (float dust aside): the value itself
        return clip(Interval("t", float(x[0]), float(x[0]), confidence), bounds)
    mean = float(x.mean())
    t = t_ppf(x.size - 1, 1.0 - (1.0 - confidence) / 2.0)
    half = t * float(x.std(ddof=1)) / math.sqrt(x.size)
    return clip(Interval("t", mean - half, mean + half, confidence), bounds)
