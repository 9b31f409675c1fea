"""``mnemometer reproduce SUITE``: seed, run two conditions offline, compare, gate."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from mnemometer.cli._common import echo_err, out_option, path_option, resamples_option
from mnemometer.cli._progress import PhaseProgress


@click.command("reproduce")
@click.argument("suite", type=click.Path(path_type=Path))
@out_option("Directory for the runs, comparison.json and gate.json.")
@path_option(
    "--policy",
    "-p",
    help="Gate policy (default: SUITE/gate.toml, else ../../gates/<suite>.toml).",
)
@click.option("--baseline", default="no-memory", show_default=True, help="Baseline condition.")
@click.option("--candidate", default="full-memory", show_default=True, help="Candidate condition.")
@path_option("--memories", help="Seed memories overriding the manifest's.")
@resamples_option
def reproduce_cmd(
    suite: Path,
    out: Path | None,
    policy: Path | None,
    baseline: str,
    candidate: str,
    memories: Path | None,
    resamples: int,
) -> None:
    """Reproduce a suite's headline result in one command, offline and keyless.

    Seeds the suite's memories, runs BASELINE and CANDIDATE under the offline profile,
    compares them and gates the comparison. Exit code: the gate's verdict (0 pass, 1 fail;
    0 when there is no policy), 2 for bad input.

    Example: mnemometer reproduce examples/suites/team-memory
    """
    from mnemometer.report import render
    from mnemometer.runner import RunSettings
    from mnemometer.workflows._reproduce import reproduce

    with PhaseProgress(f"reproduce · {baseline} vs {candidate}") as progress:
        r = reproduce(
            suite,
            out=out,
            policy=policy,
            baseline=baseline,
            candidate=candidate,
            memories=memories,
            resamples=resamples,
            settings=RunSettings(progress=progress),
        )
    click.echo(render(r.comparison))
    echo_err(f"comparison: {r.comparison_path}")
    if r.verdict is None:
        echo_err("no gate policy (pass --policy, or add gate.toml to the suite)")
        return
    click.echo(f"policy: {r.policy}")
    click.echo(render(r.verdict))
    if not r.verdict.passed:
        sys.exit(1)
