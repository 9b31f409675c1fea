"""Comparison and gate reports: text, Markdown and JSON."""

from __future__ import annotations

from mnemometer.comparison._gate import GateResult
from mnemometer.comparison._model import (
    Comparison,
    HeadlineStats,
    MetricDelta,
    PairedDelta,
    preferred,
)
from mnemometer.report._markdown import md


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


def _best_ci(t: PairedDelta, scale: float = 1.0, digits: int = 3) -> str:
    """The design's interval (CR2 when items cluster, else BCa), or why there is none."""
    if t.no_claim:
        return "none: too few clusters"
    iv = preferred(t.intervals)
    if iv is None or iv.low is None or iv.high is None:
        return "n/a"
    return f"[{scale * iv.low:+.{digits}f}, {scale * iv.high:+.{digits}f}] {iv.method}"


def _test(t: PairedDelta) -> str:
    """``p=0.012 (McNemar exact, Holm 0.03)`` or why no test was made."""
    if t.no_claim:
        return "no test"
    return f"p={_p(t.p_value)} ({t.test or 'no test'}, Holm {_p(t.p_holm)})"


def headline_line(c: Comparison) -> str:
    """The headline compared, in one line: both sides, the delta, its interval and test."""
    h, label = c.headline, c.headline_spec.label
    if c.candidate_headline_spec is not None:
        label += f" vs {c.candidate_headline_spec.label}"
    if h.delta is None:
        return f"{label}: no paired values"
    line = (
        f"{label}: {_pct(h.baseline)} -> {_pct(h.candidate)} ({100 * h.delta:+.1f} pp, "
        f"95% CI {_best_ci(h, 100, 1)}), {_test(h)}"
    )
    if h.mcnemar_b is not None:
        line += f", b={h.mcnemar_b} c={h.mcnemar_c}"
    if h.mde is not None:
        line += f", MDE {100 * h.mde:.1f} pp"
    return line


def _group_line(key: str, h: HeadlineStats) -> str:
    if h.delta is None:
        return f"  {key}: n={h.pairs} (not in the headline)"
    return f"  {key}: n={h.pairs} {_pct(h.baseline)} -> {_pct(h.candidate)} {_test(h)}"


def _metric_line(m: MetricDelta) -> str:
    arrow = "" if m.higher_is_better else " (lower is better)"
    return (
        f"  {m.key}{arrow}: {_plain(m.baseline_mean)} -> {_plain(m.candidate_mean)} "
        f"({_num(m.mean_delta)}, 95% CI {_best_ci(m)}, {_test(m)}, n={m.pairs})"
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
        "differs: " + ("; ".join(c.differs) if c.differs else "nothing (the same configuration)"),
        headline_line(c),
    ]
    if c.varies:
        lines.insert(2, "varies (declared): " + ", ".join(c.varies))
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
            lines.append(
                _group_line(g.key, g.headline)
                + f", tokens {g.baseline_tokens} -> {g.candidate_tokens}"
            )
    if c.forced:
        lines.append("FORCED: " + "; ".join(c.mismatches))
    lines += [f"note: {n}" for n in c.notes]
    return "\n".join(lines)


def comparison_markdown(c: Comparison) -> str:
    """For documents."""
    b, k = c.baseline, c.candidate
    h = c.headline
    out = [
        f"# {md(c.suite)}: {md(', '.join(k.conditions))} vs {md(', '.join(b.conditions))}",
        "",
        f"{c.items} items ({c.pairs} paired observations) from {b.repeats} baseline and "
        f"{k.repeats} candidate "
        f"runs; {c.resamples} bootstrap resamples (seed {c.seed})"
        + (f"; {c.clusters} clusters by {c.cluster_by}." if c.cluster_by else "."),
        "",
        "Differs: "
        + (md("; ".join(c.differs)) if c.differs else "nothing (the same configuration)")
        + (f". Varies (declared): {md(', '.join(c.varies))}." if c.varies else "."),
        "",
        "## Summary",
        "",
        "| | baseline | candidate | delta | 95% CI | p | Holm p |",
        "|---|---|---|---|---|---|---|",
        f"| {md(c.headline_spec.label)} (headline) | {_pct(h.baseline)} | {_pct(h.candidate)} | "
        + (f"{100 * h.delta:+.1f} pp" if h.delta is not None else "n/a")
        + f" | {_best_ci(h, 100, 1)} | {_p(h.p_value)} ({h.test or 'no test'}) | "
        + f"{_p(h.p_holm)} |",
        f"| total tokens | {b.total_tokens} | {k.total_tokens} | {c.cost.token_delta:+d} | | | |",
        f"| mean latency (ms) | {_plain(b.mean_latency_ms)} | {_plain(k.mean_latency_ms)} | "
        f"{_num(c.cost.latency_delta_ms, 2)} | | | |",
        "",
    ]
    if h.no_claim:
        out += [f"**No claim**: {md(h.no_claim)}.", ""]
    if h.mde is not None:
        out += [f"Minimum detectable headline effect at this size: {100 * h.mde:.1f} pp.", ""]
    if c.metrics:
        out += [
            "## Metrics",
            "",
            "| metric | baseline | candidate | delta | 95% CI | p | Holm p | n |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for m in c.metrics:
            out.append(
                f"| {md(m.key)} | {_plain(m.baseline_mean)} | {_plain(m.candidate_mean)} | "
                f"{_num(m.mean_delta)} | {_best_ci(m)} | {_p(m.p_value)} | {_p(m.p_holm)} | "
                f"{m.pairs} |"
            )
        out.append("")
    if c.groups:
        out += [
            "## Groups",
            "",
            f"| group | n | baseline {md(c.headline_spec.label)} | candidate | delta | p | Holm p |",
            "|---|---|---|---|---|---|---|",
        ]
        for g in c.groups:
            gh = g.headline
            delta = f"{100 * gh.delta:+.1f} pp" if gh.delta is not None else "n/a"
            out.append(
                f"| {md(g.key)} | {gh.pairs} | {_pct(gh.baseline)} | "
                f"{_pct(gh.candidate)} | {delta} | {_p(gh.p_value)} | "
                f"{_p(gh.p_holm)} |"
            )
        out.append("")
    if c.forced or c.notes:
        out += ["## Notes", ""]
        if c.forced:
            out += [f"- **forced**: {md(m)}" for m in c.mismatches]
        out += [f"- {md(n)}" for n in c.notes]
        out.append("")
    out.append(f"Headline: {md(c.headline_spec.label)} over {md(c.headline_spec.scope)}.")
    return "\n".join(out)
