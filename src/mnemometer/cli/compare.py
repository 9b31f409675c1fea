"""``mnemometer compare RUNS...``: pair runs item by item (wraps :func:`mnemometer.compare`)."""

from __future__ import annotations

from pathlib import Path

import click

from mnemometer import stats
from mnemometer.cli._common import (
    format_of,
    format_option,
    out_option,
    path_option,
    resamples_option,
    write_output,
)


@click.command("compare")
@click.argument("runs", nargs=-1, required=True)
@click.option(
    "--baseline",
    "-b",
    "baseline",
    metavar="COND",
    help="Condition of the baseline runs (when RUNS mixes conditions).",
)
@click.option(
    "--candidate", "-c", "candidate", metavar="COND", help="Condition of the candidate runs."
)
@click.option(
    "--vary",
    multiple=True,
    metavar="WHAT",
    help="What the experiment varies beyond the system, so runs that differ in it pair: "
    "judge, reader, dataset, suite, scoring (repeatable; named in the comparison, and a gate "
    "fails it unless its policy allows it).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Pair runs over different suites, options or datasets anyway (recorded).",
)
@resamples_option
@click.option(
    "--seed", type=int, default=stats.DEFAULT_SEED, show_default=True, help="Bootstrap seed."
)
@click.option(
    "--confidence", type=float, default=0.95, show_default=True, help="Interval coverage."
)
@format_option(
    "comparison",
    "Output format (html: one self-contained page with forest plots and the discordant items).",
)
@out_option(
    "Write the comparison to this file, in the format its suffix names: .json (what "
    "`mnemometer gate` reads), .html, .md; another suffix gets --format. Repeatable.",
    dest="outs",
    multiple=True,
)
@path_option(
    "--policy",
    "-p",
    help="Gate policy (TOML) whose verdict the HTML page shows (default: a drop in the "
    "headline fails).",
)
def compare_cmd(
    runs: tuple[str, ...],
    baseline: str | None,
    candidate: str | None,
    vary: tuple[str, ...],
    force: bool,
    resamples: int,
    seed: int,
    confidence: float,
    fmt: str,
    outs: tuple[Path, ...],
    policy: Path | None,
) -> None:
    """Compare BASELINE runs with CANDIDATE runs, paired item by item.

    RUNS are run directories or directories holding them. Give them as
    `BASELINE... vs CANDIDATE...`, as two run directories, or mixed with --baseline and
    --candidate naming the conditions (no-memory is the baseline by default).

    \b
    Examples:
      mnemometer compare runs/team --baseline no-memory --candidate hybrid -o cmp.json
      mnemometer compare runs/kw vs runs/bm25 --format html -o cmp.html
      mnemometer compare runs/locomo-lenient vs runs/locomo-strict --vary judge
    """  # noqa: D301 (click needs a real backspace before an unwrapped paragraph)
    from mnemometer.comparison import compare, split_sides
    from mnemometer.report import render

    base, cand = split_sides(runs, baseline, candidate)
    result = compare(
        base,
        cand,
        vary=vary,
        force=force,
        resamples=resamples,
        seed=seed,
        confidence=confidence,
    )
    context = {}
    if policy is not None:
        from mnemometer.comparison import gate

        context = {"gate_result": gate(result, policy), "policy": str(policy)}
    written = set()
    for out in outs:
        file_fmt = format_of(out, "comparison") or fmt
        extra = context if file_fmt == "html" else {}
        write_output(out, render(result, file_fmt, **extra), "comparison")
        written.add(file_fmt)
    shown = "text" if fmt in written else fmt
    click.echo(render(result, shown, **(context if shown == "html" else {})))
