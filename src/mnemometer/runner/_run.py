"""One run: a suite × a system, start to finish, with one start path and one resume path."""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from mnemometer import _env, _gc, outage, scoring
from mnemometer._registry import SUITES
from mnemometer.datasets._models import Dataset
from mnemometer.envfile import quiet_libraries
from mnemometer.errors import ConsentError, MnemometerError, RunLogError
from mnemometer.log._lock import DirLock
from mnemometer.log._reader import read_header, read_items, upgrade
from mnemometer.log._schema import (
    HEADER_FILE,
    ItemResult,
    RunHeader,
    Summary,
)
from mnemometer.log._writer import ItemWriter, compact_items, write_header, write_summary
from mnemometer.runner._executor import Done, Executor, LocalExecutor
from mnemometer.runner._remote import (
    ItemWork,
    RunUnit,
    ShippedRun,
    check_item_unit,
    remote_checks,
    run_files,
    write_files,
)
from mnemometer.runner._resume import (
    dataset_to_resume,
    llm_change,
    refused,
    registered,
)
from mnemometer.runner._setup import (
    RunResult,
    RunSettings,
    _aborted_start,
    _check_kind,
    _dataset_for,
    _new_run_dir,
    _planned,
    _system_arg,
    _workdir,
    check_llm,
    check_scorable,
    dataset_as_option,
    new_header,
    scoring_of,
    with_llm,
)
from mnemometer.runner._stop import STOPPED, Recorder, item_watched, setup_watched, stop_note
from mnemometer.suites import _index_file, create_suite
from mnemometer.suites._base import (
    Item,
    RunContext,
    Suite,
    consent_note,
    resume_options,
    user_given,
)
from mnemometer.systems import SystemSpec, close


@dataclass
class _Prepared:
    run_dir: Path
    header: RunHeader
    suite: Suite
    spec: SystemSpec
    system: Any
    dataset: Dataset
    items: list[Item]
    options: dict[str, Any] | None = None
    """What built the suite on resume (consent from the resuming caller, not the header)."""


