"""The runner: drives a system over a suite's items and writes the run log."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mnemometer.datasets._io import load_dataset
from mnemometer.datasets._models import Dataset
from mnemometer.errors import MnemometerError, RunLogError
from mnemometer.log._reader import read_header, read_items
from mnemometer.log._schema import ItemResult, RunHeader, Summary, SystemRef
from mnemometer.log._writer import ItemWriter, write_header
from mnemometer.runner import _agent, _env
from mnemometer.runner._pool import Done, execute
from mnemometer.stores._factory import create_store
from mnemometer.stores._protocol import capabilities
from mnemometer.suites import create_suite
from mnemometer.suites._base import Item, Suite


@dataclass(frozen=True)
class RunResult:
    """What :func:`run` returns."""

    path: Path
    """The run directory."""
    header: RunHeader
    """The final header."""
    summary: Summary
    """Aggregated results."""

    @property
    def failed_items(self) -> int:
        """Items that errored or timed out."""
        return self.summary.counts.get("errors", 0) + self.summary.counts.get("timeouts", 0)


ProgressFn = Callable[[int, int], None]


def run(
    suite: str = "retrieval",
    *,
    dataset: str | Path | Dataset | None = None,
    store: str | None = None,
    store_options: dict[str, Any] | None = None,
    suite_options: dict[str, Any] | None = None,
    agent: str | None = None,
    agent_options: dict[str, Any] | None = None,
    llm: Any = None,
    out: str | Path | None = None,
    concurrency: int = 1,
    timeout: float | None = 60.0,
    resume: str | Path | None = None,
    seed: int = 0,
    run_group: str | None = None,
    repeat: int = 0,
    fsync: bool = False,
    progress: ProgressFn | None = None,
) -> RunResult:
    """Run ``suite`` over ``dataset`` against ``store`` and write a run directory.

    Every finished item is appended to the run log at once. ``resume=RUN_DIR`` continues
    a run that was interrupted (even by SIGKILL): the configuration comes from its header,
    finished items are kept and only the rest are run.

    Args:
        suite: registered suite name.
        dataset: a path, a built-in dataset name, or a loaded :class:`Dataset`.
        store: registered store name.
        store_options: options for the store's factory.
        suite_options: options for the suite (``top_k``, ``ks``, ...).
        agent: registered agent name; the run drives an agent (``system.kind="agent"``)
            over the suite's own items. ``store``/``store_options`` then configure agents
            that take a store (``rag``).
        agent_options: options for the agent factory.
        llm: :class:`~mnemometer.llm.LLMSettings` for agents that ask an LLM (default:
            the environment).
        out: run directory to create (default ``runs/<suite>-<store>-<time>``).
        concurrency: items in flight at once.
        timeout: seconds allowed per item call; ``None`` for no limit.
        resume: an existing run directory to continue.
        seed: recorded seed for anything random.
        run_group: group id shared by repeats (default: a new one).
        repeat: repeat index within the group.
        fsync: fsync after every item (survives power loss; slower).
        progress: called with ``(done, total)`` after each item.

    Raises:
        MnemometerError: bad input (dataset, names, options, run directory).
    """
    if concurrency < 1:
        raise MnemometerError(f"--concurrency must be at least 1, got {concurrency}")
    if timeout is not None and timeout <= 0:
        timeout = None
    if resume is not None:
        if agent is not None or _agent.is_agent_run(resume):
            header, the_suite, factory, ds, done = _agent.resume_agent_run(Path(resume), llm)
            items = the_suite.plan(ds)
            return _execute(
                Path(resume),
                header,
                the_suite,
                factory,
                ds,
                items,
                done,
                concurrency,
                timeout,
                fsync,
                progress,
            )
        return _resume(Path(resume), concurrency, timeout, fsync, progress)
    if agent is not None:
        opts = _agent.agent_options_with_store(agent, agent_options, store, store_options)
        run_dir, header, the_suite, factory, ds = _agent.start_agent_run(
            suite, agent, opts, suite_options, out, llm, seed, run_group, repeat
        )
        items = the_suite.plan(ds)
        return _execute(
            run_dir,
            header,
            the_suite,
            factory,
            ds,
            items,
            {},
            concurrency,
            timeout,
            fsync,
            progress,
        )
    if dataset is None or store is None:
        raise MnemometerError("a run needs --dataset and --store (or --resume RUN_DIR)")
    ds = dataset if isinstance(dataset, Dataset) else load_dataset(dataset)
    if ds.info.content_hash is None:
        ds.with_hash()
    the_suite = create_suite(suite, suite_options)
    run_dir = _new_run_dir(out, suite, store)
    system = create_store(store, store_options, lang=ds.info.language, workdir=run_dir / "store")
    items = the_suite.plan(ds)
    header = _env.new_header(
        suite=suite,
        the_suite=the_suite,
        dataset=ds,
        dataset_path=None if isinstance(dataset, Dataset) else _dataset_path(dataset),
        system=_system_ref(store, dict(store_options or {}), system),
        seed=seed,
        run_group=run_group,
        repeat=repeat,
        item_count=len(items),
    )
    write_header(run_dir, header)
    return _execute(
        run_dir, header, the_suite, system, ds, items, {}, concurrency, timeout, fsync, progress
    )


def _resume(
    run_dir: Path, concurrency: int, timeout: float | None, fsync: bool, progress: ProgressFn | None
) -> RunResult:
    header = read_header(run_dir)
    if header.dataset.path is None:
        raise RunLogError(f"{run_dir}: the dataset was passed in memory; it cannot be resumed")
    ds = load_dataset(header.dataset.path)
    if ds.info.content_hash != header.dataset.content_hash:
        raise RunLogError(
            f"{run_dir}: dataset {header.dataset.path} changed since the run started "
            "(content hash differs); start a new run"
        )
    the_suite = create_suite(header.suite, header.suite_options)
    system = create_store(
        header.system.name, header.system.options, lang=ds.info.language, workdir=run_dir / "store"
    )
    done = {r.item_id: r for r in read_items(run_dir) if r.status == "ok"}
    header = header.model_copy(update={"status": "running", "resumes": header.resumes + 1})
    write_header(run_dir, header)
    items = the_suite.plan(ds)
    return _execute(
        run_dir, header, the_suite, system, ds, items, done, concurrency, timeout, fsync, progress
    )


def _execute(
    run_dir: Path,
    header: RunHeader,
    suite: Suite,
    system: Any,
    ds: Dataset,
    items: list[Item],
    done: dict[str, ItemResult],
    concurrency: int,
    timeout: float | None,
    fsync: bool,
    progress: ProgressFn | None,
) -> RunResult:
    t_start = time.perf_counter()
    timings = dict(header.timings)
    todo = [it for it in items if it.id not in done]
    writer = ItemWriter(run_dir, fsync=fsync)
    try:
        if todo:
            for phase, secs in suite.setup(system, ds).items():
                timings[phase] = timings.get(phase, 0.0) + secs
        t_items = time.perf_counter()
        total = len(items)
        run_item = suite.run_item
        state = {"finished": len(done)}

        def record(d: Done[Item]) -> None:
            if d.timed_out:
                result = suite.failed(d.item, f"timed out after {timeout:g} s", "timeout")
            elif d.error is not None:
                result = suite.failed(d.item, f"{type(d.error).__name__}: {d.error}", "error")
            else:
                result = d.result
            # An item may carry sub-results (a build sequence's steps): logged after it.
            # (Plain-data results, the fast path, carry none.)
            subs = (
                result.extra.pop("sub_results", None) or []
                if isinstance(result, ItemResult)
                else []
            )
            writer.write(result)
            for sub in subs:
                writer.write(sub.model_copy(update={"index": result.index}))
            state["finished"] += 1
            if progress is not None:
                progress(state["finished"], total)

        execute(lambda it: run_item(system, it), todo, record, concurrency, timeout)
        timings["items"] = timings.get("items", 0.0) + time.perf_counter() - t_items
    finally:
        writer.close()
    timings["total"] = timings.get("total", 0.0) + time.perf_counter() - t_start
    header = header.model_copy(update={"status": "finished", "timings": timings})
    write_header(run_dir, header)
    results = read_items(run_dir)
    summary = suite.summarize(header, results)
    write_outputs = getattr(suite, "write_outputs", None)  # e.g. the scenarios CSV
    if callable(write_outputs):
        write_outputs(run_dir, header, summary)
    close = getattr(system, "close", None) if header.system.kind == "agent" else None
    if callable(close):
        close()
    return RunResult(run_dir, header, summary)


def _new_run_dir(out: str | Path | None, suite: str, store: str) -> Path:
    if out is None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        out = Path("runs") / f"{suite}-{store}-{stamp}-{uuid.uuid4().hex[:4]}"
    path = Path(out)
    if path.exists() and any(path.iterdir()):
        raise MnemometerError(
            f"{path}: already exists and is not empty; choose another --out, "
            "or continue it with --resume"
        )
    path.mkdir(parents=True, exist_ok=True)
    return path


def _dataset_path(dataset: str | Path) -> str:
    from mnemometer.datasets._io import BUILTIN

    s = str(dataset)
    return s if s in BUILTIN else str(Path(s).resolve())


def _system_ref(name: str, options: dict[str, Any], system: Any) -> SystemRef:
    cls = type(system)
    # A store may resolve its options (a model path, a language fallback); recording the
    # resolved values makes the log say what ran, and they stay valid factory options.
    resolved = getattr(system, "resolved_options", None)
    if callable(resolved):
        options = {**options, **resolved()}
    return SystemRef(
        kind="store",
        name=name,
        options=_env.redact(options),
        implementation=f"{cls.__module__}:{cls.__qualname__}",
        version=_env.distribution_version(system),
        capabilities=capabilities(system),
    )


def summarize(run_dir: str | Path) -> Summary:
    """Aggregate a run directory's items with its suite's own summary."""
    header = read_header(run_dir)
    suite = create_suite(header.suite, header.suite_options)
    return suite.summarize(header, read_items(run_dir))
