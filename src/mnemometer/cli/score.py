"""``mnemometer score RUN_DIR``: re-score a finished run (wraps :func:`mnemometer.score`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from mnemometer.cli._common import LLM_KEYS, echo_err, llm_options, llm_settings, out_option
from mnemometer.cli._progress import PhaseProgress


@click.command("score")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option(
    "--judge",
    "judges",
    multiple=True,
    metavar="NAME[@MODEL]",
    help="Judge the answers with this judge instead of the run's (repeatable; the first "
    "decides the headline): lenient, strict, longmemeval, letta-rubric.",
)
@click.option("--no-judge", is_flag=True, help="Score without any judge (the answer scores lead).")
@click.option(
    "--judge-endpoint",
    "judge_endpoints",
    multiple=True,
    metavar="MODEL=URL",
    help="Where a NAME@MODEL judge's model is served (repeatable).",
)
@click.option("--judge-model", help="Model for judges without their own (default: the run's).")
@click.option("--rubric", type=click.Path(path_type=Path), help="Letta's rubric file.")
@click.option("--headline", metavar="METRIC[@K]", help="Another headline, e.g. recall@10 or f1.")
@click.option(
    "--prices",
    type=click.Path(exists=True, dir_okay=False),
    help="Price file over LiteLLM's bundled map: the new run's dollars are priced afresh "
    "(default: the parent's pinned prices; a new judge priced now).",
)
@llm_options
@out_option("The new run directory (default: beside RUN_DIR, named after the scoring).")
@click.option(
    "--concurrency", "-c", type=int, default=4, show_default=True, help="Judge calls in flight."
)
@click.option(
    "--resume",
    "resume_dir",
    is_flag=True,
    help="RUN_DIR is a re-scoring that was killed: finish it.",
)
@click.option(
    "--format",
    "fmt",
    default="text",
    show_default=True,
    help="Report printed when the scoring ends: text, md, json or none.",
)
def score_cmd(run_dir: Path, **kw: Any) -> None:
    """Re-score RUN_DIR without its system: other judges, another headline, prices, a new run.

    Only scorers run: the store, the agent and the reader are never called. The new run
    directory's header names RUN_DIR as its parent and records both scorings; it shares
    RUN_DIR's run group, so `mnemometer compare RUN_DIR vs NEW --vary judge` compares the
    two judgings of the same answers. A scoring killed halfway continues with --resume.

    \b
    Examples:
      mnemometer score runs/locomo-bm25 --judge strict@qwen --judge-endpoint qwen=URL
      mnemometer score runs/hp-bm25 --headline recall@10 --out runs/hp-bm25-recall
      mnemometer score runs/locomo-bm25 --prices prices.toml
    """  # noqa: D301 (click needs a real backspace before an unwrapped paragraph)
    from mnemometer.runner import RunSettings
    from mnemometer.runner._score import resume_scoring, score

    llm = llm_settings(kw) if any(kw.get(k) for k in LLM_KEYS) else None
    judges: list[str] | None = list(kw["judges"]) or None
    if kw["no_judge"]:
        if judges:
            raise click.UsageError("--no-judge and --judge exclude each other")
        judges = []
    with PhaseProgress("score") as progress:
        settings = RunSettings(
            concurrency=kw["concurrency"], llm=llm, progress=progress, prices=kw["prices"]
        )
        if kw["resume_dir"]:
            result = resume_scoring(run_dir, settings)
        else:
            result = score(
                run_dir,
                judges=judges,
                judge_endpoints=kw["judge_endpoints"],
                judge_model=kw["judge_model"],
                rubric=str(kw["rubric"]) if kw["rubric"] else None,
                headline=kw["headline"],
                out=kw["out"],
                settings=settings,
            )
    if kw["fmt"] != "none":
        from mnemometer.report import render
        from mnemometer.report._run import RunView

        click.echo(render(RunView(result.path, result.header, result.summary), kw["fmt"]))
    echo_err(f"run directory: {result.path}")
    if result.failed_items:
        sys.exit(1)
