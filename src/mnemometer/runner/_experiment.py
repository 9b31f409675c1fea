"""Run a suite directory under several conditions and repeats: one run log each."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mnemometer.errors import MnemometerError
from mnemometer.runner._conditions import load_conditions, pick_store, resolve
from mnemometer.runner._run import ProgressFn, RunResult, run
from mnemometer.suites.items._manifest import load_suite
from mnemometer.suites.items._suite import ItemsSuite
from mnemometer.suites.tasks._build import shell_run_options

DEFAULT_CONDITIONS = ("no-memory", "full-memory")


@dataclass(frozen=True)
class SuiteRun:
    """What :func:`run_suite` returns."""

    run_group: str
    """Run group shared by every run of the invocation."""
    out: Path
    """Directory holding one run directory per (condition, repeat)."""
    runs: list[RunResult]
    """The runs, repeat-major."""


def run_suite(
    suite_dir: str | Path,
    *,
    conditions: list[str] | None = None,
    repeat: int | None = None,
    profile: str | None = None,
    out: str | Path | None = None,
    memories: str | Path | None = None,
    conditions_file: str | Path | None = None,
    skip_unsupported: bool = False,
    suite_options: dict[str, Any] | None = None,
    concurrency: int = 1,
    timeout: float | None = 60.0,
    progress: ProgressFn | None = None,
    on_run: Any = None,
) -> SuiteRun:
    """Run a suite directory under each condition, ``repeat`` times, sharing one run group.

    Each (condition, repeat) writes its own immutable run directory
    ``OUT/<condition>-r<repeat>``; the loop is repeat-major, so an interrupted invocation
    has complete repeats.

    Args:
        suite_dir: suite directory or ``suite.toml``.
        conditions: condition names (default: the manifest's, else no-memory and
            full-memory).
        repeat: repeats (default: the manifest's ``default_repeats``).
        profile: ``offline`` or ``llm`` (default: the manifest's ``default_profile``).
        out: parent directory for the runs (default ``runs/<suite>-<time>``).
        memories: seed memories overriding the manifest's.
        conditions_file: TOML mapping extra condition names to stores.
        skip_unsupported: skip (and record) items without a runner.
        suite_options: extra options for the suite (``min_support``, ``answer_hits``, ...).
        concurrency: items in flight at once.
        timeout: seconds per item.
        progress: called with ``(done, total)`` per item.
        on_run: called with each finished :class:`RunResult`.

    Raises:
        MnemometerError: bad suite, unknown condition, bad options.
    """
    loaded = load_suite(suite_dir, memories)
    table = load_conditions(conditions_file)
    names = list(conditions or loaded.manifest.conditions or DEFAULT_CONDITIONS)
    for name in names:
        resolve(name, table)
    if len(set(names)) != len(names):
        raise MnemometerError(f"a condition is listed twice: {names}")
    repeats = loaded.manifest.default_repeats if repeat is None else repeat
    if repeats < 1:
        raise MnemometerError(f"--repeat must be at least 1, got {repeats}")
    base = dict(suite_options or {})
    base.update(
        suite_dir=str(suite_dir),
        profile=profile,
        skip_unsupported=skip_unsupported,
        memories=str(memories) if memories is not None else None,
    )
    probe = ItemsSuite(**base)
    dataset = probe.dataset()
    if out is None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        out = Path("runs") / f"{loaded.slug}-{stamp}"
    out = Path(out)
    group = uuid.uuid4().hex[:12]
    stores = {name: pick_store(name, resolve(name, table)) for name in names}
    # An agent condition whose agent loaded drives the agent; a fallback is a store.
    agents = {name for name in names if resolve(name, table).agent == stores[name][0]}
    if agents and probe.profile != "llm":
        raise MnemometerError(
            f"condition(s) {', '.join(sorted(agents))} drive an agent, which calls a model: "
            "pass --profile llm (the offline profile makes no provider calls)"
        )
    results: list[RunResult] = []
    for r in range(repeats):
        for name in names:
            store, store_opts, note = stores[name]
            opts = dict(base, condition=name, notes=[note] if note else [])
            shell_opts, item_timeout = shell_run_options(
                probe.items, out, r, store, store_opts, timeout
            )
            opts.update(shell_opts)
            where = (
                {"agent": store, "agent_options": store_opts}
                if name in agents
                else {"dataset": dataset, "store": store, "store_options": store_opts}
            )
            result = run(
                "items",
                **where,
                suite_options=opts,
                out=out / f"{name}-r{r}",
                concurrency=concurrency,
                timeout=item_timeout,
                run_group=group,
                repeat=r,
                progress=progress,
            )
            results.append(result)
            if on_run is not None:
                on_run(result)
    return SuiteRun(group, out, results)
