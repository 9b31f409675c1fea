"""The shared option helpers of ``cli/_common.py``: what a command declares is what it reads."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import click
from click.testing import CliRunner

from mnemometer.cli._common import conditions_options, config_from, out_option, path_option
from mnemometer.cli.main import cli


@dataclasses.dataclass(frozen=True)
class _Config:
    seed: int = 1
    lang: str | None = None
    keys: tuple[str, ...] = ("a",)


def test_config_from_takes_the_fields_leaves_the_rest_and_given_wins() -> None:
    kw = {"seed": 7, "lang": "zh", "out": Path("x"), "llm_model": "m", "keys": "b,c"}
    assert config_from(_Config, kw, keys=("b", "c")) == _Config(7, "zh", ("b", "c"))
    assert config_from(_Config, {"out": Path("x")}) == _Config()  # unset fields: defaults


def test_path_out_and_conditions_options_parse_to_paths_and_tuples() -> None:
    seen: dict[str, Any] = {}

    @click.command()
    @out_option("Where to write.", dest="outs", multiple=True)
    @path_option("--policy", "-p", required=True, help="Policy.")
    @conditions_options("Condition.", "Table.")
    def cmd(**kw: Any) -> None:
        seen.update(kw)

    args = ["-o", "a.json", "--out", "b.html", "-p", "g.toml", "--condition", "x"]
    res = CliRunner().invoke(cmd, [*args, "--condition", "y", "--conditions", "c.toml"])
    assert res.exit_code == 0, res.output
    assert seen == {
        "outs": (Path("a.json"), Path("b.html")),
        "policy": Path("g.toml"),
        "conditions": ("x", "y"),
        "conditions_file": Path("c.toml"),
    }
    assert CliRunner().invoke(cmd, []).exit_code == 2  # --policy is required


def _other_values(command: click.Command, config: type) -> tuple[list[str], dict[str, Any]]:
    """A non-default value on the command line for every option named after a config field."""
    fields = {f.name: f.default for f in dataclasses.fields(config)}
    args: list[str] = []
    given: dict[str, Any] = {}
    for p in command.params:
        if not isinstance(p, click.Option) or p.name not in fields or p.is_flag:
            continue
        if isinstance(p.type, click.Choice):
            value: Any = next(c for c in p.type.choices if c not in ("auto", fields[p.name]))
        elif p.type.name == "integer":
            value = fields[p.name] + 3
        elif p.type.name == "float":
            value = fields[p.name] + 0.125
        else:
            value = "who"
        args += [p.opts[0], str(value)]
        given[p.name] = value
    return args, given


def test_every_clean_option_reaches_its_config_field(tmp_path: Path, monkeypatch) -> None:
    import mnemometer.datasets.clean as clean_module
    from mnemometer.datasets.clean import CleanConfig

    real, seen = clean_module.clean_dataset, []

    def spy(dataset: Any, config: CleanConfig) -> Any:
        seen.append(config)
        return real(dataset, config)

    monkeypatch.setattr(clean_module, "clean_dataset", spy)
    args, given = _other_values(cli.get_command(click.Context(cli), "clean"), CleanConfig)
    out = tmp_path / "o.json"
    res = CliRunner().invoke(cli, ["clean", "demo-en", "-o", str(out), *args, "--any-person"])
    assert res.exit_code == 0, res.output
    assert len(given) >= 10  # every numeric and string knob of the cleaning is an option
    expected = {**given, "group_by": ("who",), "strata": ("who",), "cross_person_only": False}
    assert {k: getattr(seen[0], k) for k in expected} == expected


def test_every_build_option_reaches_its_config_field(tmp_path: Path, monkeypatch) -> None:
    import mnemometer.datasets.build as build_module
    from mnemometer.datasets.build import BuildConfig, BuildReport

    seen = []

    def spy(corpus: Path, out: Path, client: Any, config: BuildConfig, **kw: Any) -> Any:
        seen.append(config)  # the building itself is tests/datasets_/test_build.py's
        return None, BuildReport()

    monkeypatch.setattr(build_module, "build_dataset", spy)
    args, given = _other_values(cli.get_command(click.Context(cli), "build"), BuildConfig)
    llm = ["--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m", "--no-llm-cache"]
    res = CliRunner().invoke(
        cli, ["build", str(tmp_path), "-o", str(tmp_path / "o.json"), *args, *llm, "--no-classify"]
    )
    assert res.exit_code == 0, res.output
    assert len(given) >= 10
    expected = {**given, "classify": False, "classify_batch": BuildConfig().classify_batch}
    assert {k: getattr(seen[0], k) for k in expected} == expected
