"""Item results as a pandas DataFrame (the ``[analysis]`` extra): one row per result."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mnemometer.errors import MissingExtraError
from mnemometer.log._schema import ItemResult


def pandas() -> Any:
    """The pandas module, or the exact install command when it is missing."""
    try:
        import pandas as pd
    except ImportError:
        raise MissingExtraError("results as a DataFrame", "analysis", "pandas") from None
    return pd


def items_frame(items: Iterable[ItemResult], **constant: Any) -> Any:
    """One row per item result: ids, status, success, latency, tokens, groups and metrics.

    Groups become ``group.<key>`` columns, tokens ``tokens.<kind>``, and every metric a
    column named by its display key (``recall@10``, ``latency.p95``); ``constant`` adds
    columns with one value (a run id, a condition).
    """
    rows = []
    for r in items:
        row: dict[str, Any] = {
            **constant,
            "item_id": r.item_id,
            "step": r.step,
            "index": r.index,
            "status": r.status,
            "success": r.success,
            "error": r.error,
            "input": r.input,
            "output": r.output,
            "latency_ms": r.latency_ms,
        }
        row.update({f"group.{k}": v for k, v in r.groups.items()})
        row.update({f"tokens.{k}": v for k, v in r.tokens.items()})
        row.update({m.key: m.value for m in r.metrics})
        rows.append(row)
    return pandas().DataFrame(rows)
