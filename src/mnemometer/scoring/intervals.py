"""The one interval policy: which interval a mean over items gets, decided here only.

* items that cluster (several items share a conversation, a haystack, a scenario's
  epochs, a build sequence's steps): the cluster-robust CR2 interval on Bell-McCaffrey
  degrees of freedom, the same statistic ``compare`` tests a difference with; below
  :data:`~mnemometer.stats.MIN_CLUSTERS` clusters it is the whole feasible range, because
  the spread between clusters cannot be estimated from so few (``compare`` makes no claim
  there either); 0/1 values that are all the same get Wilson's interval on the G clusters
  (``wilson-clusters``), not CR2's zero width;
* independent binary items (every value 0 or 1): Wilson's score interval;
* independent continuous items: Student's t, clipped to the feasible range.

A single independent continuous value has no interval (``None``): there is no spread to
estimate from it. Every summary, headline, report chart and leaderboard cell gets its
interval from :func:`interval`, and names the method it used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mnemometer import stats
from mnemometer.log._schema import Interval

UNIT = (0.0, 1.0)
"""The feasible range of a rate or a score in [0, 1]."""


def interval(
    values: Sequence[float],
    clusters: Sequence[str] | None = None,
    *,
    binary: bool | None = None,
    bounds: tuple[float, float] | None = UNIT,
    confidence: float = 0.95,
) -> Interval | None:
    """The interval of ``mean(values)`` under the policy in the module docstring.

    Args:
        values: one value per item (failures already counted as the suite counts them).
        clusters: each item's cluster label; items are independent when every label is
            distinct (or when ``None``).
        binary: the values are 0/1; ``None`` decides from the values.
        bounds: feasible range of the mean (``None``: unbounded).
        confidence: nominal coverage.

    Returns:
        ``None`` for no values, or for one independent continuous value.
    """
    n = len(values)
    if n == 0:
        return None
    if clusters is not None and len(set(clusters)) < n:
        g = len(set(clusters))
        if g < stats.MIN_CLUSTERS:
            low, high = bounds if bounds is not None else (None, None)
            return Interval(low=low, high=high, method="cluster-robust", confidence=confidence)
        if binary and len(set(values)) == 1:
            # Every value the same: the spread is 0 and CR2 would say [p, p]. Nothing is
            # known beyond G clusters that all agree: Wilson's interval on G trials.
            iv = stats.wilson(g if values[0] else 0, g, confidence=confidence)
            iv = type(iv)("wilson-clusters", iv.low, iv.high, iv.confidence)
        else:
            iv = stats.cluster_robust_interval(
                values, clusters, bounds=bounds, confidence=confidence
            )
    elif binary or (binary is None and all(v in (0.0, 1.0) for v in values)):
        iv = stats.wilson(int(round(sum(values))), n, confidence=confidence)
    elif n < 2:
        return None
    else:
        iv = stats.mean_interval(values, bounds=bounds, confidence=confidence)
    low = iv.low if math.isfinite(iv.low) else None
    high = iv.high if math.isfinite(iv.high) else None
    return Interval(low=low, high=high, method=iv.method, confidence=iv.confidence)


__all__ = ["UNIT", "interval"]
