"""The summary of a benchmark run: accuracy per judge and F1 with cluster-robust intervals.

Questions of one conversation are not independent (LoCoMo has 10 conversations), so every
interval of a mean over questions is cluster-robust (CR2 on Bell-McCaffrey df, no claim below
five conversations: :mod:`mnemometer.scoring.intervals`) when conversations hold several questions;
otherwise a Wilson interval for a proportion and a t interval for a mean. The minimum
detectable effect of each accuracy is the smallest difference a paired comparison against
a system of the same accuracy would detect (alpha 0.05, power 0.8), assuming independent
errors between the two systems and inflated by the clustering's design effect.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from mnemometer import stats
from mnemometer.log._schema import Interval, ItemResult, Metric, RunHeader, Summary, Table
from mnemometer.scoring.aggregate import distribution, mean_metrics
from mnemometer.scoring.agreement import cohen_kappa, raw_agreement
from mnemometer.scoring.benchmark.probes import false_positives
from mnemometer.scoring.benchmark.rules import rule_sensitivity
from mnemometer.scoring.intervals import interval
from mnemometer.scoring.summaries import ingest_figures, ingest_table

PERCENTILES = (50, 95, 99)
PHASES = ("ingest", "search", "answer", "judge")
RECALL = ("adversarial", "evidence_recall")
"""Scores over every question (not only the headline ones), with intervals."""


def _interval(values: list[float], clusters: list[str], binary: bool) -> Interval | None:
    return interval(values, clusters, binary=binary)  # the one policy


def mde(values: list[float], clusters: list[str]) -> float | None:
    """Minimum detectable effect of an accuracy (see the module docstring)."""
    n = len(values)
    if n < 2:
        return None
    p = sum(values) / n
    sd = math.sqrt(2 * p * (1 - p))
    if sd == 0:
        return None
    deff = 1.0
    if 2 <= len(set(clusters)) < n:
        se = stats.cluster_robust_test(values, clusters).se  # CR2, as every interval
        iid = math.sqrt(p * (1 - p) / n)
        if iid > 0:
            deff = max(1.0, (se / iid) ** 2)
    return stats.minimum_detectable_effect(n, sd) * math.sqrt(deff)


def _value(r: ItemResult, name: str) -> float | None:
    for m in r.metrics:
        if m.name == name and m.k is None:
            return m.value
    return None


def _applies(r: ItemResult, name: str) -> bool:
    """Whether a failed question would have had this score (adversarial ones: only theirs)."""
    adversarial = "adversarial" in r.groups.values()
    if name == "evidence_recall":
        return bool(r.expected)
    if name == "locomo_score":  # LoCoMo's own score: every category
        return True
    return adversarial if name == "adversarial" else not adversarial


def score_metrics(
    rows: list[ItemResult], judges: list[str], names: tuple[str, ...] = ("f1", "bleu1")
) -> list[Metric]:
    """Accuracy per judge, F1 and BLEU-1 with intervals; failed questions score 0."""
    out: list[Metric] = []
    for name in [*(f"judge:{j}" for j in judges), *names]:
        vals: list[float] = []
        cl: list[str] = []
        for r in rows:
            if r.status != "ok":
                v = 0.0 if _applies(r, name) else None  # a failure is never left out
            else:
                v = _value(r, name)  # a judge that gave no verdict: left out, counted apart
            if v is not None:
                vals.append(v)
                cl.append(r.groups.get("conversation", r.step or r.item_id))
        if not vals:
            continue
        judge = name.startswith("judge:")
        out.append(
            Metric(
                name=f"accuracy:{name[6:]}" if judge else name,
                value=sum(vals) / len(vals),
                n=len(vals),
                interval=_interval(vals, cl, judge or name == "adversarial"),
            )
        )
    return out


def summarize_benchmark(
    cfg: Any, header: RunHeader, items: list[ItemResult], pins: dict[str, Any]
) -> Summary:
    """The summary (see the module docstring) under ``cfg``'s benchmark rules."""
    judges = list(cfg.judges)
    rows, lost = expand_failures(items)
    key = cfg.group_key
    headline = cfg.headline(rows)
    scored = tuple(cfg.answer_scores)
    overall = score_metrics(headline, judges, scored) + score_metrics(rows, [], RECALL)
    ok = [r for r in rows if r.status == "ok"]
    overall += [
        m
        for m in mean_metrics(r.metrics for r in ok)
        if not (m.name.startswith("judge:") or m.name in (*scored, "f1", "bleu1", *RECALL))
    ]
    overall += latency(rows) + cost(rows) + answer_lengths(rows)
    groups: dict[str, dict[str, list[Metric]]] = {key: {}}
    by: dict[str, list[ItemResult]] = defaultdict(list)
    for r in rows:
        by[r.groups.get(key, "?")].append(r)
    for value in cfg.order(list(by)):
        rs = by[value]
        groups[key][value] = score_metrics(rs, judges, (*scored, "adversarial")) + [
            m
            for m in mean_metrics(r.metrics for r in rs if r.status == "ok")
            if m.name
            in (
                "evidence_recall",
                "recall_any",
                "recall_all",
                "session_recall_any",
                "context_tokens",
            )
        ]
    sections: dict[str, Any] = {"pins": pins, "headline": cfg.headline_rule}
    tables = [category_table(cfg, groups[key], judges), *cfg.extra_tables(rows)]
    stored = ingest_row(rows)
    if stored is not None:
        tables.append(ingest_table(stored))
    notes = list(header.dataset.notes) + cfg.notes(rows)
    if len(judges) > 1:
        t, section = judge_tables(headline, judges)
        tables += t
        sections["judges"] = section
    rules, section, rule_notes = rule_sensitivity(header, rows)
    if rules is not None:
        tables.append(rules)
        sections["rules"] = section
    notes += rule_notes
    mdes = {}
    for j in judges:
        vals = [m.value for m in overall if m.name == f"accuracy:{j}"]
        if vals:
            col = judge_column(headline, j)
            mdes[j] = mde(col[0], col[1])
    sections["mde"] = mdes
    sections.update(cfg.extra_sections(rows))
    probed = judge_probes(rows, judges)
    if probed:
        sections["judge_probes"] = probed
        overall += [probe_metric(p) for p in probed.values()]
        tables.append(probe_table(probed))
        notes += [probe_note(p) for p in probed.values() if p["flagged"]]
    failures = {
        "reader_or_search": sum(r.status != "ok" for r in rows),
        "judge_errors": sum(
            1
            for r in rows
            for v in (r.extra.get("judges") or {}).values()
            if v.get("correct") is None
        ),
        "conversations_failed_whole": lost,
    }
    counts = {
        "items": len({r.item_id for r in rows}),
        "questions": len(rows),
        "planned": header.item_count,
        "errors": sum(r.status == "error" for r in rows),
        "timeouts": sum(r.status == "timeout" for r in rows),
        "succeeded": sum(r.success is True for r in rows),
        "judge_errors": failures["judge_errors"],
        "tokens": sum(sum(r.tokens.values()) for r in rows),
    }
    if failures["judge_errors"]:
        notes.append(
            f"{failures['judge_errors']} judge verdicts are missing (the call failed or the reply "
            "could not be read; kept raw in the items): left out of the judges' accuracy, "
            "counted as errors; `mnemometer run --resume` asks those judges again"
        )
    if counts["errors"] or counts["timeouts"]:
        notes.append("questions whose search or reader call failed count as wrong everywhere")
    cut = [r for r in rows if r.extra.get("answer_cut")]
    if cut:
        longest = max(int(r.extra["answer_tokens"]) for r in cut)
        notes.append(
            f"VERBOSE ANSWERS: {len(cut)} of {len(rows)} answers were longer than the reader's "
            f"cap (up to {longest} tokens) and were cut to it before scoring; token F1 "
            "rewards an answer that lists every candidate, so read F1 with answer_tokens"
        )
    return Summary(
        overall=overall, groups=groups, counts=counts, notes=notes, tables=tables, sections=sections
    )


