"""Leaderboard column labels that tell apart columns which would otherwise read the same."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any


def disambiguate(columns: list[Any]) -> None:
    """Columns sharing a label get the dataset hash, then what differs between them.

    First the suite options, then the setup (reader, judges, scoring).
    """
    for same in _shared_labels(columns):
        for c in same:
            c.label += f" ({c.dataset_hash[:8]})"
        for group in _shared_labels(same):
            for field in ("options", "setup"):
                keys = sorted({k for c in group for k in getattr(c, field)})
                for c in group:
                    diff = [
                        k
                        for k in keys
                        if len({json.dumps(getattr(g, field).get(k), default=str) for g in group})
                        > 1
                    ]
                    if diff:
                        c.label += " " + ", ".join(
                            f"{k}={_brief(getattr(c, field).get(k), [getattr(g, field).get(k) for g in group])}"
                            for k in diff
                        )


def _same(v: Any) -> str:
    return json.dumps(v, sort_keys=True, default=str)


def _brief(v: Any, group: list[Any]) -> str:
    """``v`` only as far as it tells apart the values in ``group`` (``v`` among them).

    A judge or a reader is named (``lenient@judge-b``, ``smollm2``) and followed by the
    fields that differ in the group: two readers of one model at two endpoints get
    ``smollm2(base_url=...:18622/v1)``, never one label for both.
    """
    if isinstance(v, list) and all(isinstance(g, list) and len(g) == len(v) for g in group):
        return "+".join(_brief(x, [g[i] for g in group]) for i, x in enumerate(v))
    if isinstance(v, dict) and all(isinstance(g, dict) for g in group):
        head = "judge" if "judge" in v else "model" if "model" in v else None
        keys = dict.fromkeys(k for g in group for k in g)
        differ = [k for k in keys if k != head and len({_same(g.get(k)) for g in group}) > 1]
        parts = ", ".join(f"{k}={_brief(v.get(k), [g.get(k) for g in group])}" for k in differ)
        if head is None:
            return parts
        return f"{v[head]}({parts})" if parts else str(v[head])
    text = v if isinstance(v, str) else json.dumps(v, default=str)
    return text if len(text) <= 40 else text[:18] + "..." + text[-19:]


def _shared_labels(columns: list[Any]) -> list[list[Any]]:
    """The groups of two or more columns with one label, in first-seen order."""
    by_label: dict[str, list[Any]] = defaultdict(list)
    for c in columns:
        by_label[c.label].append(c)
    return [same for same in by_label.values() if len(same) > 1]


__all__ = ["disambiguate"]
