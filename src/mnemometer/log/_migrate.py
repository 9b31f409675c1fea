"""Migrations of older run logs to the current schema, applied on read.

Each step takes raw JSON (a header, or one item line with its migrated header) of one
version and returns the next version's. Old files are never rewritten: a v1 run directory
stays v1 on disk and reads as the current version.
"""

from __future__ import annotations

import re
from typing import Any

# Version 1's suite options that described the system side or a location, not what was
# measured (v1's comparison kept the same list). Version 2 records them elsewhere.
_V1_SIDE = {
    "condition",
    "profile",
    "suite_dir",
    "memories",
    "notes",
    "repeat",
    "build_root",
    "memory_store",
    "memory_store_options",
    "skipped",
}
_V1_INPUTS = {"suite_dir", "memories", "profile", "path"}
V1_SUCCESS = (
    "an item succeeds when its 'success' metric is 1 (typed suite items); for the "
    "retrieval suite, when hit@top_k is 1 (a relevant memory is in the top k), or for a "
    "negative query when the store abstained; errored and timed-out items fail"
)
_LATENCY = re.compile(r"^(?:(?P<what>turn|memory|llm)_)?latency_(?:(?P<mean>mean)|p(?P<p>\d+))_ms$")


def header_v1_to_v2(raw: dict[str, Any]) -> dict[str, Any]:
    """Split v1 suite options into measured options, inputs and system-side facts."""
    out = dict(raw)
    opts = dict(out.get("suite_options") or {})
    system = dict(out.get("system") or {})
    notes = list(opts.get("notes") or [])
    if out.get("suite") == "items":
        condition = opts.get("condition") or None
        inputs = {k: opts[k] for k in _V1_INPUTS if k in opts}
        measured = {k: v for k, v in opts.items() if k not in _V1_SIDE}
    elif out.get("suite") == "scenarios":
        condition = None
        inputs = {"path": opts.get("path")}
        measured = {k: v for k, v in opts.items() if k != "path"}
        if "repeat" in measured:  # in-run repetitions are called epochs from v2 on
            measured["epochs"] = measured.pop("repeat")
    else:
        condition, inputs, measured = None, {}, opts
    system["condition"] = condition
    out.update(
        schema_version=2,
        suite_options=measured,
        suite_inputs=inputs,
        success_definition=V1_SUCCESS,
        system=system,
        notes=notes,
    )
    return out


def metric_v1_to_v2(m: dict[str, Any]) -> dict[str, Any]:
    """``latency_p95_ms`` → latency, percentile 95, unit ms; ``recall_at_k`` → recall."""
    name = str(m.get("name", ""))
    lat = _LATENCY.match(name)
    if lat:
        out = {**m, "name": f"{lat['what']}_latency" if lat["what"] else "latency", "unit": "ms"}
        if lat["p"]:
            out["percentile"] = float(lat["p"])
        return out
    if name.endswith("_at_k") and m.get("k") is None:
        return {**m, "name": name[: -len("_at_k")]}
    return m


def item_v1_to_v2(raw: dict[str, Any], header: dict[str, Any]) -> dict[str, Any]:
    """Move ``extra.step`` to ``step``, record success by v1's rule, structure metrics."""
    out = dict(raw)
    extra = dict(out.get("extra") or {})
    step = extra.pop("step", None)
    if step is not None:
        out["step"] = str(step)
    extra.pop("sub_results", None)
    out["extra"] = extra
    metrics = [metric_v1_to_v2(m) for m in out.get("metrics") or []]
    out["metrics"] = metrics
    out["success"] = _v1_success(out, metrics, header)
    return out


def _v1_success(
    item: dict[str, Any], metrics: list[dict[str, Any]], header: dict[str, Any]
) -> bool | None:
    if item.get("status", "ok") != "ok":
        return False
    by = {(m.get("name"), m.get("k")): m.get("value") for m in metrics}
    if ("success", None) in by:
        v = by[("success", None)]
        return None if v is None else v >= 1.0
    hit_ks = [k for (name, k) in by if name == "hit" and k is not None]
    if hit_ks:
        top_k = (header.get("suite_options") or {}).get("top_k")
        v = by[("hit", top_k if top_k in hit_ks else max(hit_ks))]
        return None if v is None else v >= 1.0
    if ("abstention", None) in by:
        v = by[("abstention", None)]
        return None if v is None else v >= 1.0
    return None


def header_v2_to_v3(raw: dict[str, Any]) -> dict[str, Any]:
    """Version 3 adds ``cost`` (prices pinned at the start): a v2 run recorded none."""
    return {**raw, "schema_version": 3}


def item_v2_to_v3(raw: dict[str, Any], header: dict[str, Any]) -> dict[str, Any]:
    """Item lines did not change in version 3."""
    return raw


ITEMS_UNCHANGED_SINCE = 2
"""Item lines of this version and later read as the current version's, as they are."""

HEADER_STEPS = {1: header_v1_to_v2, 2: header_v2_to_v3}
"""``version → step`` turning a header of that version into the next one."""
ITEM_STEPS = {1: item_v1_to_v2, 2: item_v2_to_v3}
"""``version → step`` turning an item line of that version into the next one."""
