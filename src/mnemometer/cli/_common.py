"""Helpers shared by the CLI commands."""

from __future__ import annotations

import json
from typing import Any

import click

from mnemometer.errors import MnemometerError


def parse_options(pairs: tuple[str, ...], flag: str) -> dict[str, Any]:
    """Parse repeated ``key=value`` options; values are JSON when they parse as JSON."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise MnemometerError(f"{flag} expects key=value, got {pair!r}")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def stderr_progress(label: str) -> Any:
    """A rich progress bar on stderr (silent when stderr is not a terminal)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    console = Console(stderr=True)
    return Progress(
        f"[bold]{label}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=not console.is_terminal,
        transient=False,
    )


def echo_err(message: str) -> None:
    """Print one line to stderr."""
    click.echo(message, err=True)


def executor_options(fn: Any) -> Any:
    """``--executor`` and ``--ray-address``, shared by ``run`` and ``sweep``."""
    fn = click.option(
        "--ray-address",
        metavar="ADDR",
        help="Ray cluster to use (HOST:PORT from `ray start --head`); default with "
        "--executor ray: a local cluster started for this command.",
    )(fn)
    return click.option(
        "--executor",
        type=click.Choice(["local", "ray"]),
        default="local",
        show_default=True,
        help="Where work runs: threads here, or a Ray cluster (pip install "
        "'mnemometer[distributed]').",
    )(fn)


def make_executor(kw: dict[str, Any]) -> Any:
    """The executor ``--executor`` / ``--ray-address`` ask for (``None``: local threads).

    Raises:
        MnemometerError: ``--ray-address`` without ``--executor ray``.
    """
    if kw.get("executor", "local") == "local":
        if kw.get("ray_address"):
            raise MnemometerError("--ray-address needs --executor ray")
        return None
    from mnemometer.runner import RayExecutor

    return RayExecutor(kw.get("ray_address"))
