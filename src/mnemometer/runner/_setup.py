"""What a run starts from: its settings, dataset, system, header and run directory."""

from __future__ import annotations

import os
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mnemometer import _env
from mnemometer._gc import paused
from mnemometer.datasets._io import BUILTIN, load_dataset
from mnemometer.datasets._models import Dataset
from mnemometer.errors import DatasetError, MnemometerError
from mnemometer.log._lock import LOCK_FILE, DirectoryLocked, holder, out_dir
from mnemometer.log._schema import (
    HEADER_FILE,
    DatasetRef,
    RunHeader,
    ScoringRecord,
    Summary,
    SystemRef,
)
from mnemometer.runner._executor import Executor, LocalExecutor
from mnemometer.runner._stop import stop_reason
from mnemometer.suites._base import Item, Suite
from mnemometer.systems import SystemSpec

ProgressFn = Callable[[str, int, int | None], None]
"""Called with ``(phase, done, total)``: ``index``/``ingest``/... while a suite sets up,
then ``items`` after every item (``total`` ``None`` when unknown)."""


@dataclass(frozen=True)
class RunSettings:
    """How a run executes; none of it changes the measurements except ``seed``.

    Attributes:
        concurrency: items in flight at once; also the conversations a suite fills at
            once in setup (one store each, see :class:`~mnemometer.suites.RunContext`).
        timeout: seconds allowed per item call; ``None`` for no limit.
        seed: seed for anything random in the run (recorded).
        fsync: fsync the log after every item (survives power loss, not only kills).
        llm: :class:`~mnemometer.llm.LLMSettings` for the suites, stores and agents that
            ask a model (``None``: resolved where the run starts, see :func:`with_llm`).
        executor: where items run (default: local threads).
        progress: called with ``(phase, done, total)`` as work advances (see
            :data:`ProgressFn`).
        prices: a price file (TOML or JSON) over LiteLLM's bundled price map: the run's
            dollars, never its measurements (:mod:`mnemometer.llm._prices`).
    """

    concurrency: int = 1
    timeout: float | None = 60.0
    seed: int = 0
    fsync: bool = False
    llm: Any = None
    executor: Executor | None = None
    progress: ProgressFn | None = None
    prices: str | Path | None = None

    def checked(self) -> RunSettings:
        """Validated settings (a timeout of 0 or less means no limit).

        Raises:
            MnemometerError: a concurrency below 1.
        """
        if self.concurrency < 1:
            raise MnemometerError(f"--concurrency must be at least 1, got {self.concurrency}")
        if self.timeout is not None and self.timeout <= 0:
            return RunSettings(**{**self.__dict__, "timeout": None})
        return self


@dataclass(frozen=True)
class RunResult:
    """What :func:`run` returns."""

    path: Path
    """The run directory."""
    header: RunHeader
    """The final header."""
    summary: Summary
    """Aggregated results (also in ``summary.json``)."""

    def to_pandas(self) -> Any:
        """One row per item result (needs ``pip install 'mnemometer[analysis]'``)."""
        from mnemometer.log._reader import read_log

        return read_log(self.path).to_pandas()

    @property
    def failed_memories(self) -> int:
        """Memories whose ingest failed (the run went on; the queries that need them say so)."""
        return self.summary.counts.get("ingest_failures", 0)

    @property
    def stopped(self) -> str | None:
        """Why the run stopped before its end (an endpoint it asks went down), or ``None``.

        The items it did not reach were not attempted: they are neither failures nor
        results, and :func:`resume` runs them once the endpoint is back.
        """
        return stop_reason(self.header.notes)

    @property
    def failed_items(self) -> int:
        """Items that errored or timed out, and verdicts a judge could not give."""
        c = self.summary.counts
        return c.get("errors", 0) + c.get("timeouts", 0) + c.get("judge_errors", 0)

    def __repr__(self) -> str:
        """``RunResult(runs/x: retrieval on demo-en, hit@20 0.846 [0.578, 0.957], 15 items)``."""
        h = self.summary.headline
        lead = "no headline"
        if h is not None and h.value is not None:
            lead = f"{h.label} {h.value:.3f}"
            iv = h.interval
            if iv is not None and iv.low is not None and iv.high is not None:
                lead += f" [{iv.low:.3f}, {iv.high:.3f}]"
        items = self.summary.counts.get("items", self.header.item_count)
        failed = f", {self.failed_items} failed" if self.failed_items else ""
        return (
            f"RunResult({self.path}: {self.header.suite} on {self.header.dataset.name}, "
            f"{lead}, {items} items{failed})"
        )

    def table(self) -> str:
        """The run's text report (what ``mnemometer report RUN`` prints)."""
        # The report layer sits above the runner: its text renderer is found by its
        # registered name (it reads only path, header and summary, which a result has).
        from mnemometer._registry import Registry

        return Registry("mnemometer.renderers", "renderer").load("run.text")(self)

    def _repr_html_(self) -> str:
        """A notebook's view: the headline and every overall metric, as a small table."""
        from html import escape

        rows = "".join(
            f"<tr><td>{escape(m.key)}</td><td>{'' if m.value is None else f'{m.value:.4g}'}"
            f"</td><td>{'' if m.n is None else m.n}</td></tr>"
            for m in self.summary.overall
            if m.percentile is None
        )
        return (
            f"<p><b>{escape(repr(self))}</b></p><table><thead><tr><th>metric</th>"
            f"<th>value</th><th>n</th></tr></thead><tbody>{rows}</tbody></table>"
        )


