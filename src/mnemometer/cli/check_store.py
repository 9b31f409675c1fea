"""``mnemometer check-store NAME``: the conformance kit from the command line."""

from __future__ import annotations

import sys

import click

from mnemometer.cli._common import parse_options, store_options


@click.command("check-store")
@click.argument("name")
@store_options
def check_store_cmd(name: str, store_opts: tuple[str, ...]) -> None:
    """Run the store conformance checks against store NAME; exit 1 if any fails."""
    import tempfile
    from pathlib import Path

    from mnemometer.stores import create_store
    from mnemometer.testing import check_store

    with tempfile.TemporaryDirectory(prefix="mnemometer-check-") as tmp:
        store = create_store(
            name, parse_options(store_opts, "--store-option"), workdir=Path(tmp) / "store"
        )
        rep = check_store(store)
    click.echo(str(rep))
    if not rep.ok:
        sys.exit(1)
