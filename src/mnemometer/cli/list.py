"""``mnemometer list stores|suites|datasets``."""

from __future__ import annotations

import click


@click.command("list")
@click.argument("what", type=click.Choice(["stores", "suites", "agents", "datasets"]))
def list_cmd(what: str) -> None:
    """List registered stores or suites, or the built-in datasets."""
    from mnemometer._registry import STORES, SUITES
    from mnemometer.datasets import builtin_datasets

    if what == "datasets":
        for name in builtin_datasets():
            click.echo(name)
        return
    reg = STORES if what == "stores" else SUITES
    if what == "agents":
        from mnemometer._registry import AGENTS as reg
    for name in reg.names():
        click.echo(f"{name:<12} {reg.describe(name)}")