def with_llm(settings: RunSettings, header: RunHeader | None = None) -> RunSettings:
    """The settings with the run's LLM endpoint resolved: the one place a run reads it.

    The caller's (a flag, ``RunSettings(llm=...)``), else the endpoint a resumed run
    recorded (``header``; its key from the environment), else the environment's
    (``MNEMOMETER_LLM_*``, the ``.env`` the command line loaded). ``llm`` stays ``None``
    when none is configured: a part that needs one says which flag to pass.
    """
    if settings.llm is not None:
        return settings
    recorded = _recorded_llm(header) if header is not None else {}
    if not recorded.get("base_url") and not os.environ.get("MNEMOMETER_LLM_BASE_URL"):
        return settings  # no base URL anywhere (find_settings' None): mnemometer.llm not imported
    from dataclasses import replace

    from mnemometer.llm._settings import find_settings

    llm = find_settings(
        base_url=recorded.get("base_url"),
        model=recorded.get("model"),
        timeout=recorded.get("timeout"),
        max_retries=recorded.get("max_retries"),
    )
    return settings if llm is None else replace(settings, llm=llm)


def _recorded_llm(header: RunHeader) -> dict[str, Any]:
    """The endpoint the run recorded (base URL, model, timeout, retries; never the key).

    A suite's own (``header.llm``: a benchmark's reader), else an agent's.
    """
    if _reachable(header.llm):
        return header.llm  # type: ignore[return-value]
    resolved = header.system.options.get("resolved")
    llm = resolved.get("llm") if isinstance(resolved, dict) else None
    return llm if _reachable(llm) else {}


def _reachable(llm: Any) -> bool:
    """A recorded endpoint names a model and where to ask it (a provider's needs no URL)."""
    return (
        isinstance(llm, dict)
        and bool(llm.get("model"))
        and bool(llm.get("base_url") or llm.get("provider"))
    )


def new_header(
    suite: Suite,
    dataset: Dataset,
    dataset_path: str | None,
    system: SystemRef,
    settings: RunSettings,
    *,
    run_group: str | None,
    repeat: int,
    item_count: int,
    notes: list[str],
    limit: int | None = None,
    sample: int | None = None,
    git_revision: Callable[[], str | None] = _env.git_revision,
) -> RunHeader:
    """The header of a new run: what determines its numbers, plus the environment.

    ``git_revision`` answers the work tree's revision (:func:`_env.git_revision_later`
    lets git run while the caller loads).
    """
    info = dataset.info
    options = suite.options()
    asks = settings.llm is not None and getattr(suite, "needs_llm", False)
    header = RunHeader(
        scoring=scoring_of(suite, settings.llm),
        llm=settings.llm.redacted() if asks else None,
        run_id=uuid.uuid4().hex[:12],
        run_group=run_group or uuid.uuid4().hex[:12],
        repeat=repeat,
        suite=suite.name,
        suite_version=suite.version,
        suite_options=options,
        suite_inputs=suite.inputs(),
        success_definition=suite.success_definition,
        dataset=DatasetRef(
            name=info.name,
            version=info.version,
            content_hash=info.content_hash or "",
            language=info.language,
            path=dataset_path,
            reference_time=info.reference_time,
            notes=info.notes,
        ),
        system=system,
        seed=settings.seed,
        config_fingerprint=_env.fingerprint(
            [suite.name, options, system.name, system.options, system.condition, info.content_hash]
        ),
        package_version=_env.package_version(),
        python_version=_env.python_version(),
        platform=_env.platform_name(),
        git_revision=git_revision(),
        created_at=datetime.now(UTC),
        item_count=item_count,
        limit=limit,
        sample=sample,
        executor=(settings.executor or LocalExecutor()).name,
        notes=notes,
    )
    from mnemometer.runner._prices import cost_record

    return header.model_copy(update={"cost": cost_record(header, settings.llm, settings.prices)})


