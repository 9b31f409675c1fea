"""A suite directory (``suite.toml`` + ``items.jsonl``) run as an experiment.

The manifest names the conditions, repeats and answer profile; each condition becomes a
system and the ``items`` suite runs under each, so the runner itself knows no suite.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mnemometer.errors import MnemometerError
from mnemometer.runner import Experiment, ExperimentResult, OnRun, RunSettings, run_experiment
from mnemometer.runner._conditions import load_conditions, resolve, system_for
from mnemometer.runner._setup import with_llm
from mnemometer.suites.items import load_suite


def run_suite(
    suite_dir: str | Path,
    *,
    conditions: list[str] | None = None,
    repeat: int | None = None,
    profile: str | None = None,
    out: str | Path | None = None,
    memories: str | Path | None = None,
    conditions_file: str | Path | None = None,
    suite_options: dict[str, Any] | None = None,
    settings: RunSettings | None = None,
    on_run: OnRun | None = None,
    limit: int | None = None,
    sample: int | None = None,
) -> ExperimentResult:
    """Run a suite directory under each condition, ``repeat`` times (an experiment).

    Args:
        suite_dir: suite directory or ``suite.toml``.
        conditions: condition names (default: the manifest's, else no-memory and
            full-memory).
        repeat: runs per condition (default: the manifest's ``default_repeats``).
        profile: ``offline`` or ``llm`` (default: the manifest's ``default_profile``).
        out: the experiment directory (default ``runs/items-<time>``).
        memories: seed memories overriding the manifest's.
        conditions_file: TOML mapping extra condition names to stores or agents.
        suite_options: more options for the ``items`` suite (``min_support``, ...).
        settings: concurrency, timeouts, LLM endpoint, ...
        on_run: called with each finished run.
        limit: run only the first ``limit`` items.
        sample: run a seeded random sample of ``sample`` items (the settings' seed).

    Raises:
        MnemometerError: bad suite, unknown condition, bad options.
    """
    loaded = load_suite(suite_dir, memories)
    opts = dict(suite_options or {})
    opts["suite_dir"] = str(loaded.root.resolve())
    if memories is not None:
        opts["memories"] = str(Path(memories).resolve())
    if profile is not None:
        opts["profile"] = profile
    names = list(conditions or loaded.manifest.conditions or DEFAULT_EXPERIMENT_CONDITIONS)
    table = load_conditions(conditions_file)
    llm = with_llm((settings or RunSettings()).checked()).llm
    systems = [system_for(name, resolve(name, table), llm) for name in names]
    effective = profile or loaded.manifest.default_profile
    agents = [s.label for s in systems if s.kind == "agent"]
    if agents and effective != "llm":
        raise MnemometerError(
            f"condition(s) {', '.join(sorted(agents))} drive an agent, which calls a model: "
            "pass --profile llm (the offline profile makes no provider calls)"
        )
    repeats = loaded.manifest.default_repeats if repeat is None else repeat
    exp = Experiment("items", systems, repeats, None, opts, limit, sample)
    return run_experiment(exp, out, settings=settings, on_run=on_run)


DEFAULT_EXPERIMENT_CONDITIONS = ("no-memory", "full-memory")
"""Conditions a suite directory runs when neither it nor the caller names any."""
