"""``mnemometer build CORPUS_DIR -o OUT``: a dataset from a folder of text with an LLM."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from mnemometer.cli._common import echo_err, stderr_progress


@click.command("build")
@click.argument("corpus_dir", type=click.Path(path_type=Path))
@click.option(
    "--out",
    "-o",
    required=True,
    type=click.Path(path_type=Path),
    help="Dataset to write (.json or .jsonl).",
)
@click.option(
    "--lang",
    type=click.Choice(["auto", "en", "zh"]),
    default="auto",
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
@click.option(
    "--llm-base-url",
    help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 (env MNEMOMETER_LLM_BASE_URL).",
)
@click.option("--llm-model", help="Model name at that endpoint (env MNEMOMETER_LLM_MODEL).")
@click.option(
    "--llm-api-key",
    help="API key, if the endpoint wants one "
    "(env MNEMOMETER_LLM_API_KEY; never written to the dataset).",
)
@click.option(
    "--llm-config",
    type=click.Path(path_type=Path),
    help="TOML file with an [llm] table (base_url, model, api_key, ...).",
)
@click.option(
    "--llm-cache",
    type=click.Path(path_type=Path),
    help="LLM disk cache directory (default: OUT.llm-cache next to the output).",
)
@click.option("--no-llm-cache", is_flag=True, help="Do not cache LLM replies on disk.")
@click.option(
    "--max-chars",
    type=int,
    default=3000,
    show_default=True,
    help="Largest chunk sent at once; files are split at paragraphs, never cut.",
)
@click.option(
    "--concurrency", "-c", type=int, default=1, show_default=True, help="Chunks in flight at once."
)
@click.option(
    "--no-classify",
    is_flag=True,
    help="Skip asking whether location strings are places, eras or concepts.",
)
@click.option(
    "--queries-per-type", type=int, default=30, show_default=True, help="Most queries of each type."
)
@click.option(
    "--max-tokens",
    type=int,
    default=4096,
    show_default=True,
    help="Completion tokens allowed per call.",
)
@click.option(
    "--retries",
    type=int,
    default=2,
    show_default=True,
    help="Follow-up requests when a reply does not validate.",
)
@click.option(
    "--price-prompt",
    type=float,
    default=0.0,
    show_default=True,
    help="Price per million prompt tokens, for the cost figure.",
)
@click.option(
    "--price-completion",
    type=float,
    default=0.0,
    show_default=True,
    help="Price per million completion tokens.",
)
@click.option("--seed", type=int, default=42, show_default=True, help="Seed of query selection.")
@click.option("--name", help="Dataset name (default: the corpus directory's name).")
def build_cmd(
    corpus_dir: Path,
    out: Path,
    lang: str,
    merge: bool,
    resume: bool,
    llm_base_url: str | None,
    llm_model: str | None,
    llm_api_key: str | None,
    llm_config: Path | None,
    llm_cache: Path | None,
    no_llm_cache: bool,
    max_chars: int,
    concurrency: int,
    no_classify: bool,
    queries_per_type: int,
    max_tokens: int,
    retries: int,
    price_prompt: float,
    price_completion: float,
    seed: int,
    name: str | None,
) -> None:
    """Build a dataset from CORPUS_DIR (.md/.txt files, recursively) with an LLM.

    Directory names become category labels. Every chunk's facts are saved in a checkpoint
    as they arrive, and replies are cached on disk, so an interrupted build continues with
    --resume without paying for finished chunks. Exit code 1 when some chunks failed
    (recorded in the dataset's notes; --resume asks them again).

    Example: mnemometer build chapters/ -o book.json --llm-base-url http://127.0.0.1:8080/v1
    --llm-model smollm2
    """
    from mnemometer.datasets.build import BuildConfig, build_dataset
    from mnemometer.llm import LLMClient, resolve_settings

    settings = resolve_settings(
        llm_base_url, llm_model, llm_api_key, config_file=llm_config, cache_dir=llm_cache
    )
    cache = None if no_llm_cache else settings.cache_dir or out.with_name(out.name + ".llm-cache")
    client = LLMClient(
        settings.base_url,
        settings.model,
        settings.api_key,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
        cache_dir=cache,
    )
    config = BuildConfig(
        lang=lang,
        max_chars=max_chars,
        classify=not no_classify,
        queries_per_type=queries_per_type,
        max_tokens=max_tokens,
        retries=retries,
        seed=seed,
        concurrency=concurrency,
        price_prompt=price_prompt,
        price_completion=price_completion,
        name=name,
    )
    with stderr_progress("build · chunks") as bar:
        task = bar.add_task("chunks", total=None)
        _, report = build_dataset(
            corpus_dir,
            out,
            client,
            config,
            merge=merge,
            resume=resume,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )
    for line in report.lines():
        click.echo(line)
    echo_err(f"wrote {out}")
    if report.chunks_failed:
        echo_err(f"{report.chunks_failed} chunks failed; rerun with --resume to ask them again")
        sys.exit(1)
