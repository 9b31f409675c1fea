"""``mnemometer query QUESTION --suite DIR``: ask a suite's seeded memory one question."""

from __future__ import annotations

import json
from pathlib import Path

import click

from mnemometer.cli._common import parse_options, path_option, store_options


@click.command("query")
@click.argument("question", nargs=-1, required=True)
@path_option(
    "--suite",
    "suite_dir",
    required=True,
    help="Suite directory (or suite.toml) whose memories are seeded.",
)
@click.option(
    "--store",
    "-s",
    default="bm25",
    show_default=True,
    help="Store name (a condition's store; see `mnemometer list stores`).",
)
@store_options
@path_option("--memories", help="Seed memories (overrides the manifest's).")
@click.option("--top-k", "-k", type=int, default=8, show_default=True, help="Hits to return.")
@click.option("--json", "as_json", is_flag=True, help="Print the JSON result (schema_version 1).")
def query_cmd(
    question: tuple[str, ...],
    suite_dir: Path,
    store: str,
    store_opts: tuple[str, ...],
    memories: Path | None,
    top_k: int,
    as_json: bool,
) -> None:
    """Seed STORE with the suite's memories and print the hits for QUESTION.

    This is what the memory helper installed into an agent build's workspace runs.

    Example: mnemometer query --suite examples/suites/build-site --json "Which accent colour?"
    """
    from mnemometer.suites.items import query_suite

    out = query_suite(
        suite_dir,
        " ".join(question),
        store=store,
        store_options=parse_options(store_opts, "--store-option"),
        memories=memories,
        top_k=top_k,
    )
    if as_json:
        click.echo(json.dumps(out, ensure_ascii=False))
        return
    for i, r in enumerate(out["results"], 1):
        click.echo(f"{i}. [{r['id']}] ({r['score']:.3f}) {r['text']}")
    if not out["results"]:
        click.echo("(no hits)")
