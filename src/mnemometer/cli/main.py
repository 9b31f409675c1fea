"""The ``mnemometer`` command: one thin module per verb, imported only when it runs.

``mnemometer --help`` and ``mnemometer --version`` import click and this table, nothing
else: each command's module (and whatever it needs: pydantic, numpy, the runner) loads only
when that command is invoked or its own ``--help`` is asked for.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from mnemometer.envfile import prepare_environment, quiet_libraries
from mnemometer.errors import MnemometerError

COMMANDS: dict[str, tuple[str, str, str]] = {
    "agent": (
        "agent",
        "agent_group",
        "Run an agent CLI for a build item and keep its final message, events and token usage.",
    ),
    "archive": (
        "archive",
        "archive_cmd",
        "Bundle SUITE and RUNS (run directories, or directories of them) as a tar.gz.",
    ),
    "build": (
        "build",
        "build_cmd",
        "Build a dataset from CORPUS_DIR (.md/.txt files, recursively) with an LLM.",
    ),
    "check-store": (
        "check_store",
        "check_store_cmd",
        "Run the store conformance checks against store NAME; exit 1 if any fails.",
    ),
    "clean": (
        "clean",
        "clean_cmd",
        "Clean DATASET: exact and near duplicates, per-person balance, queries kept consistent.",
    ),
    "compare": (
        "compare",
        "compare_cmd",
        "Compare BASELINE runs with CANDIDATE runs, paired item by item.",
    ),
    "doctor": (
        "doctor",
        "doctor_cmd",
        "Check the environment and, when given, a SUITE directory: one line per check.",
    ),
    "export": (
        "export",
        "export_cmd",
        "Write RUN_DIR's answers, one JSON line per question.",
    ),
    "gate": (
        "gate",
        "gate_cmd",
        "Check a COMPARISON JSON (from `mnemometer compare -o`) against a gate policy.",
    ),
    "generate": (
        "generate",
        "generate_cmd",
        "Generate a deterministic dataset: same arguments, same bytes.",
    ),
    "leaderboard": (
        "leaderboard",
        "leaderboard_cmd",
        "Rank systems across RUNS (run directories or directories of them).",
    ),
    "list": (
        "list",
        "list_cmd",
        "List registered stores, suites, agents, scorers, readers, protocols, or the datasets.",
    ),
    "log": ("log", "log_group", "Inspect the run-log format."),
    "query": (
        "query",
        "query_cmd",
        "Seed STORE with the suite's memories and print the hits for QUESTION.",
    ),
    "report": (
        "report",
        "report_cmd",
        "Show the results of RUN_DIR: every aggregated metric, by group, with counts.",
    ),
    "reproduce": (
        "reproduce",
        "reproduce_cmd",
        "Reproduce a suite's headline result in one command, offline and keyless.",
    ),
    "run": ("run", "run_cmd", "Run SUITE (default: retrieval) and write a run directory."),
    "score": (
        "score",
        "score_cmd",
        "Re-score RUN_DIR without its system: other judges, another headline, prices, a new run.",
    ),
    "serve": (
        "serve",
        "serve_group",
        "Run a memory system's server stack on 127.0.0.1 (Ctrl-C or SIGTERM stops it).",
    ),
    "sweep": (
        "sweep",
        "sweep_cmd",
        "Run the sweep in FILE (TOML) into OUT and end with its leaderboard.",
    ),
    "serve-llm": (
        "serve_llm",
        "serve_llm_cmd",
        "Serve a local OpenAI-compatible LLM until interrupted (needs the [local-llm] extra).",
    ),
}
"""Command name -> (module under ``mnemometer.cli``, attribute, first sentence of its help).

