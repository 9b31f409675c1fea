"""Work units for executors in other processes (Ray): what is shipped, and what comes back.

Nothing live crosses a process boundary: a worker is given picklable recipes (a suite name
and options, a :class:`~mnemometer.systems.SystemSpec`, the dataset) and builds the suite and
the system where it runs. Results come back to the driver, which alone writes run logs.

Two units (``docs/design/executors.md`` says which is used when, and why):

- :class:`ItemWork`, the **item** unit: each worker builds the suite and the system once
  (``setup``: the store is rebuilt from the dataset) and runs items; the driver appends each
  result to the run log as it arrives. Correct only for suites whose items do not depend on
  state shared between items (:func:`check_item_unit` refuses the others).
- :class:`RunUnit`, the **run** unit: a whole run (or the rest of an interrupted one) runs
  in a scratch directory on a worker, and its run directory is shipped back as bytes
  (``_run.execute_run_unit``, which runs it like any run) for the driver to write
  (:func:`write_shipped`). No shared storage is needed for the logs.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemometer._registry import SUITES
from mnemometer.datasets._models import Dataset
from mnemometer.errors import MnemometerError
from mnemometer.log._reader import read_header
from mnemometer.log._schema import HEADER_FILE, ITEMS_FILE, SUMMARY_FILE
from mnemometer.log._writer import write_header
from mnemometer.suites import create_suite
from mnemometer.suites._base import Item, RunContext, Suite
from mnemometer.suites._index_file import INDEX_DIR
from mnemometer.systems import SystemSpec, close

SYSTEM_DIRS = ("store", "agent", "isolated", INDEX_DIR, INDEX_DIR + ".tmp")
"""Where a run keeps the system's own files (an index, a database, a saved index): not part
of the run log, not shipped back."""


def check_item_unit(suite: Suite) -> None:
    """Refuse a suite whose items cannot be spread over workers that each ran ``setup``.

    A suite says so itself (``independent_items``); the runner names no suite.

    Raises:
        MnemometerError: the suite does not declare independent items (they may share a
            store an access schedule changes, one seeded agent or workspaces), naming the
            way to run it on Ray anyway.
    """
    if getattr(suite, "independent_items", False) is True:
        return
    raise MnemometerError(
        f"suite {suite.name!r} cannot spread its items over Ray workers: its items depend on "
        "state shared between them (one store or agent that items change, shared "
        "workspaces), so each worker rebuilding it would not measure the same thing. Run "
        "it as whole runs instead: an experiment (--condition/--repeat) or `mnemometer "
        "sweep` sends each run to one worker. Suites that spread items: "
        f"{', '.join(_independent_suites()) or 'none installed'}"
    )


def _independent_suites() -> list[str]:
    """Registered suites that declare ``independent_items = True`` (those that load)."""
    names = []
    for name in SUITES.names():
        try:
            factory = SUITES.load(name)
        except MnemometerError:  # a broken plug-in or a missing extra spreads nothing
            continue
        if getattr(factory, "independent_items", False) is True:
            names.append(name)
    return names


@dataclass
class ItemWork:
    """The item unit's recipe: build the suite and the system on a worker, then run items.

    Pickled once per map; the live suite and system exist only on the worker (never
    pickled: :meth:`__getstate__` drops them).
    """

    suite: str
    suite_options: dict[str, Any]
    spec: SystemSpec
    dataset: Dataset | None
    repeat: int = 0
    seed: int = 0
    llm: Any = None
    setups: list[dict[str, float]] = field(default_factory=list)
    _live: Any = field(default=None, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_live": None, "setups": []}

    def setup(self) -> dict[str, float]:
        """Build the suite and the system in a scratch directory and run the suite's setup."""
        suite = create_suite(self.suite, self.suite_options)
        ds = suite.dataset() or self.dataset
        if ds is None:
            raise MnemometerError(f"suite {self.suite!r} needs a dataset on the worker")
        workdir = Path(tempfile.mkdtemp(prefix="mnemometer-worker-"))
        system = self.spec.create(workdir / self.spec.kind, lang=ds.info.language, llm=self.llm)
        self._live = (suite, system, workdir)
        ctx = RunContext(workdir, self.spec, self.repeat, self.seed, self.llm)
        return dict(suite.setup(system, ds, ctx))

    def __call__(self, item: Item) -> Any:
        """Run one item on this worker's system."""
        suite, system, _ = self._live
        return suite.run_item(system, item)

    def teardown(self) -> None:
        """Release the suite's and the system's resources and the scratch directory."""
        if self._live is None:
            return
        suite, system, workdir = self._live
        self._live = None
        try:
            suite.teardown()
            close(system)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def record_setup(self, timings: dict[str, float]) -> None:
        """In the driver: keep each worker's setup timings."""
        self.setups.append(dict(timings))

    def timings(self) -> dict[str, float]:
        """Setup phases over the workers: the slowest worker's (they run in parallel)."""
        out: dict[str, float] = {}
        for t in self.setups:
            for phase, secs in t.items():
                out[phase] = max(out.get(phase, 0.0), secs)
        return out


