"""What is wrong with a build item: the checks before it runs, and ``doctor``'s findings.

Runs nothing. A missing fixture, a symlink, a path leaving the workspace or a template that
does not parse fails; a script a command names but the suite does not ship (Memory Layer's
checked-in suites leave out their checker and fake-agent scripts) is a warning that says
exactly which file is missing and what will happen.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from mnemometer._jsonl import shown
from mnemometer.sandbox import (
    SCRIPT_SUFFIXES,
    CommandError,
    FixtureError,
    bad_relative,
    check_fixture,
    split_template,
)

SHELL_TYPES = ("command_task", "agent_build_task", "agent_build_sequence")
"""Item types that execute suite-provided commands."""


def commands_of(item: Any) -> list[str]:
    """Every command template an item would run."""
    out: list[str] = []
    for key in ("command", "agent_command"):
        if v := getattr(item, key, None):
            out.append(v)
    out += list(getattr(item, "setup_commands", []) or [])
    out += list(getattr(item, "score_commands", []) or [])
    for step in getattr(item, "steps", []) or []:
        out += list(step.score_commands)
    return out


def requires_shell(item: Any) -> bool:
    """True when running ``item`` executes a suite-provided command."""
    return item.eval_type in SHELL_TYPES and bool(commands_of(item))


def validate_item(root: Path, item: Any) -> list[str]:
    """Problems that stop a shell item from running (empty: it may run).

    Checks the fixture (exists, inside the suite, no symlinks), every command template
    (splits, known placeholders), every workspace path (relative, no ``..``), the steps.
    """
    problems: list[str] = []
    if item.eval_type not in SHELL_TYPES:
        return problems
    if item.eval_type == "command_task" and not item.command.strip():
        problems.append("command is empty")
    if item.eval_type != "command_task":
        if not item.agent_command.strip():
            problems.append("agent_command is empty")
        try:
            check_fixture(root, item.fixture)
        except FixtureError as e:
            problems.append(str(e))
    elif getattr(item, "fixture", None):
        try:
            check_fixture(root, item.fixture)
        except FixtureError as e:
            problems.append(str(e))
    for cmd in commands_of(item):
        try:
            split_template(cmd)
        except CommandError as e:
            problems.append(str(e))
    checks = [item] if item.eval_type == "agent_build_task" else list(getattr(item, "steps", []))
    ids = [s.id for s in getattr(item, "steps", [])]
    if len(set(ids)) != len(ids):
        problems.append(f"duplicate step id in {ids}")
    for where in checks:
        label = f"step {where.id!r}: " if where is not item else ""
        for field in ("required_files", "forbidden_files"):
            for rel in getattr(where, field):
                if why := bad_relative(rel):
                    problems.append(f"{label}{field} path {rel!r} {why}")
        for rc in where.required_content:
            if why := bad_relative(rc.file):
                problems.append(f"{label}required_content file {rc.file!r} {why}")
    return problems


@dataclass(frozen=True)
class BuildCheck:
    """One doctor finding."""

    name: str
    status: Literal["ok", "warn", "fail"]
    message: str


def _scripts(template: str) -> list[str]:
    """Words of a command that name a script file (``{suite_dir}/x.sh``, ``scripts/c.py``)."""
    try:
        words = split_template(template)
    except CommandError:
        return []
    return [w for w in words if w.endswith(SCRIPT_SUFFIXES) and not w.startswith("-")]


def _missing_scripts(root: Path, item: Any) -> list[str]:
    """Scripts the item's commands name that neither the suite nor the fixture holds."""
    fixture: Path | None = None
    if getattr(item, "fixture", None):
        try:
            fixture = check_fixture(root, item.fixture)
        except FixtureError:
            fixture = None
    out: list[str] = []
    for cmd in commands_of(item):
        for word in _scripts(cmd):
            if word.startswith("{suite_dir}/"):
                if not (root / word.removeprefix("{suite_dir}/")).is_file():
                    out.append(f"{word} (suite file {word.removeprefix('{suite_dir}/')})")
            elif "{" in word or word.startswith("/"):
                continue  # other placeholders and absolute programs are the user's business
            elif fixture is not None and not (fixture / word).is_file():
                out.append(f"{word} (not in fixture {item.fixture})")
    return list(dict.fromkeys(out))


def build_checks(root: Path, items: list[Any], has_memories: bool = True) -> list[BuildCheck]:
    """Doctor findings for every shell item of a suite (nothing for other items).

    Args:
        root: the suite directory.
        items: the suite's items.
        has_memories: whether the suite seeds memories (memory questions need them).
    """
    out: list[BuildCheck] = []
    asks = [
        it.id
        for it in items
        if getattr(it, "memory_questions", None)
        or any(s.memory_questions for s in getattr(it, "steps", None) or [])
    ]
    if asks and not has_memories:
        out.append(
            BuildCheck(
                "suite.memory_questions",
                "warn",
                f"{len(asks)} build item(s) ask memory questions ({asks[0]}, ...) "
                "but the suite seeds no memories: under memory conditions the "
                "helper finds nothing and the evidence check fails",
            )
        )
    shell = [it for it in items if requires_shell(it)]
    if shell:
        out.append(
            BuildCheck(
                "suite.shell",
                "warn",
                f"{len(shell)} item(s) run suite-provided commands "
                f"({', '.join(it.id for it in shell[:3])}"
                f"{' ...' if len(shell) > 3 else ''}); `run` needs --allow-shell, "
                "--dry-run validates without executing",
            )
        )
    for it in items:
        if not requires_shell(it) and it.eval_type not in (
            "agent_build_task",
            "agent_build_sequence",
        ):
            continue
        problems = validate_item(root, it)
        name = f"item.{it.id}"
        if problems:
            out.append(BuildCheck(name, "fail", "; ".join(problems)))
            continue
        steps = len(getattr(it, "steps", []) or [])
        what = f"{steps} step(s), " if steps else ""
        out.append(
            BuildCheck(
                name,
                "ok",
                f"{it.eval_type}: {what}fixture, paths and "
                f"{len(commands_of(it))} command template(s) valid",
            )
        )
        missing = _missing_scripts(root, it)
        if missing:
            out.append(
                BuildCheck(
                    f"{name}.scripts",
                    "warn",
                    "scripts named by its commands are not included in the suite: "
                    + ", ".join(map(shown, missing))
                    + " (Memory Layer's checked-in suites ship without "
                    "their scripts); those commands will fail (a recorded failure) unless the "
                    "agent or a setup command creates them: add the scripts or point the "
                    "commands at your own",
                )
            )
    return out
