"""``mnemometer run SUITE``: run a suite against a store (wraps :func:`mnemometer.run`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from mnemometer.cli._agent_opts import agent_options, agent_run_kwargs
from mnemometer.cli._common import echo_err, parse_options, stderr_progress
from mnemometer.cli._suite_dir import suite_dir_options


@click.command("run")
@suite_dir_options
@agent_options
@click.argument("suite", required=False, default="retrieval")
@click.option(
    "--dataset", "-d", help="Dataset file (native JSON/JSONL, MemTest JSON) or built-in name."
)
@click.option("--store", "-s", help="Store name (see `mnemometer list stores`).")
@click.option(
    "--store-option",
    "-S",
    "store_opts",
    multiple=True,
    metavar="KEY=VALUE",
    help="Option for the store; repeatable (values parse as JSON when they can).",
)
@click.option(
    "--suite-option",
    "-O",
    "suite_opts",
    multiple=True,
    metavar="KEY=VALUE",
    help="Option for the suite; repeatable.",
)
@click.option("--top-k", type=int, help="Hits to ask for per query (retrieval; default 20).")
@click.option(
    "--out",
    "-o",
    type=click.Path(path_type=Path),
    help="Run directory to create (default runs/<suite>-<store>-<time>).",
)
@click.option(
    "--concurrency", "-c", type=int, default=1, show_default=True, help="Items in flight at once."
)
@click.option(
    "--timeout",
    type=float,
    default=60.0,
    show_default=True,
    help="Seconds allowed per item call; 0 for no limit.",
)
@click.option(
    "--resume",
    type=click.Path(path_type=Path),
    help="Continue an interrupted run directory (its configuration is reused).",
)
@click.option(
    "--fsync/--no-fsync",
    default=False,
    show_default=True,
    help="fsync the run log after every item (survives power loss, not only kills).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "md", "json", "none"]),
    default="text",
    show_default=True,
    help="Report printed when the run ends.",
)
def run_cmd(
    suite: str,
    dataset: str | None,
    store: str | None,
    store_opts: tuple[str, ...],
    suite_opts: tuple[str, ...],
    top_k: int | None,
    out: Path | None,
    concurrency: int,
    timeout: float,
    resume: Path | None,
    fsync: bool,
    fmt: str,
    **agent_kw: Any,
) -> None:
    """Run SUITE (default: retrieval) against a store and write a run directory.

    Every finished item is written at once; a run killed at any moment continues with
    --resume RUN_DIR. Exit code 0: all items ran; 1: some items failed (recorded and
    counted); 2: bad input.

    Example: mnemometer run retrieval --dataset demo-en --store bm25 --out runs/demo

    Agents: mnemometer run scenarios --agent rag --store bm25 --llm-base-url URL --llm-model M
    """
    from mnemometer.report import report
    from mnemometer.runner import run

    suite_options = parse_options(suite_opts, "--suite-option")
    if top_k is not None:
        suite_options["top_k"] = top_k
    agent_kwargs = agent_run_kwargs(suite_options, **agent_kw)
    with stderr_progress(f"{suite} · {store or 'resume'}") as bar:
        task = bar.add_task("items", total=None)
        result = run(
            suite,
            dataset=dataset,
            store=store,
            store_options=parse_options(store_opts, "--store-option"),
            suite_options=suite_options,
            out=out,
            concurrency=concurrency,
            timeout=timeout,
            resume=resume,
            fsync=fsync,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
            **agent_kwargs,
        )
    if fmt != "none":
        click.echo(report(result.path, fmt))  # type: ignore[arg-type]
    echo_err(f"run directory: {result.path}")
    if result.failed_items:
        echo_err(f"{result.failed_items} items failed (recorded in the run log)")
        sys.exit(1)