def scoring_of(suite: Suite, llm: Any) -> ScoringRecord | None:
    """The scoring a suite declares for a run with LLM settings ``llm``.

    ``None`` for a suite written before scoring was a stage (it summarises itself).
    """
    declare = getattr(suite, "scoring", None)
    return None if declare is None else declare(llm)


def _planned(
    suite: Suite, dataset: Dataset, limit: int | None, sample: int | None, seed: int
) -> list[Item]:
    """The suite's plan for ``dataset``, sampled and limited (:func:`_limited`)."""
    with paused():  # a plan is thousands of small items and no cycles
        return _limited(suite.plan(dataset), limit, sample, seed)


def _limited(
    items: list[Item], limit: int | None, sample: int | None = None, seed: int = 0
) -> list[Item]:
    """A seeded random ``sample`` of the plan, then its first ``limit`` items in plan order.

    The sample depends only on the seed and the plan's item ids, never on the run order.
    """
    if sample is not None and sample < len(items):
        rng = random.Random(f"mnemometer-sample/{seed}")
        ordered = sorted(items, key=lambda it: it.index)
        picked = {it.id for it in rng.sample(ordered, sample)}
        items = [it for it in items if it.id in picked]
    if limit is None:
        return items
    return sorted(sorted(items, key=lambda it: it.index)[:limit], key=items.index)


def _check_kind(suite: Suite | type[Suite], spec: SystemSpec) -> None:
    """Fail early (before the suite loads models) when the system is of the wrong kind."""
    if spec.kind in suite.systems:
        return
    if suite.systems == {"agent"}:
        raise MnemometerError(
            f"suite {suite.name!r} drives agents: pass --agent NAME (e.g. --agent rag "
            "--store bm25 gives a store an LLM to answer with)"
        )
    raise MnemometerError(f"suite {suite.name!r} drives stores: pass --store NAME, not --agent")


def dataset_as_option(
    suite: str, dataset: Any, options: dict[str, Any] | None
) -> tuple[Any, dict[str, Any]]:
    """``dataset`` and the suite's options, the file moved into them for a suite that reads it.

    A benchmark suite (``reads_dataset``) loads, checks and streams its file itself, so
    ``--dataset`` / ``dataset=`` is its ``dataset`` option; other suites are given it as is.

    Raises:
        MnemometerError: a loaded :class:`Dataset` for such a suite, or two different files.
    """
    options = dict(options or {})
    if dataset is None or not _reads_dataset(suite):
        return dataset, options
    if isinstance(dataset, Dataset):
        raise MnemometerError(
            f"suite {suite!r} reads its own file: pass dataset=PATH, not a loaded dataset"
        )
    path = str(Path(dataset).resolve())
    if options.get("dataset") is not None and str(Path(options["dataset"]).resolve()) != path:
        raise MnemometerError(
            f"suite {suite!r} was given two files: {dataset} and dataset={options['dataset']}"
        )
    return None, {**options, "dataset": path}


def _reads_dataset(name: str) -> bool:
    from mnemometer._registry import SUITES

    try:
        return bool(getattr(SUITES.load(name), "reads_dataset", False))
    except MnemometerError:
        return False  # an unknown suite: creating it says so


def check_llm(suite: Suite, llm: Any) -> None:
    """Before anything is written: a suite that asks a model (``needs_llm``) has an endpoint.

    Raises:
        LLMError: none configured, naming the flag and the variable.
    """
    if llm is None and getattr(suite, "needs_llm", False):
        from mnemometer.llm import NO_ENDPOINT, LLMError

        raise LLMError(f"suite {suite.name!r} asks an LLM: {NO_ENDPOINT}")


