"""A composite headline compared: MemTest's weighted overall is not a mean over items.

Each side's headline is recomputed by its own recorded summary scorer over the paired items
(so both sides are judged on the same items), and its uncertainty comes from a grouped
jackknife: the items fall into :data:`GROUPS` groups by a stable hash of their id (the
versions of one memory's storage probe stay together), the delta is recomputed with each
group left out, and ``SE^2 = (G - 1) / G * sum_g (delta_-g - mean)^2`` gives a t interval
and test on G - 1 degrees of freedom. It costs G + 1 summaries per run (about a second
for Harry Potter), where a bootstrap would cost thousands.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence

import numpy as np

from mnemometer.comparison._model import HeadlineStats, IntervalOut
from mnemometer.comparison._pairs import Pair
from mnemometer.log._reader import RunLog
from mnemometer.log._schema import HeadlineSpec, ItemResult
from mnemometer.scoring._scorer import build
from mnemometer.scoring.headline import headline

GROUPS = 20
"""Jackknife groups."""
METHOD = "grouped jackknife"


def _group(r: ItemResult) -> int:
    unit = "/".join(r.item_id.split("/")[:2])  # storage/<memory>/<style> -> one memory
    return zlib.crc32(unit.encode()) % GROUPS


def _value(runs: Sequence[RunLog], keys: set[tuple[str, str]], drop: int | None) -> float | None:
    vals = []
    for r in runs:
        scoring = r.header.scoring
        if scoring is None:
            return None
        items = [
            it
            for it in r.items
            if (it.item_id, it.step or "") in keys and (drop is None or _group(it) != drop)
        ]
        summary = build(scoring.summary).summarize(r.header, items, None)
        v = headline(scoring.headline, items, summary).value
        if v is None:
            return None
        vals.append(v)
    return sum(vals) / len(vals) if vals else None


def composite_headline(
    b_runs: Sequence[RunLog],
    c_runs: Sequence[RunLog],
    pairs: list[Pair],
    specs: tuple[HeadlineSpec, HeadlineSpec],
    confidence: float,
) -> HeadlineStats:
    """Both sides' composite headline over the paired items, with a grouped jackknife."""
    del specs
    keys = {(p.item_id, p.step) for p in pairs}
    base, cand = _value(b_runs, keys, None), _value(c_runs, keys, None)
    items = len({p.item_id for p in pairs})
    if base is None or cand is None:
        return HeadlineStats(pairs=items, baseline=base, candidate=cand, delta=None, p_value=None)
    delta = cand - base
    present = sorted({_group(it) for it in b_runs[0].items if (it.item_id, it.step or "") in keys})
    leave_out = []
    for g in present:
        b, c = _value(b_runs, keys, g), _value(c_runs, keys, g)
        if b is not None and c is not None:
            leave_out.append(c - b)
    out = HeadlineStats(pairs=items, baseline=base, candidate=cand, delta=delta)
    n = len(leave_out)
    if n < 2:
        out.p_value, out.no_claim = None, "too few items for a jackknife of the composite"
        return out
    arr = np.asarray(leave_out)
    se = math.sqrt((n - 1) / n * float(np.sum((arr - arr.mean()) ** 2)))
    from scipy import stats as st

    out.test = f"{METHOD} t ({n} groups)"
    if se == 0.0:
        out.p_value = 1.0 if delta == 0 else 0.0
        low = high = delta
    else:
        out.p_value = float(2 * st.t.sf(abs(delta) / se, n - 1))
        half = float(st.t.ppf(1 - (1 - confidence) / 2, n - 1)) * se
        low, high = max(-1.0, delta - half), min(1.0, delta + half)
        out.mde = float((st.t.ppf(0.975, n - 1) + st.t.ppf(0.8, n - 1)) * se)
    out.intervals = [IntervalOut(method=METHOD, low=low, high=high, confidence=confidence)]
    return out


__all__ = ["GROUPS", "METHOD", "composite_headline"]
