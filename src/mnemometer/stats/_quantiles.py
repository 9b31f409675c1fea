"""Normal and Student-t quantiles without importing scipy for the common case.

Every suite summary computes intervals, and importing :mod:`scipy.special` costs a small
run about 0.2 s of CPU, more than some whole runs. The normal quantile is
:class:`statistics.NormalDist` (Wichura's AS 241, accurate to about 1e-16); the t quantile
for integer degrees of freedom up to :data:`CLOSED_FORM_MAX_DF` inverts the closed-form
t distribution function (Abramowitz & Stegun 26.7.3-4) by Newton's method. Both agree with
scipy to 1e-12 (tests check it); larger or fractional df use ``scipy.special.stdtrit``.
"""

from __future__ import annotations

import math
from statistics import NormalDist

CLOSED_FORM_MAX_DF = 2000
"""Beyond this the closed form's sum of ``df / 2`` terms drifts past 1e-12 from scipy."""


def norm_ppf(p: float) -> float:
    """The standard normal quantile ``Φ⁻¹(p)`` for ``0 < p < 1``."""
    return NormalDist().inv_cdf(p)


def t_ppf(df: float, p: float) -> float:
    """The Student-t quantile with ``df`` degrees of freedom, for ``0 < p < 1``."""
    if p < 0.5:
        return -t_ppf(df, 1.0 - p)
    if p == 0.5:
        return 0.0
    if df != int(df) or not 1 <= df <= CLOSED_FORM_MAX_DF:
        from scipy import special

        return float(special.stdtrit(df, p))
    n = int(df)
    target = 2.0 * p - 1.0  # P(|T| <= t)
    log_c = math.lgamma((n + 1) / 2) - math.lgamma(n / 2) - 0.5 * math.log(n * math.pi)
    t = norm_ppf(p)  # below the t quantile; P(|T| <= t) is concave there, so Newton climbs
    for _ in range(60):
        density = math.exp(log_c - (n + 1) / 2 * math.log1p(t * t / n))
        step = (_t_central(t, n) - target) / (2.0 * density)
        t -= step
        # Newton converges quadratically: after a step this small the error left is far
        # below 1e-15, and waiting for a smaller one only chases rounding (up to 60 steps).
        if abs(step) <= 1e-9 * t:
            break
    return t


def _t_central(t: float, n: int) -> float:
    """``P(|T| <= t)`` for ``t >= 0`` and integer ``n`` df (A&S 26.7.3, 26.7.4)."""
    theta = math.atan(t / math.sqrt(n))
    cos2 = math.cos(theta) ** 2
    terms = [1.0]
    if n % 2:
        if n == 1:
            return 2.0 / math.pi * theta
        for k in range(1, (n - 1) // 2):
            terms.append(terms[-1] * cos2 * (2 * k) / (2 * k + 1))
        series = math.sin(theta) * math.cos(theta) * math.fsum(terms)
        return 2.0 / math.pi * (theta + series)
    for k in range(1, n // 2):
        terms.append(terms[-1] * cos2 * (2 * k - 1) / (2 * k))
    return math.sin(theta) * math.fsum(terms)
