"""``mnemometer build CORPUS_DIR -o OUT``: a dataset from a folder of text with an LLM."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from mnemometer.cli._common import (
    config_from,
    config_option,
    default_of,
    echo_err,
    llm_options,
    llm_settings,
    out_option,
)
from mnemometer.cli._progress import PhaseProgress
from mnemometer.datasets.build._build import BuildConfig


@click.command("build")
@click.argument("corpus_dir", type=click.Path(path_type=Path))
@out_option("Dataset to write (.json or .jsonl).", required=True)
@click.option(
    "--lang",
    type=click.Choice(["auto", "en", "zh"]),
    default=default_of(BuildConfig, "lang"),
    show_default=True,
    help="Prompt and query language; auto detects from the corpus.",
)
@click.option(
    "--merge",
    is_flag=True,
    help="Append to the dataset at --out, keeping its memories, queries and ids.",
)
@click.option(
    "--resume",
    is_flag=True,
    help="Continue an interrupted build from its checkpoint (OUT.build.jsonl).",
)
@llm_options
@click.option("--no-llm-cache", is_flag=True, help="Do not cache LLM replies on disk.")
@config_option(
    BuildConfig,
    "--max-chars",
    type=int,
    help="Largest chunk sent at once; files are split at paragraphs, never cut.",
)
@config_option(BuildConfig, "--concurrency", "-c", type=int, help="Chunks in flight at once.")
@click.option(
    "--no-classify",
    is_flag=True,
    help="Skip asking whether location strings are places, eras or concepts.",
)
@config_option(BuildConfig, "--queries-per-type", type=int, help="Most queries of each type.")
@config_option(BuildConfig, "--max-tokens", type=int, help="Completion tokens allowed per call.")
@config_option(
    BuildConfig, "--retries", type=int, help="Follow-up requests when a reply does not validate."
)
@config_option(
    BuildConfig,
    "--price-prompt",
    type=float,
    help="Price per million prompt tokens, for the cost figure.",
)
@config_option(
    BuildConfig, "--price-completion", type=float, help="Price per million completion tokens."
)
@config_option(BuildConfig, "--seed", type=int, help="Seed of query selection.")
@click.option("--name", help="Dataset name (default: the corpus directory's name).")
def build_cmd(
    corpus_dir: Path,
    out: Path,
    merge: bool,
    resume: bool,
    no_llm_cache: bool,
    no_classify: bool,
    **kw: Any,
) -> None:
    """Build a dataset from CORPUS_DIR (.md/.txt files, recursively) with an LLM.

    Directory names become category labels. Every chunk's facts are saved in a checkpoint
    as they arrive, and replies are cached on disk, so an interrupted build continues with
    --resume without paying for finished chunks. Exit code 1 when some chunks failed
    (recorded in the dataset's notes; --resume asks them again).

    Example: mnemometer build chapters/ -o book.json --llm-base-url http://127.0.0.1:8080/v1
    --llm-model smollm2
    """
    from mnemometer.datasets.build import build_dataset
    from mnemometer.llm import LLMClient

    settings = llm_settings(kw)
    cache = None if no_llm_cache else settings.cache_dir or out.with_name(out.name + ".llm-cache")
    client = LLMClient(
        settings.base_url,
        settings.model,
        settings.api_key,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
        cache_dir=cache,
    )
    config = config_from(BuildConfig, kw, classify=not no_classify)
    # Bars on a terminal, a line every 10 s elsewhere: a build of a large corpus is quiet
    # for minutes otherwise.
    with PhaseProgress("build") as progress:
        _, report = build_dataset(
            corpus_dir,
            out,
            client,
            config,
            merge=merge,
            resume=resume,
            progress=lambda done, total: progress("chunks", done, total),
        )
    for line in report.lines():
        click.echo(line)
    echo_err(f"wrote {out}")
    if report.chunks_failed:
        echo_err(f"{report.chunks_failed} chunks failed; rerun with --resume to ask them again")
        sys.exit(1)
