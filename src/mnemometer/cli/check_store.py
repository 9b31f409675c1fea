"""``mnemometer check-store NAME``: the conformance kit from the command line."""

from __future__ import annotations

import sys

import click

from mnemometer.cli._common import llm_options, llm_settings, parse_options, store_options


@click.command("check-store")
@click.argument("name")
@store_options
@llm_options
def check_store_cmd(name: str, store_opts: tuple[str, ...], **kw: object) -> None:
    """Run the store conformance checks against store NAME; exit 1 if any fails.

    Stores that ask an LLM while they store (graphiti, cognee, langmem) take the endpoint
    from --llm-base-url/--llm-model or MNEMOMETER_LLM_* (-S base_url=... -S llm_model=...
    win over both).
    """
    import tempfile
    from pathlib import Path

    from mnemometer.llm import find_settings
    from mnemometer.stores import create_store
    from mnemometer.testing import check_store

    with tempfile.TemporaryDirectory(prefix="mnemometer-check-") as tmp:
        llm = llm_settings(kw, required=False) or find_settings()  # the store reads no env
        store = create_store(
            name,
            parse_options(store_opts, "--store-option"),
            workdir=Path(tmp) / "store",
            llm=llm,
        )
        rep = check_store(store)
    click.echo(str(rep))
    if not rep.ok:
        sys.exit(1)
