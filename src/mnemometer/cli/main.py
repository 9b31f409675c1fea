"""The ``mnemometer`` command: one thin module per verb."""

from __future__ import annotations

import sys

import click

from mnemometer.cli.archive import archive_cmd
from mnemometer.cli.build import build_cmd
from mnemometer.cli.check_store import check_store_cmd
from mnemometer.cli.clean import clean_cmd
from mnemometer.cli.compare import compare_cmd
from mnemometer.cli.doctor import doctor_cmd
from mnemometer.cli.export import export_cmd
from mnemometer.cli.gate import gate_cmd
from mnemometer.cli.generate import generate_cmd
from mnemometer.cli.leaderboard import leaderboard_cmd
from mnemometer.cli.list import list_cmd
from mnemometer.cli.log import log_group
from mnemometer.cli.query import query_cmd
from mnemometer.cli.report import report_cmd
from mnemometer.cli.reproduce import reproduce_cmd
from mnemometer.cli.run import run_cmd
from mnemometer.cli.serve import serve_group
from mnemometer.cli.serve_llm import serve_llm_cmd
from mnemometer.cli.sweep import sweep_cmd
from mnemometer.envfile import prepare_environment
from mnemometer.errors import MnemometerError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mnemometer")
def cli() -> None:
    """Measure AI-agent memory.

    Every option can also be set from the environment as MNEMOMETER_<COMMAND>_<OPTION>,
    e.g. MNEMOMETER_RUN_STORE=bm25.
    """


for command in (run_cmd, report_cmd, list_cmd, check_store_cmd, log_group, generate_cmd):
    cli.add_command(command)
for command in (compare_cmd, gate_cmd, leaderboard_cmd, doctor_cmd, reproduce_cmd, archive_cmd):
    cli.add_command(command)
for command in (build_cmd, clean_cmd, sweep_cmd):
    cli.add_command(command)
cli.add_command(query_cmd)
cli.add_command(export_cmd)

cli.add_command(serve_llm_cmd)
cli.add_command(serve_group)


def _log_to_stderr() -> None:
    """The library's warnings (``mnemometer.*`` loggers) as ``warning: ...`` lines."""
    import logging

    log = logging.getLogger("mnemometer")
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("warning: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.WARNING)
        log.propagate = False


def main(argv: list[str] | None = None) -> None:
    """Entry point: user errors become one line on stderr and exit code 2.

    The nearest ``.env`` is loaded first and the seeds' variable names become aliases of
    ``MNEMOMETER_*`` ones (docs/seed-differences.md).
    """
    prepare_environment()
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
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        click.echo("interrupted; continue with --resume RUN_DIR", err=True)
        sys.exit(130)
    sys.exit(0)
