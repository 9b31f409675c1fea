"""The rule-sensitivity table: one run's rankings under every peer's retrieval rule.

Beside each rule's value stands a random ranking's under the same rule: each question's
record keeps the first turns of a seeded random permutation of its conversation
(``extra.random``), which the rule scorers the run recorded score exactly as they scored the
system's ranking. So the table says how far each rule's number is above what chance gets
under that rule (a session rule gives a random ranking about 0.2 on LoCoMo, a turn rule
about 0.01), all from the records alone.
"""

from __future__ import annotations

from typing import Any

from mnemometer.errors import MnemometerError
from mnemometer.log._schema import Interval, ItemResult, RunHeader, Table
from mnemometer.scoring._scorer import build
from mnemometer.scoring.intervals import interval
from mnemometer.scoring.rules import PREFIX, RULE_DEPTH, RULES, Rule, random_record

RANDOM = (
    "per question, a random permutation of its conversation's turns seeded by the question id "
    "(the same for every system), scored by the same rules"
)
"""What the random column is, for the section and the docs."""


def rule_scorers(header: RunHeader, rows: list[ItemResult]) -> tuple[list[Rule], list[str]]:
    """The retrieval rules the run was scored by, built from its header, and notes.

    A rule recorded at a version other than the installed one is left out, with a note.
    """
    scoring = header.scoring
    if scoring is None:
        return [], []
    written = {m.name[len(PREFIX) :] for r in rows for m in r.metrics if m.name.startswith(PREFIX)}
    builtin = {r.name for r in RULES}
    out: list[Rule] = []
    notes: list[str] = []
    for spec in scoring.scorers:
        if spec.name not in written and spec.name not in builtin:
            continue
        try:
            scorer = build(spec)
        except MnemometerError as e:
            notes.append(f"rule {spec.name!r} is not in the rule-sensitivity table: {e}")
            continue
        if isinstance(scorer, Rule):
            out.append(scorer)
    return out, notes


def _light(r: ItemResult) -> dict[str, Any]:
    """The parts of a record a rule reads, as plain data (without copying the record)."""
    return {"status": r.status, "expected": r.expected, "groups": r.groups, "extra": r.extra}


def _random_ok(r: ItemResult, k: int) -> bool:
    """Whether the record's random ranking reaches cut-off ``k``."""
    ids = (r.extra.get("random") or {}).get("ids") or []
    return k <= len(ids) or len(ids) < RULE_DEPTH  # shorter: the conversation ran out


def rule_sensitivity(
    header: RunHeader, rows: list[ItemResult]
) -> tuple[Table | None, dict[str, Any], list[str]]:
    """The table, its section (``sections["rules"]``) and notes; no table without rules.

    Every question counts where its rule says it does (a failed one as a miss); the
    interval is the one policy's, clustered by conversation.
    """
    rules, notes = rule_scorers(header, rows)
    if not rules:
        return None, {}, notes
    values = [{(m.name, m.k): m.value for m in r.metrics} for r in rows]
    randoms = [random_record(_light(r)) for r in rows]
    clusters = [r.groups.get("conversation", r.step or r.item_id) for r in rows]
    data: list[dict[str, Any]] = []
    cells: list[list[str]] = []
    for rule in rules:
        for k in rule.ks:
            vals, cl, rand = [], [], []
            for r, got, rnd, c in zip(rows, values, randoms, clusters, strict=True):
                if r.status == "ok":
                    v = got.get((rule.metric, k))
                else:
                    v = next((m["value"] for m in rule.score(_light(r)) if m["k"] == k), None)
                if v is not None:
                    vals.append(v)
                    cl.append(c)
                if rnd is not None and not rule.texts_needed and _random_ok(r, k):
                    rv = rule.value(rnd, k)
                    if rv is not None:
                        rand.append(rv)
            if not vals:
                continue
            iv = interval(vals, cl, binary=rule.binary)
            row = {
                "rule": rule.name,
                "label": rule.label,
                "whose": rule.whose,
                "k": k,
                "n": len(vals),
                "value": sum(vals) / len(vals),
                "interval": iv.model_dump() if iv else None,
                "random": {"n": len(rand), "value": sum(rand) / len(rand)} if rand else None,
            }
            data.append(row)
            cells.append(
                [
                    rule.name,
                    rule.label,
                    rule.whose,
                    str(k),
                    str(len(vals)),
                    f"{row['value']:.3f} {_iv(iv)}",
                    f"{row['random']['value']:.3f}" if rand else "-",
                ]
            )
    if not data:
        return None, {}, notes
    section = {"rules": data, "random": RANDOM, **_spread(data)}
    table = Table(
        name="rule_sensitivity",
        title="The same ranking under every peer's rule (a random ranking beside)",
        columns=["rule", "counts", "whose", "k", "n", "value [95% CI]", "random ranking"],
        rows=cells,
        data=data,
    )
    return table, section, notes


def _spread(data: list[dict[str, Any]]) -> dict[str, Any]:
    """How far the rule alone moves the ranking's number (and the random ranking's)."""
    vals = [d["value"] for d in data]
    rand = [d["random"]["value"] for d in data if d["random"]]
    return {
        "spread": max(vals) - min(vals),
        "random_spread": (max(rand) - min(rand)) if rand else None,
    }


def _iv(iv: Interval | None) -> str:
    if iv is None or iv.low is None or iv.high is None:
        return "[-]"
    return f"[{iv.low:.3f}, {iv.high:.3f}]"