def run(
    suite: str | Suite,
    system: SystemSpec | str | Any = None,
    *,
    store: str | Any = None,
    agent: str | Any = None,
    dataset: str | Path | Dataset | None = None,
    suite_options: dict[str, Any] | None = None,
    out: str | Path | None = None,
    settings: RunSettings | None = None,
    run_group: str | None = None,
    repeat: int = 0,
    limit: int | None = None,
    sample: int | None = None,
) -> RunResult:
    """Run ``suite`` against ``system`` and write a run directory.

    Every finished item is appended to the run log at once; :func:`resume` continues a run
    interrupted at any moment (even by SIGKILL) without losing or repeating an item.

    Args:
        suite: a registered suite name (``retrieval``, ``memtest``, ``scenarios``,
            ``items``) or a suite object.
        system: what is tested: a :class:`~mnemometer.SystemSpec`, a registered store name,
            or an in-process store / agent factory.
        store: instead of ``system``: a store name or an in-process store object
            (``store=MyStore()``).
        agent: instead of ``system``: an agent name or an in-process agent factory.
        dataset: a path, a built-in name or a loaded :class:`Dataset`; suites that bring
            their own items (scenarios, suite directories) take none, and a suite that
            reads its own file (``locomo``, ``longmemeval``, ...) takes its path here.
        suite_options: options for the suite (``top_k``, ``ks``, ``suite_dir``, ...).
        out: run directory to create (default ``runs/<suite>-<system>-<time>``).
        settings: concurrency, timeouts, seed, LLM endpoint, executor, progress. Without
            an endpoint the environment's is used (``MNEMOMETER_LLM_*``).
        run_group: group id shared by repeats (default: a new one).
        repeat: this run's index within its group.
        limit: run only the first ``limit`` items of the plan (recorded; a quick run).
        sample: run a random sample of ``sample`` items, drawn with the settings' seed
            (recorded, like ``limit``; with both, the sample is taken first).

    Raises:
        MnemometerError: bad input (dataset, names, options, run directory).
    """
    settings = with_llm((settings or RunSettings()).checked())
    quiet_libraries()  # before any system's library is imported: nothing reports home
    spec = _system_arg(system, store, agent)
    revision = _env.git_revision_later()  # the header's; git runs while the dataset loads
    if limit is not None and limit < 1:
        raise MnemometerError(f"--limit must be at least 1, got {limit}")
    if sample is not None and sample < 1:
        raise MnemometerError(f"--sample must be at least 1, got {sample}")
    if isinstance(suite, str):
        dataset, suite_options = dataset_as_option(suite, dataset, suite_options)
        # The kind first: a suite's constructor may need an extra the wrong kind never would.
        factory = SUITES.load(suite)
        if isinstance(getattr(factory, "systems", None), frozenset):
            _check_kind(factory, spec)
        the_suite = create_suite(suite, suite_options)
    else:
        the_suite = suite
    _check_kind(the_suite, spec)
    ds, dataset_path = _dataset_for(the_suite, dataset)  # bad data is named first
    check_scorable(the_suite, ds, dataset_path)
    check_llm(the_suite, settings.llm)
    _preflight(settings.executor, the_suite, spec, dataset_path)
    run_dir = _new_run_dir(out, the_suite.name, spec.label)
    with DirLock(run_dir):
        if (run_dir / HEADER_FILE).exists():  # another writer started it meanwhile
            raise MnemometerError(f"{run_dir}: already holds a run; continue it with --resume")
        live = spec.create(_workdir(run_dir, spec), lang=ds.info.language, llm=settings.llm)
        items = _planned(the_suite, ds, limit, sample, settings.seed)
        header = new_header(
            the_suite,
            ds,
            dataset_path,
            spec.ref(live),
            settings,
            run_group=run_group,
            repeat=repeat,
            item_count=len(items),
            notes=list(spec.notes),
            limit=limit,
            sample=sample,
            git_revision=revision,
        )
        write_header(run_dir, header)
        prepared = _Prepared(run_dir, header, the_suite, spec, live, ds, items)
        return _execute(prepared, {}, settings)


def resume(
    run_dir: str | Path,
    *,
    settings: RunSettings | None = None,
    system: Any = None,
    dataset: Dataset | None = None,
    allow_llm_change: bool = False,
    suite_options: dict[str, Any] | None = None,
) -> RunResult:
    """Continue an interrupted run: its configuration comes from its header, consent does not.

    Finished items are kept; the rest run. A run of an in-process system or dataset resumes
    when the same object is passed again (``system=``, ``dataset=``; checked by hash). The
    LLM the run asks (its reader, its judges) is the one it recorded: a resume needs no
    LLM flags, and one that names another model or endpoint is refused unless
    ``allow_llm_change`` (then the run's notes say both were asked).

    A run directory may come from anyone (a shared archive, a downloaded run), so consent
    to run the suite's code, the sandbox and what environment passes in (the suite's
    user-only options: ``allow_shell``, ``isolation``, ``pass_env``, ...) are never taken
    from its header: pass them again in ``suite_options``, as :func:`run` takes them. A
    recorded ``isolation = "bwrap"`` is kept (it only narrows). The header's notes say
    where this resume took each.

    Raises:
        ConsentError: the run executes its suite's commands and ``suite_options`` does not
            say ``allow_shell``; nothing ran.
        RunLogError: not a run directory, its inputs changed since it started, or another
            LLM was asked for without ``allow_llm_change``.
        MnemometerError: ``suite_options`` names an option that is not a user-only one.
    """
    quiet_libraries()
    settings = (settings or RunSettings()).checked()
    path = Path(run_dir)
    if not (path / HEADER_FILE).exists() and _aborted_start(path):
        raise RunLogError(
            f"{path}: the run was killed before it started (no {HEADER_FILE}); start it again "
            "with the same --out"
        )
    if read_header(path).parent is not None:  # a re-scoring: only its scorers run again
        from mnemometer.runner._score import resume_scoring

        return resume_scoring(path, settings)
    with DirLock(path):
        return _resume_locked(path, settings, system, dataset, allow_llm_change, suite_options)


