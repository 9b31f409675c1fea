"""What a run's LLM calls cost: billed tokens by role, times the prices its header pinned.

Every summary gets this from the summary engine (:func:`mnemometer.scoring.summarize`),
whatever the suite. Tokens come from the items: ``tokens`` holds what each endpoint
reported (``reader_prompt``, ``reader_completion``, or ``prompt``/``completion`` and
``input``/``output`` for an answering agent), ``extra.counted_tokens`` what mnemometer
counted itself with the model's tokenizer (or the labelled estimate), and each judge's
verdict in ``extra.judges`` carries both for that judge. Storing cost comes from the
store's metered ingest calls (``ingest.json``, or ``extra.ingest_llm`` per conversation).

A figure an endpoint reports is billed as reported, unless the count says it is missing or
short: an endpoint that reports no usage, or fewer prompt tokens than the text it was sent
holds (beyond the counter's tolerance), is billed what mnemometer counted, and the run says
so in ``flags``. A model with tokens but no price makes every dollar figure ``None`` and
says which model to price (``--prices FILE``): never a silent $0.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from mnemometer.log._schema import CostSummary, ItemResult, RoleCost, RunHeader, Table

TOLERANCE = {True: 0.10, False: 0.50}
"""How far below the count (a share of it) a reported figure may fall before the count is
billed: tokenizer exact / estimate. The chat template only ever adds tokens to a report."""

UNKNOWN = "unknown"
"""The model of a role the header did not record (an agent that names none)."""

_SIDES = ("prompt", "completion")
_PLAIN = {"prompt": "prompt", "input": "prompt", "completion": "completion", "output": "completion"}


class _Tally:
    """Reported, counted and billed tokens of one role, with its disagreements."""

    def __init__(self, exact: bool) -> None:
        self.tol = TOLERANCE[exact]
        self.reported = dict.fromkeys(_SIDES, 0)
        self.counted: dict[str, int | None] = dict.fromkeys(_SIDES)
        self.billed = dict.fromkeys(_SIDES, 0)
        self.missing = dict.fromkeys(_SIDES, 0)  # calls whose usage was absent, counted billed
        self.short = dict.fromkeys(_SIDES, 0)  # calls whose usage fell short of the count
        self.calls = 0

    def add(self, reported: dict[str, int], counted: dict[str, int] | None) -> None:
        self.calls += 1
        for side in _SIDES:
            r = int(reported.get(side) or 0)
            c = None if counted is None or side not in counted else int(counted[side])
            self.reported[side] += r
            if c is not None:
                self.counted[side] = (self.counted[side] or 0) + c
            billed = r
            if c is not None and c > 0 and r == 0:
                billed = c
                self.missing[side] += 1
            elif c is not None and r < c * (1 - self.tol):
                billed = c
                self.short[side] += 1
            self.billed[side] += billed


_Calls = list[tuple[dict[str, int], dict[str, int] | None]]


def _role_tokens(r: ItemResult) -> dict[str, _Calls]:
    """Role -> its calls' (reported, counted) tokens in one item."""
    out: dict[str, _Calls] = {}
    counted_all = r.extra.get("counted_tokens") or {}
    judges = r.extra.get("judges") or {}
    by_role: dict[str, dict[str, int]] = defaultdict(dict)
    counted: dict[str, dict[str, int]] = defaultdict(dict)
    for key, n in r.tokens.items():
        role, _, side = key.rpartition("_")
        if not role and key in _PLAIN:
            role, side = "reader", _PLAIN[key]
        if side not in _SIDES or not role or (role == "judge" and judges):
            continue  # a total, or judges' sums (each verdict carries its own)
        by_role[role][side] = by_role[role].get(side, 0) + int(n)
        if key in counted_all:
            counted[role][side] = int(counted_all[key])
    for role, reported in by_role.items():
        out[role] = [(reported, counted.get(role) or None)]
    for name, v in judges.items():
        if isinstance(v, dict) and v.get("tokens") is not None:
            calls = [(dict(v["tokens"]), v.get("counted"))]
            if v.get("probe_tokens"):
                calls.append((dict(v["probe_tokens"]), v.get("probe_counted")))
            out[f"judge:{name}"] = calls
    return out


def _ingest_calls(items: list[ItemResult], run_dir: Path | None) -> tuple[dict | None, int | None]:
    """(prompt and completion tokens of metered ingest calls, or ``None``; memories stored)."""
    if run_dir is not None and (run_dir / "ingest.json").is_file():
        row = json.loads((run_dir / "ingest.json").read_text("utf-8")).get("row") or {}
        memories = row.get("memories")
        if row.get("prompt_tokens") is None:
            return None, memories
        return {s: int(row.get(f"{s}_tokens") or 0) for s in _SIDES}, memories
    per_conv: dict[str, dict[str, Any]] = {}
    for r in items:
        if "ingest_memories" in r.extra:
            per_conv[r.item_id] = r.extra
    if not per_conv:
        return None, None
    memories = sum(int(e["ingest_memories"]) for e in per_conv.values())
    metered = [e["ingest_llm"] for e in per_conv.values() if e.get("ingest_llm") is not None]
    if not metered:
        return None, memories
    return {s: sum(int(m.get(f"{s}_tokens") or 0) for m in metered) for s in _SIDES}, memories