def check_scorable(suite: Suite, dataset: Any, path: str | None = None) -> None:
    """Before anything is written: the suite can score the dataset (its ``cannot_score`` says).

    Args:
        suite: the suite.
        dataset: a loaded :class:`Dataset` (its file is ``path``), or a file or built-in name
            (an experiment's, a sweep's), loaded only for a suite that can refuse one.
        path: the loaded dataset's file or built-in name, for the message.

    Raises:
        DatasetError: one line naming the file, the reason, and the suite that reads the
            file when one does (a LoCoMo file for ``memtest``: ``run locomo``).
    """
    from mnemometer.suites._base import BaseSuite

    check = getattr(type(suite), "cannot_score", BaseSuite.cannot_score)
    if dataset is None or check is BaseSuite.cannot_score:
        return  # the default accepts any dataset: nothing to load
    if not isinstance(dataset, Dataset):
        dataset, path = _dataset_for(suite, dataset)
    reason = check(suite, dataset)
    if not reason:
        return
    where = path or f"dataset {dataset.info.name!r}"
    fix = ""
    if path is not None and Path(path).is_file():
        from mnemometer._registry import SUITES
        from mnemometer.datasets._readers import detect_reader

        found = detect_reader(Path(path))
        if found is not None and found.name != suite.name and found.name in SUITES.names():
            fix = f"; run `mnemometer run {found.name} --dataset {path}`"
    raise DatasetError(f"{where}: suite {suite.name!r} cannot score it: {reason}{fix}")


def _dataset_for(suite: Suite, dataset: str | Path | Dataset | None) -> tuple[Dataset, str | None]:
    own = suite.dataset()
    if own is not None:
        if dataset is not None:
            raise MnemometerError(
                f"suite {suite.name!r} brings its own items; --dataset does not apply"
            )
        if own.info.content_hash is None:  # recorded, so a resume can check it
            own.with_hash()
        return own, None
    if dataset is None:
        raise MnemometerError(
            f"a run of suite {suite.name!r} needs --dataset (a file or "
            "a built-in name such as demo-en)"
        )
    if isinstance(dataset, Dataset):
        if dataset.info.content_hash is None:
            dataset.with_hash()
        return dataset, None
    s = str(dataset)
    return load_dataset(dataset), s if s in BUILTIN else str(Path(s).resolve())


def _workdir(run_dir: Path, spec: SystemSpec) -> Path:
    return run_dir / spec.kind


_LEFTOVERS = {LOCK_FILE, "store", "agent", HEADER_FILE + ".tmp"}
"""What a run killed before its header was written can leave (its lock, its system's files)."""


def _aborted_start(path: Path) -> bool:
    """True for a directory left by a run killed before its header: only its leftovers."""
    if not path.is_dir() or not (path / LOCK_FILE).exists() or holder(path) is not None:
        return False
    return {p.name for p in path.iterdir()} <= _LEFTOVERS


def _system_arg(system: Any, store: Any, agent: Any) -> SystemSpec:
    """The one system ``run`` was given, positionally or as ``store=`` / ``agent=``."""
    given = [x for x in (system, store, agent) if x is not None]
    if len(given) != 1:
        what = "no system" if not given else "more than one system"
        raise MnemometerError(
            f"{what} to run: pass one of a store or agent positionally, store=... "
            "(a name or an object with reset/store/search) or agent=... (a name or a factory)"
        )
    if isinstance(store, str):
        return SystemSpec.store(store)
    if isinstance(agent, str):
        return SystemSpec.agent(agent)
    return SystemSpec.of(given[0])


def default_out(*names: str) -> Path:
    """``runs/NAME-...-STAMP-XXXX``: where a run or experiment goes without ``--out``."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    return Path("runs") / "-".join([*names, stamp, uuid.uuid4().hex[:4]])


def check_unlocked(path: Path) -> None:
    """Refuse a directory another live process is writing.

    Raises:
        DirectoryLocked: naming the holder.
    """
    if (who := holder(path)) is not None:
        raise DirectoryLocked(f"{path}: is being written by {who}; choose another --out")


def _new_run_dir(out: str | Path | None, suite: str, label: str) -> Path:
    path = out_dir(out if out is not None else default_out(suite, label), "run directory")
    if path.exists() and any(path.iterdir()):
        check_unlocked(path)
        if not _aborted_start(path):
            raise MnemometerError(
                f"{path}: already exists and is not empty; choose another --out, "
                "or continue it with --resume"
            )
        _clear(path)  # a start killed before its header: begin again
    path.mkdir(parents=True, exist_ok=True)
    return path


def _clear(path: Path) -> None:
    import shutil

    for p in path.iterdir():
        if p.name == LOCK_FILE:
            continue  # the next writer takes a stale lock over
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()
