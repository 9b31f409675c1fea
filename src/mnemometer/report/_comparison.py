"""Comparison and gate reports: text, Markdown and JSON."""

from __future__ import annotations

from mnemometer.comparison._gate import GateResult
from mnemometer.comparison._model import Comparison, IntervalOut, MetricDelta, SuccessStats


def comparison_json(c: Comparison) -> str:
    """The comparison file (what ``mnemometer gate`` reads)."""
    return c.model_dump_json(indent=1)


def gate_text(result: GateResult) -> str:
    """The verdict and every check."""
    lines = [f"gate: {'pass' if result.passed else 'fail'}"]
    lines += [f"  {'ok  ' if ch.passed else 'FAIL'} {ch.message}" for ch in result.checks]
    lines += [f"  warn {w}" for w in result.warnings]
    return "\n".join(lines)


def gate_json(result: GateResult) -> str:
    """The verdict as JSON."""
    return result.model_dump_json(indent=1)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:+.{digits}f}" if x < 0 or x > 0 else f"{0:.{digits}f}"


def _p(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3g}"


def _ci(ivs: list[IntervalOut], method: str, scale: float = 1.0, digits: int = 3) -> str:
    iv = next((i for i in ivs if i.method == method), None)
    if iv is None or iv.low is None or iv.high is None:
        return "n/a"
    return f"[{scale * iv.low:+.{digits}f}, {scale * iv.high:+.{digits}f}]"


def _best_ci(ivs: list[IntervalOut], scale: float = 1.0, digits: int = 3) -> str:
    """The interval that respects clustering when there is one, else BCa."""
    for method in ("cluster-bca", "bca", "percentile"):
        s = _ci(ivs, method, scale, digits)
        if s != "n/a":
            return f"{s} {method}"
    return "n/a"


def _success_line(s: SuccessStats) -> str:
    if s.delta is None:
        return "success: no scorable pairs"
    return (
        f"success: {_pct(s.baseline_rate)} -> {_pct(s.candidate_rate)} "
        f"({100 * s.delta:+.1f} pp, 95% CI {_best_ci(s.intervals, 100, 1)}), "
        f"McNemar b={s.mcnemar_b} c={s.mcnemar_c} p={_p(s.p_value)} (Holm {_p(s.p_holm)})"
        + (f", MDE {100 * s.mde:.1f} pp" if s.mde is not None else "")
    )


def _metric_line(m: MetricDelta) -> str:
    arrow = "" if m.higher_is_better else " (lower is better)"
    return (
        f"  {m.key}{arrow}: {_plain(m.baseline_mean)} -> {_plain(m.candidate_mean)} "
        f"({_num(m.mean_delta)}, 95% CI {_best_ci(m.intervals)}, p={_p(m.p_value)}, "
        f"Holm {_p(m.p_holm)}, n={m.pairs})"
    )


def _plain(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def comparison_text(c: Comparison) -> str:
    """For people at a terminal."""
    b, k = c.baseline, c.candidate
    lines = [
        f"{c.suite} (v{c.suite_version}): {', '.join(k.conditions)} vs {', '.join(b.conditions)}"
        f" — {c.items} items ({c.pairs} paired observations) from {b.repeats}+{k.repeats} runs"
        + (f", {c.clusters} clusters by {c.cluster_by}" if c.cluster_by else ""),
        _success_line(c.success),
    ]
    lines.append(
        f"tokens: {b.total_tokens} -> {k.total_tokens} ({c.cost.token_delta:+d}); "
        f"latency: {_plain(b.mean_latency_ms)} -> {_plain(k.mean_latency_ms)} ms "
        f"({_num(c.cost.latency_delta_ms, 2)})"
    )
    if c.metrics:
        lines.append("metrics:")
        lines += [_metric_line(m) for m in c.metrics]
    if c.groups:
        lines.append("groups:")
        for g in c.groups:
            s = g.success
            lines.append(
                f"  {g.key}: n={s.pairs} {_pct(s.baseline_rate)} -> {_pct(s.candidate_rate)} "
                f"p={_p(s.p_value)} (Holm {_p(s.p_holm)}), tokens {g.baseline_tokens} -> "
                f"{g.candidate_tokens}"
            )
    if c.forced:
        lines.append("FORCED: " + "; ".join(c.mismatches))
    lines += [f"note: {n}" for n in c.notes]
    return "\n".join(lines)


def comparison_markdown(c: Comparison) -> str:
    """For documents."""
    b, k = c.baseline, c.candidate
    s = c.success
    out = [
        f"# {c.suite}: {', '.join(k.conditions)} vs {', '.join(b.conditions)}",
        "",
        f"{c.items} items ({c.pairs} paired observations) from {b.repeats} baseline and "
        f"{k.repeats} candidate "
        f"runs; {c.resamples} bootstrap resamples (seed {c.seed})"
        + (f"; {c.clusters} clusters by {c.cluster_by}." if c.cluster_by else "."),
        "",
        "## Summary",
        "",
        "| | baseline | candidate | delta | 95% CI | p | Holm p |",
        "|---|---|---|---|---|---|---|",
        f"| success rate | {_pct(s.baseline_rate)} | {_pct(s.candidate_rate)} | "
        + (f"{100 * s.delta:+.1f} pp" if s.delta is not None else "n/a")
        + f" | {_best_ci(s.intervals, 100, 1)} | {_p(s.p_value)} (McNemar) | {_p(s.p_holm)} |",
        f"| total tokens | {b.total_tokens} | {k.total_tokens} | {c.cost.token_delta:+d} | | | |",
        f"| mean latency (ms) | {_plain(b.mean_latency_ms)} | {_plain(k.mean_latency_ms)} | "
        f"{_num(c.cost.latency_delta_ms, 2)} | | | |",
        "",
    ]
    if s.mde is not None:
        out += [f"Minimum detectable success effect at this size: {100 * s.mde:.1f} pp.", ""]
    if c.metrics:
        out += [
            "## Metrics",
            "",
            "| metric | baseline | candidate | delta | 95% CI (BCa) | 95% CI (percentile) "
            "| p | Holm p | n |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for m in c.metrics:
            out.append(
                f"| {m.key} | {_plain(m.baseline_mean)} | {_plain(m.candidate_mean)} | "
                f"{_num(m.mean_delta)} | {_ci(m.intervals, 'bca')} | "
                f"{_ci(m.intervals, 'percentile')} | {_p(m.p_value)} | {_p(m.p_holm)} | "
                f"{m.pairs} |"
            )
        out.append("")
    if c.groups:
        out += [
            "## Groups",
            "",
            "| group | n | baseline | candidate | delta | p | Holm p |",
            "|---|---|---|---|---|---|---|",
        ]
        for g in c.groups:
            gs = g.success
            delta = f"{100 * gs.delta:+.1f} pp" if gs.delta is not None else "n/a"
            out.append(
                f"| {g.key} | {gs.pairs} | {_pct(gs.baseline_rate)} | "
                f"{_pct(gs.candidate_rate)} | {delta} | {_p(gs.p_value)} | "
                f"{_p(gs.p_holm)} |"
            )
        out.append("")
    if c.forced or c.notes:
        out += ["## Notes", ""]
        if c.forced:
            out += [f"- **forced**: {m}" for m in c.mismatches]
        out += [f"- {n}" for n in c.notes]
        out.append("")
    out.append(f"Success: {c.success_definition}.")
    return "\n".join(out)