@dataclass(frozen=True)
class RunUnit:
    """The run unit: one run of an experiment or a sweep, to start or to continue.

    Attributes:
        name: the run directory's path relative to the experiment directory.
        suite: registered suite name.
        spec: the system (a registered name: it is built on the worker).
        dataset: dataset path or built-in name (a path must be readable on the worker).
        suite_options: options for the suite.
        run_group: the experiment's run group.
        repeat: this run's repeat.
        settings: run settings for the worker's local threads (no executor, no callback).
        existing: an interrupted run's files, to continue on the worker (``None``: start).
        limit: run only the first ``limit`` items of the plan.
        sample: run a seeded random sample of ``sample`` items.
    """

    name: str
    suite: str
    spec: SystemSpec
    dataset: str | None
    suite_options: dict[str, Any]
    run_group: str
    repeat: int
    settings: Any
    existing: dict[str, bytes] | None = None
    limit: int | None = None
    sample: int | None = None


@dataclass(frozen=True)
class ShippedRun:
    """A finished run directory as bytes: its log files, its suite's outputs."""

    name: str
    files: dict[str, bytes]


def run_files(run_dir: Path) -> dict[str, bytes]:
    """The files of an interrupted run directory to continue elsewhere (no system files)."""
    return _collect(run_dir)


def _collect(run_dir: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for path in sorted(run_dir.rglob("*")):
        rel = path.relative_to(run_dir)
        if path.is_file() and rel.parts[0] not in SYSTEM_DIRS and not path.name.endswith(".tmp"):
            files[rel.as_posix()] = path.read_bytes()
    return files


def write_files(run_dir: Path, files: dict[str, bytes]) -> None:
    """Write files shipped as bytes (``run_files``) under ``run_dir``."""
    for rel, data in files.items():
        path = run_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def write_shipped(out: Path, shipped: ShippedRun) -> Path:
    """In the driver: write a shipped run directory under ``out``; the header goes last.

    Every file is replaced atomically, so a driver killed while writing leaves a run that
    either has no header (it starts again) or reads and resumes.
    """
    run_dir = out / shipped.name
    run_dir.mkdir(parents=True, exist_ok=True)
    last = (HEADER_FILE,)
    order = sorted(shipped.files, key=lambda rel: (rel in last, rel in (ITEMS_FILE, SUMMARY_FILE)))
    for rel in order:
        path = run_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(shipped.files[rel])
        os.replace(tmp, path)
    write_header(run_dir, read_header(run_dir))  # validated: a bad shipment fails here
    return run_dir


def node_problems(specs: Sequence[tuple[str, str]], paths: Sequence[str]) -> list[str]:
    """On a worker: what stops it from running these systems on these inputs.

    Args:
        specs: ``(kind, name)`` of every registered system the work builds.
        paths: files and directories the work reads (datasets, suite directories).
    """
    from mnemometer._registry import AGENTS, STORES

    problems: list[str] = []
    for kind, name in specs:
        try:
            (STORES if kind == "store" else AGENTS).load(name)
        except MnemometerError as e:
            problems.append(f"{kind} {name!r}: {e}")
    for p in paths:
        if not Path(p).exists():
            problems.append(f"{p}: not found on this node")
    return problems


def remote_checks(
    spec: SystemSpec, inputs: Sequence[Any]
) -> tuple[list[tuple[str, str]], list[str]]:
    """What a worker must be able to build and read for a run of ``spec`` on ``inputs``.

    Returns:
        ``(kind, name)`` of the system and of a store it wraps (an agent's ``store``
        option), and the inputs that are local paths (built-in dataset names are not).

    Raises:
        MnemometerError: the system is an in-process object, which cannot be sent.
    """
    if spec.instance is not None:
        raise MnemometerError(
            f"{spec.kind} {spec.name!r} was passed as an object: it lives in this process and "
            "is never pickled to Ray workers. Register it as a plug-in (an entry point in "
            "'mnemometer.stores' or 'mnemometer.agents') installed on every node, or run "
            "it with the local executor"
        )
    systems = [(spec.kind, spec.name)]
    wrapped = spec.options.get("store")
    if spec.kind == "agent" and isinstance(wrapped, str):
        systems.append(("store", wrapped))
    paths = [str(x) for x in inputs if isinstance(x, str | Path) and _is_path(str(x))]
    return systems, paths


def _is_path(value: str) -> bool:
    return os.sep in value and Path(value).exists()
