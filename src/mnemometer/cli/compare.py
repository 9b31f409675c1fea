"""``mnemometer compare RUNS...``: pair runs item by item (wraps :func:`mnemometer.compare`)."""

from __future__ import annotations

from pathlib import Path

import click

from mnemometer import stats
from mnemometer.cli._common import echo_err


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
    "--force",
    is_flag=True,
    help="Pair runs over different suites, options or datasets anyway (recorded).",
)
@click.option(
    "--resamples",
    type=int,
    default=stats.DEFAULT_RESAMPLES,
    show_default=True,
    help="Bootstrap resamples.",
)
@click.option(
    "--seed", type=int, default=stats.DEFAULT_SEED, show_default=True, help="Bootstrap seed."
)
@click.option(
    "--confidence", type=float, default=0.95, show_default=True, help="Interval coverage."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "md", "json"]),
    default="text",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--out",
    "-o",
    type=click.Path(path_type=Path),
    help="Also write the comparison JSON here (for `mnemometer gate`).",
)
def compare_cmd(
    runs: tuple[str, ...],
    baseline: str | None,
    candidate: str | None,
    force: bool,
    resamples: int,
    seed: int,
    confidence: float,
    fmt: str,
    out: Path | None,
) -> None:
    """Compare BASELINE runs with CANDIDATE runs, paired item by item.

    RUNS are run directories or directories holding them. Give them as
    `BASELINE... vs CANDIDATE...`, as two run directories, or mixed with --baseline and
    --candidate naming the conditions (no-memory is the baseline by default).

    Example: mnemometer compare runs/team --baseline no-memory --candidate hybrid -o cmp.json
    """
    from mnemometer.comparison import compare, split_sides
    from mnemometer.report import render

    base, cand = split_sides(runs, baseline, candidate)
    result = compare(base, cand, force=force, resamples=resamples, seed=seed, confidence=confidence)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(render(result, "json") + "\n", "utf-8")
        echo_err(f"comparison: {out}")
    click.echo(render(result, fmt))  # type: ignore[arg-type]
