"""A memtest item's record as plain data shaped like an ``ItemResult``.

Plain data, as in the retrieval suite: the log writer serialises it directly and the reader
validates it, instead of one model per result and per metric.
"""

from __future__ import annotations

from typing import Any

from mnemometer.scoring.retrieval import duplicate_count
from mnemometer.suites._base import Item


def searched(
    item: Item,
    text: str,
    hits: list[Any],
    ms: float,
    *,
    groups: dict[str, str],
    expected: list[str],
    metrics: list[dict[str, Any]],
    extra: dict[str, Any] | None = None,
    gone: int = 0,
) -> dict[str, Any]:
    """The result of a probe answered by one search of ``text``, its hits logged.

    ``extra`` gains ``duplicates_dropped``: hits repeating a memory id already returned
    (scored once), and ``gone_left_out`` when the store's hits held memories lost by the
    horizon (left out, the ranking filled from below).
    """
    dropped = duplicate_count([h.memory_id for h in hits])
    extra = {**(extra or {}), "duplicates_dropped": dropped}
    if gone:
        extra["gone_left_out"] = gone
    out = result(item, text, ms, groups=groups, expected=expected, metrics=metrics, extra=extra)
    out["retrieved"] = [{"id": h.memory_id, "score": h.score} for h in hits]
    return out


def result(
    item: Item,
    text: str,
    ms: float,
    *,
    groups: dict[str, str],
    expected: list[str],
    metrics: list[dict[str, Any]],
    extra: dict[str, Any],
) -> dict[str, Any]:
    """An item's result as plain data shaped like :class:`ItemResult`.

    ``run_item`` adds ``success``.
    """
    return {
        "item_id": item.id,
        "index": item.index,
        "input": text,
        "groups": groups,
        "expected": list(expected),
        "metrics": metrics,
        "latency_ms": ms,
        "extra": extra,
    }