class _OnWorker(LocalExecutor):
    """Local threads inside a Ray task: the run header says the run went through Ray."""

    name = "ray"


def execute_run_unit(unit: RunUnit) -> ShippedRun:
    """On a worker: run (or continue) one run in a scratch directory; ship it back."""
    settings = replace(unit.settings, executor=_OnWorker(), progress=None)
    scratch = Path(tempfile.mkdtemp(prefix="mnemometer-run-"))
    try:
        run_dir = scratch / unit.name
        if unit.existing is not None:
            write_files(run_dir, unit.existing)
            given = user_given(SUITES.load(unit.suite), unit.suite_options)
            resume(run_dir, settings=settings, suite_options=given)
        else:
            run(
                unit.suite,
                unit.spec,
                dataset=unit.dataset,
                suite_options=unit.suite_options,
                out=run_dir,
                settings=settings,
                run_group=unit.run_group,
                repeat=unit.repeat,
                limit=unit.limit,
                sample=unit.sample,
            )
        return ShippedRun(unit.name, run_files(run_dir))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _resume_locked(
    path: Path,
    settings: RunSettings,
    system: Any,
    dataset: Dataset | None,
    allow_llm_change: bool = False,
    given: dict[str, Any] | None = None,
) -> RunResult:
    header = read_header(path)  # as it is now that we hold the lock
    asked = settings.llm
    settings = with_llm(settings, header)
    recorded = {**header.suite_options, **header.suite_inputs}
    options = resume_options(SUITES.load(header.suite), recorded, given)
    try:  # consent is the resuming user's: a suite refuses its commands without it
        the_suite = create_suite(header.suite, options)
    except ConsentError as e:  # with consent given, what suite.toml asks is left
        raise ConsentError(f"{path}: {refused(e, options)}") from None
    changed = llm_change(path, header, asked, the_suite, settings.llm, allow_llm_change)
    upgrade(path)  # new lines are appended in the current schema: the old ones must match
    spec = SystemSpec.from_ref(header.system, header.notes)
    if system is not None:
        spec = spec.with_instance(system)
    elif header.system.implementation and not registered(spec):
        raise RunLogError(
            f"{path}: the system was passed as an object ({header.system.implementation}); "
            "resume with the same object: resume(run_dir, system=obj)"
        )
    check_llm(the_suite, settings.llm)
    ds = dataset_to_resume(path, header, the_suite, dataset)
    _preflight(settings.executor, the_suite, spec, header.dataset.path)
    live = spec.create(_workdir(path, spec), lang=ds.info.language, llm=settings.llm)
    from mnemometer.runner._score import rescore_unscored

    if rescore_unscored(path, header, settings):  # judges that failed: asked again
        notes = [*header.notes, "scorers that failed were asked again on resume"]
        header = header.model_copy(update={"notes": list(dict.fromkeys(notes))})
    results = read_items(path)
    failed = {r.item_id for r in results if r.status != "ok"}
    done = {r.item_id for r in results if r.item_id not in failed}
    executor = (settings.executor or LocalExecutor()).name
    update: dict[str, Any] = {"status": "running", "resumes": header.resumes + 1}
    update["executor"] = executor
    if header.scoring is None:  # a run from before scoring was a stage: its suite's own
        update["scoring"] = scoring_of(the_suite, settings.llm)
    notes = [n for n in (consent_note(header.resumes + 1, the_suite), changed) if n]
    if notes:  # where this resume took consent; an allowed change of LLM
        update["notes"] = [*header.notes, *notes]
    if changed:  # allowed: the header now names what asks from here on, the notes both
        update["scoring"] = scoring_of(the_suite, settings.llm)
        if header.llm is not None and settings.llm is not None:
            update["llm"] = settings.llm.redacted()
    header = header.model_copy(update=update)
    write_header(path, header)
    items = _planned(the_suite, ds, header.limit, header.sample, header.seed)
    prepared = _Prepared(path, header, the_suite, spec, live, ds, items, options)
    return _execute(prepared, done, settings)


