"""How far two judges agree on the same answers: Cohen's kappa and raw agreement."""

from __future__ import annotations

import math
from collections.abc import Sequence

from mnemometer.errors import MnemometerError


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    """Cohen's kappa of two judges' binary verdicts on the same answers.

    ``(p_o - p_e) / (1 - p_e)``; when both judges give one label throughout (``p_e = 1``)
    kappa is undefined and ``None`` is returned (sklearn returns NaN there).
    """
    if len(a) != len(b):
        raise MnemometerError(f"kappa needs paired verdicts: {len(a)} vs {len(b)}")
    n = len(a)
    if n == 0:
        return None
    po = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pa, pb = sum(a) / n, sum(b) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    if math.isclose(pe, 1.0):
        return None
    kappa = (po - pe) / (1 - pe)
    # po == pe in exact arithmetic can leave -8e-17, which reports print as "-0.000".
    return 0.0 if math.isclose(kappa, 0.0, abs_tol=1e-12) else kappa


def raw_agreement(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    """The share of answers on which two judges agree."""
    if not a:
        return None
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)
