"""``mnemometer clean DATASET -o OUT``: duplicates out, persons balanced (wraps ``clean_dataset``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from mnemometer.cli._common import default_of, echo_err
from mnemometer.datasets.clean import CleanConfig

F = TypeVar("F", bound=Callable[..., Any])


def _keys(value: str) -> tuple[str, ...]:
    return tuple(k.strip() for k in value.split(",") if k.strip())


def _config_option(flag: str, help: str, **kw: Any) -> Callable[[F], F]:
    """``--a-b``: an option defaulting to ``CleanConfig.a_b`` (shown; a tuple comma-joined)."""
    default = default_of(CleanConfig, flag.lstrip("-").replace("-", "_"))
    if isinstance(default, tuple):
        default = ",".join(default)
    return click.option(flag, default=default, show_default=True, help=help, **kw)


@click.command("clean")
@click.argument("dataset")
@click.option(
    "--out",
    "-o",
    required=True,
    type=click.Path(path_type=Path),
    help="Cleaned dataset to write (.json or .jsonl).",
)
@_config_option(
    "--near-dup-threshold",
    "Jaccard similarity above which memories are near duplicates; 0 disables.",
    type=float,
)
@_config_option("--num-perm", "MinHash permutations.", type=int)
@_config_option("--group-by", "Metadata keys that must match for two memories to be compared.")
@click.option(
    "--any-person",
    is_flag=True,
    help="Also merge near duplicates about the same person (default: different "
    "persons only, the cross-perspective rule).",
)
@_config_option("--person-key", "Metadata key naming a memory's person; '' disables person rules.")
@_config_option(
    "--key-percentile",
    "Persons at or above this percentile of memory counts are key persons.",
    type=float,
)
@_config_option("--key-cap", "Memories kept per key person; 0 disables balancing.", type=int)
@_config_option("--other-cap", "Memories kept per other person.", type=int)
@_config_option("--strata", "Metadata keys forming the strata of diverse sampling.")
@_config_option("--query-person-cap", "Queries kept per person; 0 keeps all.", type=int)
@_config_option("--seed", "Seed of the random fill.", type=int)
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
    near_dup_threshold: float,
    num_perm: int,
    group_by: str,
    any_person: bool,
    person_key: str,
    key_percentile: float,
    key_cap: int,
    other_cap: int,
    strata: str,
    query_person_cap: int,
    seed: int,
    lang: str,
) -> None:
    """Clean DATASET: exact and near duplicates, per-person balance, queries kept consistent.

    The defaults are MemTest's cleaning parameters. Per-step counts are printed and
    recorded in the output's info.notes.

    Example: mnemometer clean hp_benchmark_db_raw.json -o hp_clean.json
    """
    from mnemometer.datasets import load_dataset, save_dataset
    from mnemometer.datasets.clean import CleanConfig, clean_dataset

    config = CleanConfig(
        near_dup_threshold=near_dup_threshold,
        num_perm=num_perm,
        group_by=_keys(group_by),
        cross_person_only=not any_person,
        person_key=person_key,
        key_percentile=key_percentile,
        key_cap=key_cap,
        other_cap=other_cap,
        strata=_keys(strata),
        query_person_cap=query_person_cap,
        seed=seed,
        lang=None if lang == "auto" else lang,
    )
    cleaned, report = clean_dataset(load_dataset(dataset), config)
    for line in report.lines():
        click.echo(line)
    save_dataset(cleaned, out)
    echo_err(f"wrote {out}")