def resummarize(run_dir: str | Path) -> Summary:
    """Recompute the run's summary from its items and write ``summary.json``.

    The run's recorded scorers build it (no suite, no system); a run from before scoring
    was a stage is summarised by its suite, so it needs the suite's inputs and extras.
    """
    path = Path(run_dir)
    header = read_header(path)
    suite = None
    if header.scoring is None:
        suite = create_suite(header.suite, {**header.suite_options, **header.suite_inputs})
    with DirLock(path):
        return _summarize(path, header, suite, read_items(path))


def _summarize(
    path: Path,
    header: RunHeader,
    suite: Suite | None,
    results: list[ItemResult],
    stopped: tuple[str, int] | None = None,
) -> Summary:
    legacy = getattr(suite, "summarize", None) if header.scoring is None else None
    summary = scoring.summarize(header, results, path, fallback=legacy)
    if stopped is not None:  # (its note, the items not attempted): what is not in the log
        note, left = stopped
        counts = {**summary.counts, "not_attempted": left}
        summary = summary.model_copy(update={"counts": counts, "notes": [note, *summary.notes]})
    write_summary(path, summary)
    return summary


def _execute(p: _Prepared, done: set[str], settings: RunSettings) -> RunResult:
    t_start = time.perf_counter()
    timings = dict(p.header.timings)
    notes = [n for n in p.header.notes if not n.startswith(STOPPED)]  # resumed: it goes on
    todo = [it for it in p.items if it.id not in done]
    writer = ItemWriter(p.run_dir, fsync=settings.fsync)
    ctx = RunContext(
        p.run_dir,
        p.spec,
        p.header.repeat,
        p.header.seed,
        settings.llm,
        settings.progress,
        pending=frozenset(it.id for it in todo) if done else None,
        planned=frozenset(it.id for it in p.items),
        concurrency=settings.concurrency,
    )
    executor = settings.executor or LocalExecutor()
    timeout = p.suite.item_timeout(settings.timeout)
    work = _item_work(p, settings) if getattr(executor, "remote", False) else None
    watch = outage.Outages()  # an endpoint found down stops the run (see runner/_stop.py)
    try:
        if todo and work is None:  # a remote executor's workers each run setup
            setup = partial(p.suite.setup, p.system, p.dataset, ctx)
            for phase, secs in setup_watched(setup, watch).items():
                timings[phase] = timings.get(phase, 0.0) + secs
        t_items = time.perf_counter()
        total = len(p.items)
        finished = [len(p.items) - len(todo)]

        def write(d: Done[Item]) -> None:
            writer.write_many(_results(p.suite, d, timeout))  # one write: whole or cut
            if d.attempts > 1 or d.lost:
                notes.append(_retry_note(executor.name, d))
            finished[0] += 1
            if settings.progress is not None:
                settings.progress("items", finished[0], total)

        record = Recorder(write, watch)  # nothing that met a dead endpoint is written
        fn = work if work is not None else item_watched(partial(p.suite.run_item, p.system), watch)
        with _gc.frozen():  # collections during the items skip what setup loaded
            executor.map(
                fn,
                todo,
                record,
                concurrency=settings.concurrency,
                timeout=timeout,
            )
        record.finish()
        timings["items"] = timings.get("items", 0.0) + time.perf_counter() - t_items
        for phase, secs in (work.timings() if work is not None else {}).items():
            timings[phase] = timings.get(phase, 0.0) + secs
    except KeyboardInterrupt:
        # Ctrl-C: every finished item is in the log; the header says the run stopped here.
        write_header(p.run_dir, p.header.model_copy(update={"status": "interrupted"}))
        raise RunInterrupted(p.run_dir) from None
    finally:
        writer.close()
        p.suite.teardown()
    timings["total"] = timings.get("total", 0.0) + time.perf_counter() - t_start
    if watch.first is not None:  # still running: the items left wait for --resume
        left = len(todo) - record.written
        stopped = stop_note(watch.first, left, len(p.items), p.run_dir)
        header = p.header.model_copy(update={"timings": timings, "notes": [*notes, stopped]})
        summary = _summarize(p.run_dir, header, p.suite, read_items(p.run_dir), (stopped, left))
        write_header(p.run_dir, header)
        if p.spec.instance is None:
            close(p.system)
        return RunResult(p.run_dir, header, summary)
    header = p.header.model_copy(update={"status": "finished", "timings": timings, "notes": notes})
    # The summary and the suite's files first, the header last: a run whose header says
    # finished has all of them, and one killed before that resumes to write them.
    results = read_items(p.run_dir)
    compact_items(p.run_dir, results)  # a retried item's stale lines go
    summary = _summarize(p.run_dir, header, p.suite, results)
    p.suite.write_outputs(p.run_dir, header, summary)
    write_header(p.run_dir, header)
    _index_file.discard_index(p.run_dir)  # only an unfinished run needs its saved index
    if p.spec.instance is None:  # objects passed in are the caller's to close
        close(p.system)
    return RunResult(p.run_dir, header, summary)


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run; its directory resumes it (``mnemometer run --resume``)."""

    def __init__(self, run_dir: Path) -> None:
        super().__init__(str(run_dir))
        self.run_dir = run_dir


def _item_work(p: _Prepared, settings: RunSettings) -> ItemWork:
    """The item unit's recipe for workers in other processes (the dataset travels along)."""
    own = p.suite.dataset() is not None
    return ItemWork(
        p.suite.name,
        p.options if p.options is not None else {**p.header.suite_options, **p.header.suite_inputs},
        p.spec,
        None if own else p.dataset,
        p.header.repeat,
        p.header.seed,
        settings.llm,
    )


