"""``mnemometer generate``: write a procedural dataset (wraps ``datasets.generate``)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import click

from mnemometer.cli._common import out_option
from mnemometer.errors import MnemometerError


def _int(value: str, flag: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise MnemometerError(f"{flag} must be an integer, got {value!r}") from None


@click.command("generate")
@click.option(
    "--size",
    "-n",
    default="100",
    show_default=True,
    help="Number of memories (50 to 5,000,000; 100 is the quick sample, 10000 the full set).",
)
@click.option("--lang", "-l", default="en", show_default=True, help="Language: en or zh.")
@click.option("--seed", default="0", show_default=True, help="Seed (non-negative integer).")
@click.option(
    "--reference-time",
    "reference_time",
    default=None,
    help="The dataset's 'now' as ISO 8601 (default 2026-06-01T09:00:00).",
)
@out_option("Output file: .json or .jsonl.", required=True)
@click.option("--stats", is_flag=True, help="Print descriptive statistics as JSON (slower).")
def generate_cmd(
    size: str, lang: str, seed: str, reference_time: str | None, out: Path, stats: bool
) -> None:
    """Generate a deterministic dataset: same arguments, same bytes.

    Example: mnemometer generate --size 10000 --lang zh --seed 1 -o zh10k.jsonl
    """
    import json

    from mnemometer.datasets.generate import write_generated

    ref = None
    if reference_time is not None:
        try:
            ref = datetime.fromisoformat(reference_time)
        except ValueError:
            raise MnemometerError(
                f"--reference-time must be ISO 8601 (e.g. 2026-06-01T09:00:00), "
                f"got {reference_time!r}"
            ) from None
    summary = write_generated(
        out, _int(size, "--size"), lang, _int(seed, "--seed"), ref, stats=stats
    )
    if stats:
        click.echo(json.dumps(summary, indent=1, ensure_ascii=False))
    click.echo(
        f"wrote {summary['memories']:,} memories and {summary['queries']:,} queries to {out} "
        f"(sha256 {summary['sha256'][:16]})",
        err=True,
    )