def judge_probes(rows: list[ItemResult], judges: list[str]) -> dict[str, Any]:
    """Each judge's false-positive rate on the probe answers the records hold."""
    return {j: p for j in judges if (p := false_positives(rows, j)) is not None}


def probe_metric(p: dict[str, Any]) -> Metric:
    """``false_positive_rate:<judge>``: lower is better, with its interval."""
    iv = p["interval"]
    return Metric(
        name=f"false_positive_rate:{p['judge']}",
        value=p["rate"],
        n=p["probes"],
        higher_is_better=False,
        interval=Interval(**iv) if iv else None,
    )


def probe_note(p: dict[str, Any]) -> str:
    """The flag of a judge that accepts wrong answers."""
    kinds = ", ".join(f"{k} {100 * v:.0f}%" for k, v in p["by_kind"].items())
    return (
        f"judge {p['judge']} accepted {100 * p['rate']:.1f}% of {p['probes']} answers known to "
        f"be wrong ({kinds}): its accuracy overstates how often answers are right"
    )


def probe_table(probed: dict[str, Any]) -> Table:
    """Judges' false-positive rates: overall and by kind of known-wrong answer."""
    kinds = sorted({k for p in probed.values() for k in p["by_kind"]})
    rows = []
    for p in probed.values():
        iv = p["interval"]
        ci = (
            f"[{100 * iv['low']:.1f}, {100 * iv['high']:.1f}]"
            if iv and iv["low"] is not None
            else "-"
        )
        rate = "-" if p["rate"] is None else f"{100 * p['rate']:.1f}"
        by = [f"{100 * p['by_kind'][k]:.0f}" if k in p["by_kind"] else "-" for k in kinds]
        rows.append([p["judge"], str(p["probes"]), rate, ci, *by, "yes" if p["flagged"] else ""])
    return Table(
        name="judge_probes",
        title="Judges on answers known to be wrong (false-positive rate)",
        columns=["judge", "probes", "accepted %", "95% CI", *(f"{k} %" for k in kinds), "flagged"],
        rows=rows,
        data=list(probed.values()),
    )


