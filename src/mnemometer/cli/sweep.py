"""``mnemometer sweep FILE``: systems × datasets × conditions × repeats (wraps ``workflows.sweep``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from mnemometer.cli._common import (
    echo_err,
    llm_options,
    llm_settings,
    out_option,
    run_options,
    run_settings,
)


@click.command("sweep")
@click.argument("file", type=click.Path(path_type=Path))
@out_option(
    "Sweep directory (one experiment per dataset); run again to finish an interrupted one.",
    required=True,
)
@run_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "json", "none"]),
    default="md",
    show_default=True,
    help="What to print at the end: the leaderboard, a JSON index, or nothing.",
)
@llm_options
def sweep_cmd(file: Path, out: Path, **kw: Any) -> None:
    """Run the sweep in FILE (TOML) into OUT and end with its leaderboard.

    FILE names a suite, its options, [[systems]], named conditions, [[datasets]], the
    repeats and the [[compare]] pairs (see docs/scaling.md). Each dataset becomes one
    experiment directory OUT/<dataset>; OUT/leaderboard.md ranks the systems; each
    comparison is written beside its runs. Running the same command again finishes an
    interrupted sweep. Exit code 1 when items failed (recorded in their run logs).

    \b
    Examples:
      mnemometer sweep sweep.toml --out runs/sweep
      mnemometer sweep sweep.toml --out runs/sweep --executor ray --ray-address 10.0.0.5:6379
    """  # noqa: D301 (click needs a real backspace before an unwrapped paragraph)
    from mnemometer.workflows import sweep

    settings = run_settings(kw, llm=llm_settings(kw, required=False))

    def on_run(result: Any) -> None:
        from mnemometer.log import read_items

        items = read_items(result.path)
        ok = sum(1 for r in items if r.success)
        echo_err(f"{result.path}: {ok}/{len(items)} items succeeded")

    try:
        result = sweep(file, out, settings=settings, on_run=on_run)
    finally:
        if settings.executor is not None:
            settings.executor.close()
    runs = [r for e in result.experiments.values() for r in e.runs]
    if kw["fmt"] == "md":
        click.echo(result.leaderboard.read_text("utf-8"), nl=False)
    elif kw["fmt"] == "json":
        doc = {
            "out": str(result.out),
            "leaderboard": str(result.leaderboard),
            "comparisons": [str(p) for p in result.comparisons],
            "runs": [str(r.path) for r in runs],
        }
        click.echo(json.dumps(doc, indent=1))
    failed = sum(r.failed_items for r in runs)
    if failed:
        echo_err(f"{failed} items failed across the runs (recorded in their run logs)")
        sys.exit(1)
