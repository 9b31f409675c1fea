"""The Letta-vs-Mem0 benchmark's rating bands, shown beside the scenario numbers.

The seed's README ("What 'Good' Results Look Like") rates a run on three numbers:

========== ============ ============== ================
band       accuracy     similarity     mean latency ms
========== ============ ============== ================
Excellent  >= 0.90      >= 0.80        < 5000
Good       >= 0.70      >= 0.70        < 8000
Poor       < 0.50       < 0.60         > 10000
========== ============ ============== ================

A value between Good and Poor is in no band the seed names ("between"). A row's rating is
the seed's conjunction: Excellent when every number it has is Excellent, Good when every
one is at least Good, Poor when any one is Poor, else "between". The similarity bands were
set for the seed's (cos+1)/2 on OpenAI embeddings; our similarity is on another scale
(``docs/seed-differences.md``), so its band is shown but says less.
"""

from __future__ import annotations

from typing import Any

EXCELLENT, GOOD, POOR, BETWEEN = "Excellent", "Good", "Poor", "between"

# metric -> (excellent, good, poor) thresholds and whether higher is better
BANDS: dict[str, tuple[float, float, float, bool]] = {
    "accuracy": (0.90, 0.70, 0.50, True),
    "similarity": (0.80, 0.70, 0.60, True),
    "latency_ms": (5000.0, 8000.0, 10000.0, False),
}
"""Each banded number: its Excellent, Good and Poor thresholds, and whether higher is better."""


def band(metric: str, value: float | None) -> str | None:
    """The seed's band of ``value`` for ``metric`` (``None`` when there is no value)."""
    if value is None:
        return None
    excellent, good, poor, higher = BANDS[metric]
    if higher:
        if value >= excellent:
            return EXCELLENT
        if value >= good:
            return GOOD
        return POOR if value < poor else BETWEEN
    if value < excellent:
        return EXCELLENT
    if value < good:
        return GOOD
    return POOR if value > poor else BETWEEN


def rating(bands: list[str | None]) -> str | None:
    """The seed's overall rating of a row from the bands of the numbers it has."""
    have = [b for b in bands if b is not None]
    if not have:
        return None
    if all(b == EXCELLENT for b in have):
        return EXCELLENT
    if all(b in (EXCELLENT, GOOD) for b in have):
        return GOOD
    return POOR if POOR in have else BETWEEN


def banded_row(
    name: str, acc: float | None, sim: float | None, lat: float | None
) -> dict[str, Any]:
    """One row of the rating table: the numbers, their bands and the row's rating."""
    bands = [band("accuracy", acc), band("similarity", sim), band("latency_ms", lat)]
    return {
        "scenario": name,
        "accuracy": acc,
        "accuracy_band": bands[0],
        "similarity": sim,
        "similarity_band": bands[1],
        "mean_latency_ms": lat,
        "latency_band": bands[2],
        "rating": rating(bands),
    }
