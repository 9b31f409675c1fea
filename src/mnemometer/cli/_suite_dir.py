"""``mnemometer run SUITE_DIR``: conditions, repeats and profiles for suite directories.

A decorator on ``run`` adds the options and routes a suite directory here, so the
``run`` command keeps one entry point for registered suites and suite directories.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from mnemometer.cli._common import echo_err, parse_options
from mnemometer.errors import MnemometerError

_OPTIONS = [
    click.option(
        "--condition",
        "conditions",
        multiple=True,
        metavar="NAME",
        help="Suite directories: condition to run (repeatable; no-memory, lexical, "
        "semantic, hybrid, full-memory, or one from --conditions).",
    ),
    _REPEAT := click.option(
        "--repeat",
        type=int,
        help="Repeats: per condition for suite "
        "directories (default: the manifest's default_repeats).",
    ),
    click.option(
        "--profile",
        type=click.Choice(["offline", "llm"]),
        help="Suite directories: offline (deterministic, no provider calls) or llm "
        "(default: the manifest's default_profile).",
    ),
    click.option(
        "--conditions",
        "conditions_file",
        type=click.Path(path_type=Path),
        help="Suite directories: TOML file mapping condition names to stores.",
    ),
    click.option(
        "--memories",
        type=click.Path(path_type=Path),
        help="Suite directories: seed memories (overrides the manifest's).",
    ),
    click.option(
        "--skip-unsupported",
        is_flag=True,
        help="Suite directories: skip item types that cannot run here (recorded).",
    ),
    click.option(
        "--allow-shell",
        is_flag=True,
        help="Suite directories: run items that execute the suite's commands "
        "(command_task, agent builds). Suites are code: read them first.",
    ),
    click.option(
        "--dry-run",
        is_flag=True,
        help="Suite directories: validate shell items and execute nothing.",
    ),
]
_KEYS = (
    "conditions",
    "repeat",
    "profile",
    "conditions_file",
    "memories",
    "skip_unsupported",
    "allow_shell",
    "dry_run",
)


_HELP = """
    Suite directories (suite.toml + items.jsonl): mnemometer run SUITE_DIR --condition
    no-memory --condition hybrid --repeat 3 --out runs/x writes one run per condition and
    repeat, sharing a run group (see docs/ablations.md).
"""


def suite_dir_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add the suite-directory options to ``run`` and route suite directories."""
    # Another option set may own --repeat too (agent runs); then it is shared, not popped.
    params = inspect.signature(f).parameters
    shares_repeat = "repeat" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
    has_repeat = any(p.name == "repeat" for p in getattr(f, "__click_params__", []))

    @functools.wraps(f)
    def wrapper(**kw: Any) -> Any:
        from mnemometer.suites.items import is_suite_path

        mine = {k: kw.pop(k) for k in _KEYS if k != "repeat"}
        mine["repeat"] = kw.get("repeat") if shares_repeat else kw.pop("repeat", None)
        suite = kw.get("suite") or ""
        if is_suite_path(suite):
            kw.pop("repeat", None)
            return _run_suite_dir(suite, kw, mine)
        given = [
            k
            for k, v in mine.items()
            if v not in (None, (), False) and not (k == "repeat" and shares_repeat)
        ]
        if given:
            flags = {"conditions": "--condition", "conditions_file": "--conditions"}
            flag = flags.get(given[0], "--" + given[0].replace("_", "-"))
            raise MnemometerError(
                f"{flag} applies to suite directories; {suite!r} is not one (no suite.toml there)"
            )
        return f(**kw)

    wrapper.__doc__ = (f.__doc__ or "") + _HELP
    for opt in reversed(_OPTIONS):
        if opt is _REPEAT and has_repeat:
            continue
        wrapper = opt(wrapper)
    return wrapper


def _run_suite_dir(suite: str, kw: dict[str, Any], mine: dict[str, Any]) -> None:
    from mnemometer.runner import run_suite

    for flag, key in (("--store", "store"), ("--dataset", "dataset"), ("--resume", "resume")):
        if kw.get(key):
            raise MnemometerError(
                f"{flag} does not apply to a suite directory: conditions choose the store "
                "(--condition NAME), the suite seeds its own memories"
            )
    printed: list[dict[str, Any]] = []

    def on_run(result: Any) -> None:
        h, counts = result.header, result.summary.counts
        row = {
            "condition": h.suite_options.get("condition"),
            "repeat": h.repeat,
            "profile": h.suite_options.get("profile"),
            "store": h.system.name,
            "items": counts.get("items", 0),
            "succeeded": counts.get("succeeded", 0),
            "tokens": counts.get("tokens", 0),
            "path": str(result.path),
            "run_group": h.run_group,
        }
        printed.append(row)
        if kw.get("fmt") != "json":
            rate = row["succeeded"] / row["items"] if row["items"] else 0.0
            echo_err(
                f"{row['condition']} r{row['repeat']} ({row['profile']}, store "
                f"{row['store']}): {row['succeeded']}/{row['items']} succeeded "
                f"({100 * rate:.1f}%), {row['tokens']} tokens -> {row['path']}"
            )

    result = run_suite(
        suite,
        conditions=list(mine["conditions"]) or None,
        repeat=mine["repeat"],
        profile=mine["profile"],
        out=kw.get("out"),
        memories=mine["memories"],
        conditions_file=mine["conditions_file"],
        skip_unsupported=mine["skip_unsupported"],
        suite_options={
            **parse_options(kw.get("suite_opts", ()), "--suite-option"),
            "allow_shell": mine["allow_shell"],
            "dry_run": mine["dry_run"],
        },
        concurrency=kw.get("concurrency", 1),
        timeout=kw.get("timeout", 60.0),
        on_run=on_run,
    )
    if kw.get("fmt") == "json":
        click.echo(
            json.dumps(
                {"run_group": result.run_group, "out": str(result.out), "runs": printed}, indent=1
            )
        )
    elif kw.get("fmt") != "none":
        click.echo(f"run group {result.run_group}: {len(result.runs)} runs in {result.out}")
        click.echo(
            f"next: mnemometer compare {result.out} --baseline "
            f"{printed[0]['condition']} --candidate {printed[-1]['condition']} "
            f"-o {result.out}/comparison.json"
        )
