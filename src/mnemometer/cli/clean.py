"""``mnemometer clean DATASET -o OUT``: duplicates out, persons balanced (wraps ``clean_dataset``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from mnemometer.cli._common import config_from, config_option, echo_err, out_option
from mnemometer.datasets.clean import CleanConfig


def _keys(value: str) -> tuple[str, ...]:
    return tuple(k.strip() for k in value.split(",") if k.strip())


@click.command("clean")
@click.argument("dataset")
@out_option("Cleaned dataset to write (.json or .jsonl).", required=True)
@config_option(
    CleanConfig,
    "--near-dup-threshold",
    help="Jaccard similarity above which memories are near duplicates; 0 disables.",
    type=float,
)
@config_option(CleanConfig, "--num-perm", help="MinHash permutations.", type=int)
@config_option(
    CleanConfig, "--group-by", help="Metadata keys that must match for two memories to be compared."
)
@click.option(
    "--any-person",
    is_flag=True,
    help="Also merge near duplicates about the same person (default: different "
    "persons only, the cross-perspective rule).",
)
@config_option(
    CleanConfig,
    "--person-key",
    help="Metadata key naming a memory's person; '' disables person rules.",
)
@config_option(
    CleanConfig,
    "--key-percentile",
    help="Persons at or above this percentile of memory counts are key persons.",
    type=float,
)
@config_option(
    CleanConfig, "--key-cap", help="Memories kept per key person; 0 disables balancing.", type=int
)
@config_option(CleanConfig, "--other-cap", help="Memories kept per other person.", type=int)
@config_option(
    CleanConfig, "--strata", help="Metadata keys forming the strata of diverse sampling."
)
@config_option(
    CleanConfig, "--query-person-cap", help="Queries kept per person; 0 keeps all.", type=int
)
@config_option(CleanConfig, "--seed", help="Seed of the random fill.", type=int)
@click.option(
    "--lang",
    type=click.Choice(["auto", "en", "zh"]),
    default="auto",
    show_default=True,
    help="Tokeniser language; auto uses the dataset's.",
)
def clean_cmd(
    dataset: str,
    out: Path,
    group_by: str,
    any_person: bool,
    strata: str,
    lang: str,
    **kw: Any,
) -> None:
    """Clean DATASET: exact and near duplicates, per-person balance, queries kept consistent.

    The defaults are MemTest's cleaning parameters. Per-step counts are printed and
    recorded in the output's info.notes.

    Example: mnemometer clean hp_benchmark_db_raw.json -o hp_clean.json
    """
    from mnemometer.datasets import load_dataset, save_dataset
    from mnemometer.datasets.clean import clean_dataset

    config = config_from(
        CleanConfig,
        kw,
        group_by=_keys(group_by),
        cross_person_only=not any_person,
        strata=_keys(strata),
        lang=None if lang == "auto" else lang,
    )
    cleaned, report = clean_dataset(load_dataset(dataset), config)
    for line in report.lines():
        click.echo(line)
    save_dataset(cleaned, out)
    echo_err(f"wrote {out}")
