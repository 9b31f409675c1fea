"""``mnemometer serve letta``: the whole Letta stack on 127.0.0.1 until interrupted."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path
from typing import Any

import click

from mnemometer.cli._common import echo_err
from mnemometer.services._letta_install import DEFAULT_VERSION, size_mb


class _Stopped(Exception):
    """SIGTERM or SIGHUP arrived."""


def _raise(signum: int, frame: Any) -> None:
    raise _Stopped(signal.Signals(signum).name)


@click.group("serve")
def serve_group() -> None:
    """Run a memory system's server stack on 127.0.0.1 (Ctrl-C or SIGTERM stops it)."""


@serve_group.command("letta")
@click.option(
    "--port", type=int, default=8283, show_default=True, help="Letta's port (0: a free one)."
)
@click.option(
    "--letta-version", default=DEFAULT_VERSION, show_default=True, help="Letta server version."
)
@click.option("--allow-untested", is_flag=True, help="Run a version our tests never ran.")
@click.option(
    "--llm-base-url",
    help="OpenAI-compatible endpoint for Letta's LLM and embeddings "
    "(default: the built-in test LLM, which keeps a memory block).",
)
@click.option("--llm-api-key", default="sk-local", help="Key for --llm-base-url.")
@click.option(
    "--embeddings",
    type=click.Choice(["hash", "minilm"]),
    default="hash",
    show_default=True,
    help="Vectors of the built-in test LLM (minilm needs the [embeddings] extra).",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep the database here across runs (default: a temporary copy).",
)
@click.option("--migrate", is_flag=True, help="Upgrade a --data-dir database to this version.")
@click.option(
    "--log-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep letta.log and postgres.log here.",
)
@click.option(
    "--timeout", type=float, default=180.0, show_default=True, help="Seconds to wait for Letta."
)
@click.option("--prepare", is_flag=True, help="Install and build the database, then exit.")
def serve_letta_cmd(
    port: int,
    letta_version: str,
    allow_untested: bool,
    llm_base_url: str | None,
    llm_api_key: str,
    embeddings: str,
    data_dir: Path | None,
    migrate: bool,
    log_dir: Path | None,
    timeout: float,
    prepare: bool,
) -> None:
    """PostgreSQL + pgvector and a Letta server, in their own cached environment.

    The first run installs Letta (about 1.2 GB, a few minutes; needs PyPI) under
    ~/.cache/mnemometer; later runs start in about half a minute, offline. Prints Letta's
    URL on stdout once it is healthy, progress on stderr. Then:
    mnemometer run scenarios --agent letta --letta-url URL
    """
    from mnemometer.services._letta_server import LettaStack
    from mnemometer.services._letta_server import prepare as prepare_install
    from mnemometer.testing._letta import memory_llm

    for sig in (signal.SIGTERM, signal.SIGHUP):  # also stops (and kills) a running install
        signal.signal(sig, _raise)
    try:
        inst = prepare_install(letta_version, allow_untested=allow_untested, log=echo_err)
    except (KeyboardInterrupt, _Stopped):
        echo_err("stopped before the install finished; the next run redoes it")
        sys.exit(130)
    if prepare:
        echo_err(
            f"letta {inst.version} ready in {inst.root} ({size_mb(inst.venv):.0f} MB; "
            f"PostgreSQL {size_mb(inst.pg_root):.0f} MB; database template "
            f"{size_mb(inst.template):.0f} MB)"
        )
        return
    llm = None
    stack = None
    try:
        if llm_base_url is None:
            llm = memory_llm(embeddings).start()
            llm_base_url = llm.base_url
            echo_err(f"LLM: the built-in test LLM at {llm_base_url} ({embeddings} embeddings)")
        stack = LettaStack(
            llm_base_url,
            llm_api_key,
            version=letta_version,
            port=port,
            data_dir=data_dir,
            migrate=migrate,
            log_dir=log_dir,
            timeout=timeout,
            allow_untested=allow_untested,
            log=echo_err,
        )
        url = stack.start()
        echo_err(f"letta {inst.version} up in {stack.startup_s:.1f} s; Ctrl-C stops it")
        echo_err(f"  mnemometer run scenarios --agent letta --letta-url {url}")
        echo_err(f"  mnemometer run retrieval -d demo-en --store letta -S base_url={url}")
        click.echo(url)
        sys.stdout.flush()
        _watch(stack)
    except (KeyboardInterrupt, _Stopped):
        echo_err("stopping")
    finally:
        if stack is not None:
            stack.stop()
        if llm is not None:
            llm.stop()


def _watch(stack: Any) -> None:
    """Wait for a signal; a server that dies on its own is an error."""
    from mnemometer.errors import MnemometerError

    while True:
        time.sleep(0.5)
        for name, proc in (("letta", stack.proc), ("postgres", stack.pg.proc)):
            if proc.poll() is not None:
                raise MnemometerError(f"{name} exited on its own (code {proc.returncode})")