def cost_summary(
    header: RunHeader, items: list[ItemResult], run_dir: Path | None = None
) -> CostSummary | None:
    """The run's cost (``None`` when its header pinned no prices)."""
    record = header.cost
    if record is None:
        return None
    tallies: dict[str, _Tally] = {}

    def model_of(role: str) -> str:
        return record.roles.get(role) or record.roles.get(role.split(":")[0]) or UNKNOWN

    def exact(role: str) -> bool:
        price = record.models.get(model_of(role))
        return price is not None and not price.tokenizer.startswith("estimate")

    for r in items:
        for role, calls in _role_tokens(r).items():
            for reported, counted in calls:
                tallies.setdefault(role, _Tally(exact(role))).add(reported, counted)
    ingest, memories = _ingest_calls(items, run_dir)
    if ingest is not None:
        tallies.setdefault("ingest", _Tally(False)).add(ingest, None)
    roles, unpriced, flags = [], [], []
    for role, t in tallies.items():
        model = model_of(role)
        price = record.models.get(model)
        usd = None
        if price is not None and price.input_per_token is not None:
            usd = t.billed["prompt"] * price.input_per_token + t.billed["completion"] * (
                price.output_per_token or 0.0
            )
        elif t.billed["prompt"] or t.billed["completion"]:
            unpriced.append(model)
        else:
            usd = 0.0  # no tokens: nothing to pay, whatever the price
        roles.append(
            RoleCost(
                role=role,
                model=model,
                prompt_tokens=t.billed["prompt"],
                completion_tokens=t.billed["completion"],
                reported_prompt_tokens=t.reported["prompt"],
                reported_completion_tokens=t.reported["completion"],
                counted_prompt_tokens=t.counted["prompt"],
                counted_completion_tokens=t.counted["completion"],
                usd=usd,
            )
        )
        flags += _flags(role, t)
    complete = all(x.usd is not None for x in roles)
    total = sum(x.usd or 0.0 for x in roles) if complete else None
    correct = sum(r.success is True for r in items)
    ingest_usd = next((x.usd for x in roles if x.role == "ingest"), None)
    return CostSummary(
        usd=total,
        per_question=_per(total, len(items)),
        per_correct=_per(total, correct),
        per_memory=_per(ingest_usd, memories) if ingest is not None else None,
        questions=len(items),
        correct=correct,
        memories=memories,
        roles=roles,
        unpriced=sorted(set(unpriced)),
        tokenizers={m: p.tokenizer for m, p in record.models.items()},
        price_map=record.price_map,
        price_map_sha256=record.price_map_sha256,
        flags=flags,
    )


def _per(total: float | None, n: int | None) -> float | None:
    return None if total is None or not n else total / n


def _flags(role: str, t: _Tally) -> list[str]:
    out = []
    for side in _SIDES:
        if t.missing[side]:
            out.append(
                f"{role}: the endpoint reported no {side} tokens on {t.missing[side]} of "
                f"{t.calls} calls; billed what mnemometer counted there"
            )
        if t.short[side]:
            out.append(
                f"USAGE DISAGREES: {role}: the endpoint reported {t.reported[side]:,} {side} "
                f"tokens where mnemometer counted {t.counted[side] or 0:,} (on {t.short[side]} "
                f"of {t.calls} calls it reported more than {100 * t.tol:.0f}% fewer than the "
                "count); billed the count there"
            )
    return out


def usd(value: float | None) -> str:
    """``$0.0123``, ``$12.34``, or ``–`` for no figure."""
    if value is None:
        return "–"
    if value == 0:
        return "$0"
    return f"${value:.2f}" if abs(value) >= 1 else f"${value:.4g}"


def cost_table(c: CostSummary) -> Table:
    """Tokens and dollars by role, then the run's totals (every report renders it)."""
    rows = [
        [
            x.role,
            x.model,
            f"{x.prompt_tokens:,}",
            f"{x.completion_tokens:,}",
            "–" if x.counted_prompt_tokens is None else f"{x.counted_prompt_tokens:,}",
            c.tokenizers.get(x.model, "–").split(" (")[0],
            usd(x.usd) if x.usd is not None else "no price",
        ]
        for x in c.roles
    ]
    tokens = (sum(x.prompt_tokens for x in c.roles), sum(x.completion_tokens for x in c.roles))
    rows.append(["whole run", "", f"{tokens[0]:,}", f"{tokens[1]:,}", "", "", usd(c.usd)])
    for label, value in (
        (f"per question ({c.questions})", c.per_question),
        (f"per correct answer ({c.correct})", c.per_correct),
        (
            f"per memory stored ({c.memories})" if c.memories else "per memory stored",
            c.per_memory,
        ),
    ):
        rows.append([label, "", "", "", "", "", usd(value)])
    return Table(
        name="cost",
        title=f"What the LLM calls cost (USD; prices: {c.price_map}"
        + (f", sha256 {c.price_map_sha256[:12]}" if c.price_map_sha256 else "")
        + ")",
        columns=["role", "model", "prompt", "completion", "prompt counted", "counter", "USD"],
        rows=rows,
        data=[x.model_dump() for x in c.roles],
    )


def cost_notes(c: CostSummary) -> list[str]:
    """Unpriced models and usage disagreements, for the summary's notes."""
    from mnemometer.llm._prices import no_price

    out = [
        no_price(m)
        if m != UNKNOWN
        else "tokens of a model the run did not record (an agent that names none) are not priced"
        for m in c.unpriced
    ]
    if c.unpriced and c.price_map == "none":
        out.append("no price map installed: pip install 'mnemometer[cost]' for LiteLLM's")
    estimated = sorted(m for m, t in c.tokenizers.items() if t.startswith("estimate"))
    if estimated:
        out.append(
            "tokens of " + ", ".join(estimated) + " are counted by the estimate of 4 "
            "characters per token (no offline tokenizer for them)"
        )
    return out + c.flags


__all__ = ["TOLERANCE", "cost_notes", "cost_summary", "cost_table", "usd"]
