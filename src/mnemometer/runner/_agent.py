"""Runs that drive an agent (conversation level) instead of a store.

The suite supplies its own items (``suite.dataset()``); the system handed to the suite is an
:class:`~mnemometer.agents.AgentFactory`, from which the suite makes one isolated agent per
item, so items run concurrently without sharing memory.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from mnemometer.errors import MnemometerError, RunLogError
from mnemometer.log._reader import read_header, read_items
from mnemometer.log._schema import RunHeader, SystemRef
from mnemometer.log._writer import write_header
from mnemometer.runner import _env


def agent_options_with_store(
    agent: str, options: dict[str, Any] | None, store: str | None, store_options: dict | None
) -> dict[str, Any]:
    """Fold ``--store``/``--store-option`` into the options of agents that take a store."""
    opts = dict(options or {})
    if store is None and not store_options:
        return opts
    from mnemometer._registry import AGENTS

    params = inspect.signature(AGENTS.load(agent)).parameters
    if "store" not in params:
        raise MnemometerError(f"agent {agent!r} has its own memory; it takes no --store")
    if store is not None:
        opts.setdefault("store", store)
    if store_options:
        opts.setdefault("store_options", dict(store_options))
    return opts


def start_agent_run(
    suite: str,
    agent: str,
    agent_options: dict[str, Any],
    suite_options: dict[str, Any] | None,
    out: str | Path | None,
    llm: Any,
    seed: int,
    run_group: str | None,
    repeat: int,
) -> tuple[Path, RunHeader, Any, Any, Any]:
    """Create the suite, the run directory, the agent factory and the header.

    Returns:
        ``(run_dir, header, suite, factory, dataset)``.
    """
    from mnemometer.agents import create_agent_factory
    from mnemometer.runner._run import _new_run_dir
    from mnemometer.suites import create_suite

    the_suite = create_suite(suite, suite_options)
    make_dataset = getattr(the_suite, "dataset", None)
    if not callable(make_dataset):
        raise MnemometerError(f"suite {suite!r} does not drive agents; use --store")
    ds = make_dataset()
    run_dir = _new_run_dir(out, suite, agent)
    factory = create_agent_factory(agent, agent_options, llm=llm, workdir=run_dir / "agent")
    items = the_suite.plan(ds)
    header = _env.new_header(
        suite=suite,
        the_suite=the_suite,
        dataset=ds,
        dataset_path=None,
        system=system_ref(agent, agent_options, factory),
        seed=seed,
        run_group=run_group,
        repeat=repeat,
        item_count=len(items),
    )
    write_header(run_dir, header)
    return run_dir, header, the_suite, factory, ds


def resume_agent_run(run_dir: Path, llm: Any) -> tuple[RunHeader, Any, Any, Any, dict]:
    """Reopen an agent run: same suite options and agent options, finished items kept."""
    from mnemometer.agents import create_agent_factory
    from mnemometer.suites import create_suite

    header = read_header(run_dir)
    the_suite = create_suite(header.suite, header.suite_options)
    ds = the_suite.dataset()
    if ds.info.content_hash != header.dataset.content_hash:
        raise RunLogError(
            f"{run_dir}: the scenarios changed since the run started; start a new run"
        )
    options = dict(header.system.options)
    options.pop("resolved", None)  # recorded for readers, not factory options
    factory = create_agent_factory(header.system.name, options, llm=llm, workdir=run_dir / "agent")
    done = {r.item_id: r for r in read_items(run_dir) if r.status == "ok"}
    header = header.model_copy(update={"status": "running", "resumes": header.resumes + 1})
    write_header(run_dir, header)
    return header, the_suite, factory, ds, done


def system_ref(name: str, options: dict[str, Any], factory: Any) -> SystemRef:
    """The run header's description of an agent (factory options as given, secrets removed)."""
    from mnemometer.agents._protocol import describe

    cls = type(factory)
    recorded = {**_env.redact(options), "resolved": describe(factory)}
    return SystemRef(
        kind="agent",
        name=name,
        options=recorded,
        implementation=f"{cls.__module__}:{cls.__qualname__}",
        version=_env.distribution_version(factory),
    )


def is_agent_run(run_dir: str | Path) -> bool:
    """True when ``run_dir``'s header says it drove an agent."""
    try:
        return read_header(run_dir).system.kind == "agent"
    except MnemometerError:
        return False
