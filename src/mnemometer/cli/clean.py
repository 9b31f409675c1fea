"""``mnemometer clean DATASET -o OUT``: duplicates out, persons balanced (wraps ``clean_dataset``)."""

from __future__ import annotations

from pathlib import Path

import click

from mnemometer.cli._common import default_of, echo_err
from mnemometer.datasets.clean import CleanConfig


def _keys(value: str) -> tuple[str, ...]:
    return tuple(k.strip() for k in value.split(",") if k.strip())


@click.command("clean")
@click.argument("dataset")
@click.option(
    "--out",
    "-o",
    required=True,
    type=click.Path(path_type=Path),
    help="Cleaned dataset to write (.json or .jsonl).",
)
@click.option(
    "--near-dup-threshold",
    type=float,
    default=default_of(CleanConfig, "near_dup_threshold"),
    show_default=True,
    help="Jaccard similarity above which memories are near duplicates; 0 disables.",
)
@click.option(
    "--num-perm",
    type=int,
    default=default_of(CleanConfig, "num_perm"),
    show_default=True,
    help="MinHash permutations.",
)
@click.option(
    "--group-by",
    default=",".join(default_of(CleanConfig, "group_by")),
    show_default=True,
    help="Metadata keys that must match for two memories to be compared.",
)
@click.option(
    "--any-person",
    is_flag=True,
    help="Also merge near duplicates about the same person (default: different "
    "persons only, the cross-perspective rule).",
)
@click.option(
    "--person-key",
    default=default_of(CleanConfig, "person_key"),
    show_default=True,
    help="Metadata key naming a memory's person; '' disables person rules.",
)
@click.option(
    "--key-percentile",
    type=float,
    default=default_of(CleanConfig, "key_percentile"),
    show_default=True,
    help="Persons at or above this percentile of memory counts are key persons.",
)
@click.option(
    "--key-cap",
    type=int,
    default=default_of(CleanConfig, "key_cap"),
    show_default=True,
    help="Memories kept per key person; 0 disables balancing.",
)
@click.option(
    "--other-cap",
    type=int,
    default=default_of(CleanConfig, "other_cap"),
    show_default=True,
    help="Memories kept per other person.",
)
@click.option(
    "--strata",
    default=",".join(default_of(CleanConfig, "strata")),
    show_default=True,
    help="Metadata keys forming the strata of diverse sampling.",
)
@click.option(
    "--query-person-cap",
    type=int,
    default=default_of(CleanConfig, "query_person_cap"),
    show_default=True,
    help="Queries kept per person; 0 keeps all.",
)
@click.option(
    "--seed",
    type=int,
    default=default_of(CleanConfig, "seed"),
    show_default=True,
    help="Seed of the random fill.",
)
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