def expand_failures(items: list[ItemResult]) -> tuple[list[ItemResult], int]:
    """Question results, with a conversation that failed as a whole expanded per question.

    A whole-conversation failure line lists its questions; each question without a result
    of its own becomes a failed result, so no question is ever lost from a denominator.
    """
    have = {(r.item_id, r.step) for r in items if r.step is not None}
    out = [r for r in items if r.step is not None]
    lost = 0
    for r in items:
        if r.step is not None:
            continue
        missing = [q for q in r.extra.get("questions", []) if (r.item_id, q) not in have]
        lost += bool(missing)
        out += [
            r.model_copy(update={"step": q, "groups": {**r.groups, "conversation": r.item_id}})
            for q in missing
        ]
    return out, lost


def judge_column(rows: list[ItemResult], judge: str) -> tuple[list[float], list[str]]:
    """One judge's verdicts (failed questions as wrong) and the conversations.

    Over the questions it judged: one it skips (LoCoMo's category 5) or one whose verdict is
    missing (the judge failed, not the system) is left out.
    """
    vals, cl = [], []
    for r in rows:
        j = (r.extra.get("judges") or {}).get(judge)
        if r.status == "ok" and (j is None or j.get("correct") is None):
            continue
        vals.append(1.0 if j is not None and j.get("correct") is True else 0.0)
        cl.append(r.groups.get("conversation", r.step or ""))
    return vals, cl


def judge_tables(rows: list[ItemResult], judges: list[str]) -> tuple[list[Table], dict[str, Any]]:
    """Agreement (Cohen's kappa, raw agreement) per pair and accuracy under each judge."""
    both: dict[tuple[str, str], tuple[list[bool], list[bool]]] = {}
    for i, a in enumerate(judges):
        for b in judges[i + 1 :]:
            xs, ys = [], []
            for r in rows:
                v = r.extra.get("judges") or {}
                va, vb = (v.get(a) or {}).get("correct"), (v.get(b) or {}).get("correct")
                if va is not None and vb is not None:
                    xs.append(va)
                    ys.append(vb)
            both[(a, b)] = (xs, ys)
    agree_rows, agree_data = [], []
    for (a, b), (xs, ys) in both.items():
        k, p = cohen_kappa(xs, ys), raw_agreement(xs, ys)
        agree_rows.append([a, b, str(len(xs)), _fmt(k), _fmt(p)])
        agree_data.append({"a": a, "b": b, "n": len(xs), "kappa": k, "agreement": p})
    sens_rows, sens_data = [], []
    for j in judges:
        vals, cl = judge_column(rows, j)
        if not vals:
            continue
        acc = sum(vals) / len(vals)
        iv = _interval(vals, cl, True)
        sens_rows.append([j, str(len(vals)), f"{100 * acc:.1f}", _iv(iv)])
        sens_data.append(
            {
                "judge": j,
                "n": len(vals),
                "accuracy": acc,
                "interval": iv.model_dump() if iv else None,
            }
        )
    if sens_data:
        accs = [d["accuracy"] for d in sens_data]
        spread = max(accs) - min(accs)
    else:
        spread = None
    tables = [
        Table(
            name="judge_agreement",
            title="Judge agreement",
            columns=["judge", "judge", "n", "kappa", "agreement"],
            rows=agree_rows,
            data=agree_data,
        ),
        Table(
            name="judge_sensitivity",
            title="Accuracy under each judge (same answers)",
            columns=["judge", "n", "accuracy %", "95% CI"],
            rows=sens_rows,
            data=sens_data,
        ),
    ]
    return tables, {"agreement": agree_data, "sensitivity": sens_data, "spread": spread}