The sentence is what ``mnemometer --help`` lists; a test checks it against each command's
own docstring, so the two cannot drift apart."""


class LazyGroup(click.Group):
    """A group whose commands are imported on first use; the listing comes from a table."""

    def __init__(self, *args: Any, lazy: dict[str, tuple[str, str, str]], **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, sorted (as click lists them)."""
        return sorted({*self.lazy, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command, importing its module the first time it is asked for."""
        if cmd_name not in self.commands and cmd_name in self.lazy:
            module, attr, _ = self.lazy[cmd_name]
            command = getattr(importlib.import_module(f"mnemometer.cli.{module}"), attr)
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The "Commands" section from the table, without importing any command."""
        rows = []
        for name in self.list_commands(ctx):
            if name in self.commands:
                cmd = self.commands[name]
                if cmd.hidden:
                    continue
                rows.append((name, cmd.get_short_help_str))
            else:
                summary = self.lazy[name][2]
                rows.append((name, lambda limit, s=summary: _short(s, limit)))
        if not rows:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in rows)
        with formatter.section("Commands"):
            formatter.write_dl([(name, short(limit)) for name, short in rows])


def _short(summary: str, limit: int) -> str:
    """The summary shortened to ``limit`` exactly as click shortens a command's help."""
    return click.Command(None, help=summary).get_short_help_str(limit)


@click.group(
    cls=LazyGroup,
    lazy=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(package_name="mnemometer")
def cli() -> None:
    """Measure AI-agent memory.

    Every option can also be set from the environment as MNEMOMETER_<COMMAND>_<OPTION>,
    e.g. MNEMOMETER_RUN_STORE=bm25, except the flags that let a suite's code run or reach
    more (--allow-shell, --sandbox, --pass-env, ...): the command line only.
    """


def _log_to_stderr() -> None:
    """The library's warnings (loggers and its own ``UserWarning``) as ``warning:`` lines."""
    import logging

    log = logging.getLogger("mnemometer")
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("warning: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.WARNING)
        log.propagate = False
    import warnings

    default = warnings.showwarning

    def show(message: Any, category: Any, filename: str, *rest: Any, **kw: Any) -> None:
        # Our own warnings are for the user (a fallback taken): one plain line, no source.
        if category is UserWarning and f"{os.sep}mnemometer{os.sep}" in filename:
            print(f"warning: {message}", file=sys.stderr)
        else:
            default(message, category, filename, *rest, **kw)

    warnings.showwarning = show


def _interrupted(cause: BaseException | None) -> None:
    """Ctrl-C: say where the run is and how to continue it, then exit 130 at once."""
    run_dir = getattr(cause, "run_dir", None)
    if run_dir is not None:
        click.echo(
            f"interrupted: run directory {run_dir}; continue it with "
            f"`mnemometer run --resume {run_dir}`",
            err=True,
        )
    else:
        click.echo("interrupted", err=True)
    sys.stdout.flush()
    sys.stderr.flush()
    # Exit now: a native library's threads (torch) abort the normal shutdown after an
    # interrupt ("terminate called without an active exception", exit 134).
    os._exit(130)


def main(argv: list[str] | None = None) -> None:
    """Entry point: user errors become one line on stderr and exit code 2.

    So does a system error naming a path (a parent of an output that is a file, a
    directory where a file is written).

    The nearest ``.env`` is loaded first and the seeds' variable names become aliases of
    ``MNEMOMETER_*`` ones (docs/seed-differences.md).
    """
    prepare_environment()
    quiet_libraries()  # after .env, so a value set there wins; before any system imports
    # numpy's OpenBLAS starts a worker thread per core that busy-waits about 0.1 s for work
    # that a command rarely gives it: 0.05 s of CPU at every start. Sleeping at once keeps
    # multi-threaded BLAS (same wall for a 100k x 384 product) without the burn.
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    _log_to_stderr()
    try:
        cli.main(
            args=argv,
            prog_name="mnemometer",
            auto_envvar_prefix="MNEMOMETER",
            standalone_mode=False,
        )
    except MnemometerError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    except OSError as e:
        if e.filename is None:
            raise
        # A path given to write (or read) that the system refuses: one line, not a
        # traceback, whichever of the many writers met it.
        from mnemometer._jsonl import shown

        click.echo(f"error: {shown(e.filename)}: {e.strerror or e}", err=True)
        sys.exit(2)
    except click.exceptions.Abort as e:  # click's name for Ctrl-C (and end of input)
        _interrupted(e.__cause__ or e.__context__)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except KeyboardInterrupt as e:
        _interrupted(e)
    sys.exit(0)


if __name__ == "__main__":  # `python -m mnemometer.cli.main`: agent commands in a sandbox
    main()