def _retry_note(executor: str, d: Done[Item]) -> str:
    outcome = "failed" if d.error is not None or d.timed_out else "finished"
    why = d.lost[-1] if d.lost else "worker lost"
    return (
        f"{executor}: item {d.item.id} {outcome} after {d.attempts} attempts "
        f"(retried elsewhere: {why})"
    )


def _preflight(
    executor: Executor | None, suite: Suite, spec: SystemSpec, dataset_path: str | None
) -> None:
    """Before anything is written: a remote executor can run this suite and system."""
    if executor is None or not getattr(executor, "remote", False):
        return
    check_item_unit(suite)
    systems, paths = remote_checks(spec, [dataset_path, *suite.inputs().values()])
    executor.preflight(systems, paths)  # type: ignore[attr-defined]


def _results(suite: Suite, d: Done[Item], timeout: float | None) -> list[Any]:
    """The log lines of one finished item (several for a multi-step item)."""
    if d.timed_out:
        return [_as_failure(suite.failed(d.item, f"timed out after {timeout:g} s", "timeout"))]
    if d.error is not None:
        return [_as_failure(suite.failed(d.item, f"{type(d.error).__name__}: {d.error}", "error"))]
    out = d.result
    if isinstance(out, ItemResult | dict):
        return [out]
    update = {"index": d.item.index, "steps": len(out)}
    return [{**r, **update} if isinstance(r, dict) else r.model_copy(update=update) for r in out]


def _as_failure(result: ItemResult) -> ItemResult:
    return result.model_copy(update={"success": False})