def category_table(cfg: Any, per: dict[str, list[Metric]], judges: list[str]) -> Table:
    """Per category (or type): n, a score and each judge's accuracy with intervals, recall.

    The score is the benchmark's first answer score: F1 unless it says otherwise.
    """
    key = cfg.group_key
    main = cfg.answer_scores[0]
    label = "F1" if main == "f1" else main
    cols = [key, "n", f"{label} [95% CI]", *(f"{j} % [95% CI]" for j in judges)]
    cols.append("evidence recall")
    rows, data = [], []
    for value, ms in per.items():
        get = {m.name: m for m in ms}
        f1 = get.get(main) or get.get("adversarial")
        row = [value, str(f1.n if f1 else 0), _pct(f1) if f1 else "-"]
        row += [_pct(get.get(f"accuracy:{j}")) for j in judges]
        er = get.get("evidence_recall")
        row.append(f"{er.value:.3f}" if er and er.value is not None else "-")
        rows.append(row)
        data.append({key: value, **{k: m.model_dump() for k, m in get.items()}})
    return Table(name="categories", title=f"By {cfg.group_key}", columns=cols, rows=rows, data=data)


def latency(rows: list[ItemResult]) -> list[Metric]:
    """p50/p95/p99 milliseconds per phase (ingest: once per conversation)."""
    out: list[Metric] = []
    ingest: dict[str, float] = {}
    for r in rows:
        v = r.extra.get("ingest_ms")
        if v is not None:
            ingest[r.item_id] = v
    for phase in PHASES:
        vals = (
            list(ingest.values())
            if phase == "ingest"
            else [v for r in rows if (v := r.extra.get(f"{phase}_ms")) is not None]
        )
        if vals:
            out += distribution(f"{phase}_latency", vals, "ms", PERCENTILES)
    return out


def ingest_row(rows: list[ItemResult]) -> dict[str, Any] | None:
    """The ``ingest`` table's row (as the retrieval suite's): storing cost per memory.

    Each conversation is stored once; its questions carry how many memories (turns) it
    stored and, for a store that meters its LLM calls, their calls, tokens and seconds.
    """
    per: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r.extra.get("ingest_memories") and r.extra.get("ingest_ms") is not None:
            per[r.item_id] = r.extra
    if not per:
        return None
    n = sum(int(e["ingest_memories"]) for e in per.values())
    each = [e["ingest_ms"] / 1000.0 / int(e["ingest_memories"]) for e in per.values()]
    metered = [e["ingest_llm"] for e in per.values() if e.get("ingest_llm") is not None]
    llm = None
    if metered:
        llm = (
            sum(int(m["calls"]) for m in metered),
            sum(int(m["prompt_tokens"]) for m in metered),
            sum(int(m["completion_tokens"]) for m in metered),
            sum(float(m["seconds"]) for m in metered),
        )
    return ingest_figures(n, sum(e["ingest_ms"] for e in per.values()) / 1000.0, each, llm)


def answer_lengths(rows: list[ItemResult]) -> list[Metric]:
    """Answer length in tokens (mean, p50, p95) and the share of answers cut to the cap."""
    sizes = [float(v) for r in rows if (v := r.extra.get("answer_tokens")) is not None]
    if not sizes:
        return []
    cut = sum(bool(r.extra.get("answer_cut")) for r in rows if "answer_tokens" in r.extra)
    out = distribution("answer_tokens", sizes, "tokens", (50, 95))
    out.append(
        Metric(name="answers_cut", value=cut / len(sizes), n=len(sizes), higher_is_better=False)
    )
    return out


def cost(rows: list[ItemResult]) -> list[Metric]:
    """Mean reader and judge tokens per question."""
    out = []
    for who in ("reader", "judge"):
        vals = [
            float(sum(v for k, v in r.tokens.items() if k.startswith(who)))
            for r in rows
            if r.status == "ok"
        ]
        if vals:
            out.append(
                Metric(
                    name=f"{who}_tokens",
                    unit="tokens",
                    value=sum(vals) / len(vals),
                    higher_is_better=False,
                    n=len(vals),
                )
            )
    return out


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _iv(iv: Interval | None) -> str:
    if iv is None or iv.low is None or iv.high is None:
        return "-"
    return f"[{100 * iv.low:.1f}, {100 * iv.high:.1f}]"


def _pct(m: Metric | None) -> str:
    if m is None or m.value is None:
        return "-"
    return f"{100 * m.value:.1f} {_iv(m.interval)}"
