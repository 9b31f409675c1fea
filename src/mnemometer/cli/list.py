"""``mnemometer list stores|suites|agents|scorers|datasets|readers``."""

from __future__ import annotations

import warnings

import click


@click.command("list")
@click.argument(
    "what", type=click.Choice(["stores", "suites", "agents", "scorers", "datasets", "readers"])
)
def list_cmd(what: str) -> None:
    """List registered stores, suites, agents, scorers or dataset readers, or the datasets."""
    from mnemometer._registry import SCORERS, STORES, SUITES
    from mnemometer.datasets import builtin_datasets

    if what == "datasets":
        for name in builtin_datasets():
            click.echo(name)
        return
    if what == "readers":
        _list_readers()
        return
    reg = {"stores": STORES, "suites": SUITES, "scorers": SCORERS}.get(what)
    if reg is None:
        from mnemometer._registry import AGENTS as reg
    for name in reg.names():
        click.echo(f"{name:<12} {reg.describe(name)}")


def _list_readers() -> None:
    """Every dataset format, in the order sniffing tries them; a broken one is a warning."""
    from mnemometer.datasets import READERS, get_reader
    from mnemometer.errors import DatasetError

    rows: list[tuple[tuple[float, str], str]] = []
    for name in READERS.names():
        try:
            r = get_reader(name)
        except DatasetError as e:
            warnings.warn(str(e), stacklevel=2)
            rows.append(((float("inf"), name), f"{name:<14} (broken: {e})"))
            continue
        rows.append(((r.order, name), f"{name:<14} {r.description}"))
    for _, line in sorted(rows):
        click.echo(line)
