"""Experiments: one suite under several systems (conditions), each repeated, sharing a group.

An experiment directory holds ``experiment.json`` (the plan) and one run directory per
(condition, repeat): ``OUT/<condition>-r<repeat>``. Runs go repeat-major, so an interrupted
experiment has whole repeats, and :func:`resume_experiment` finishes what is missing:
unfinished runs resume, missing ones start, finished ones stay as they are.

On a remote executor (Ray) the unit is the whole run: every missing or unfinished run is
sent to a worker at once, and each comes back as files the driver writes
(``_remote.RunUnit``), so the experiment directory looks the same whatever ran it.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from mnemometer import _env
from mnemometer._jsonl import json_document
from mnemometer._registry import SUITES
from mnemometer.config import StrictModel, validate
from mnemometer.errors import ConsentError, MnemometerError, RunLogError
from mnemometer.log._lock import LOCK_FILE, DirLock, out_dir
from mnemometer.log._reader import read_header
from mnemometer.log._schema import HEADER_FILE, SUMMARY_FILE
from mnemometer.log._writer import write_header
from mnemometer.runner._executor import Done
from mnemometer.runner._remote import (
    RunUnit,
    ShippedRun,
    remote_checks,
    run_files,
    write_shipped,
)
from mnemometer.runner._resume import refused
from mnemometer.runner._run import (
    RunResult,
    RunSettings,
    execute_run_unit,
    resume,
    run,
)
from mnemometer.runner._setup import (
    check_llm,
    check_scorable,
    check_unlocked,
    dataset_as_option,
    default_out,
    with_llm,
)
from mnemometer.scoring.aggregate import run_summary
from mnemometer.suites import create_suite
from mnemometer.suites._base import resume_options, user_given
from mnemometer.systems import SystemSpec, without_redacted

EXPERIMENT_FILE = "experiment.json"


@dataclass(frozen=True)
class Experiment:
    """A suite × systems × repeats plan.

    Attributes:
        suite: registered suite name.
        systems: one spec per condition (labels must differ).
        repeats: runs of every condition.
        dataset: the dataset (a path or built-in name) for suites that take one; a suite
            that reads its own file gets it as its ``dataset`` option.
        suite_options: options for the suite.
        limit: run only the first ``limit`` items of the suite's plan.
        sample: run a seeded random sample of ``sample`` items (the settings' seed).
    """

    suite: str
    systems: Sequence[SystemSpec]
    repeats: int = 1
    dataset: str | None = None
    suite_options: dict[str, Any] = field(default_factory=dict)
    limit: int | None = None
    sample: int | None = None

    def checked(self) -> Experiment:
        """Validated plan (the file of a suite that reads its own moved into its options).

        Raises:
            MnemometerError: no systems, a repeated label, fewer than one repeat.
        """
        if not self.systems:
            raise MnemometerError("an experiment needs at least one system or condition")
        labels = [s.label for s in self.systems]
        if len(set(labels)) != len(labels):
            raise MnemometerError(f"a condition is listed twice: {labels}")
        if self.repeats < 1:
            raise MnemometerError(f"--repeat must be at least 1, got {self.repeats}")
        dataset, options = dataset_as_option(self.suite, self.dataset, self.suite_options)
        return replace(self, dataset=dataset, suite_options=options)


class _SystemEntry(StrictModel):
    kind: Literal["store", "agent"]
    """Store or agent."""
    name: str
    """Registered name."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Factory options."""
    condition: str | None = None
    """Condition label."""
    notes: list[str] = Field(default_factory=list)
    """Caveats recorded in each run."""


class ExperimentFile(StrictModel):
    """``experiment.json``: what an experiment directory was asked to run."""

    schema_version: int = 1
    """Experiment file version (always first)."""
    kind: Literal["mnemometer-experiment-plan"] = "mnemometer-experiment-plan"
    """File kind."""
    run_group: str
    """Group id shared by every run."""
    suite: str
    """Suite name."""
    suite_options: dict[str, Any] = Field(default_factory=dict)
    """Suite options."""
    dataset: str | None = None
    """Dataset path or built-in name."""
    systems: list[_SystemEntry]
    """One entry per condition, in run order."""
    repeats: int
    """Runs per condition."""
    limit: int | None = None
    """Only the first ``limit`` items ran."""
    sample: int | None = None
    """Only a seeded random sample of ``sample`` items ran."""
    created_at: datetime
    """When it started (UTC)."""


@dataclass(frozen=True)
class ExperimentResult:
    """What :func:`run_experiment` returns."""

    run_group: str
    """Run group shared by every run of the experiment."""
    out: Path
    """The experiment directory (one run directory per condition and repeat)."""
    runs: list[RunResult]
    """The runs, repeat-major."""


OnRun = Callable[[RunResult], None]


def run_experiment(
    experiment: Experiment,
    out: str | Path | None = None,
    *,
    settings: RunSettings | None = None,
    on_run: OnRun | None = None,
) -> ExperimentResult:
    """Run every system of ``experiment`` ``repeats`` times, sharing one run group.

    Raises:
        MnemometerError: a bad plan, or ``out`` already holds something else.
    """
    exp = experiment.checked()
    # Build the suite once before anything is written: bad options, a malformed suite or
    # shell items without --allow-shell fail here, leaving no half-made experiment.
    suite = create_suite(exp.suite, exp.suite_options)
    check_llm(suite, with_llm(settings or RunSettings()).llm)
    check_scorable(suite, exp.dataset)
    check_remote(settings, exp.systems, [exp.dataset, *exp.suite_options.values()])
    out = out_dir(out if out is not None else default_out(exp.suite), "experiment directory")
    if out.exists() and any(out.iterdir()):
        check_unlocked(out)
        if {p.name for p in out.iterdir()} - {LOCK_FILE, EXPERIMENT_FILE + ".tmp"}:
            raise MnemometerError(
                f"{out}: already exists and is not empty; choose another --out, "
                "or continue it with --resume"
            )
    out.mkdir(parents=True, exist_ok=True)
    with DirLock(out):
        if (out / EXPERIMENT_FILE).exists():  # another writer started it meanwhile
            raise MnemometerError(f"{out}: already holds an experiment; continue it with --resume")
        plan = start_experiment(exp, out)
        given = {s.label: dict(s.options) for s in exp.systems}  # secrets included
        return _complete(out, plan, settings, on_run, given)


def start_experiment(experiment: Experiment, out: Path) -> ExperimentFile:
    """Write ``experiment.json`` for a new experiment in ``out`` (its runs start later).

    Written atomically (a kill leaves it whole or absent), with secret options hidden:
    the runs take keys from the caller, a resume from the environment.
    """
    exp = experiment.checked()
    out.mkdir(parents=True, exist_ok=True)
    plan = ExperimentFile(
        run_group=uuid.uuid4().hex[:12],
        suite=exp.suite,
        suite_options=dict(exp.suite_options),
        dataset=exp.dataset,
        systems=[
            _SystemEntry(
                kind=s.kind,
                name=s.name,
                options=_env.redact(dict(s.options)),
                condition=s.condition,
                notes=list(s.notes),
            )
            for s in exp.systems
        ],
        repeats=exp.repeats,
        limit=exp.limit,
        sample=exp.sample,
        created_at=datetime.now(UTC),
    )
    tmp = out / (EXPERIMENT_FILE + ".tmp")
    tmp.write_text(plan.model_dump_json(indent=1) + "\n", "utf-8")
    os.replace(tmp, out / EXPERIMENT_FILE)
    return plan


def complete_experiments(
    plans: Sequence[tuple[Path, ExperimentFile]],
    *,
    settings: RunSettings | None = None,
    on_run: OnRun | None = None,
) -> list[ExperimentResult]:
    """Finish several experiments; on a remote executor all their runs go out at once.

    Used by sweeps: one experiment per dataset, every run of the matrix in one map.
    """
    executor = settings.executor if settings is not None else None
    if executor is not None and getattr(executor, "remote", False):
        return _complete_remote(plans, settings or RunSettings(), on_run)
    return [_complete(out, plan, settings, on_run) for out, plan in plans]


def resume_experiment(
    out: str | Path,
    *,
    settings: RunSettings | None = None,
    on_run: OnRun | None = None,
    suite_options: dict[str, Any] | None = None,
) -> ExperimentResult:
    """Finish an interrupted experiment: resume unfinished runs, start missing ones.

    Consent to run the suite's code and the sandbox come from ``suite_options`` again,
    never from ``experiment.json`` or a run header (see :func:`~mnemometer.runner.resume`).

    Raises:
        ConsentError: the suite executes commands and ``suite_options`` does not say
            ``allow_shell``; nothing ran.
        RunLogError: not an experiment directory.
    """
    out = Path(out)
    plan = read_experiment(out)
    specs = [_spec(e) for e in plan.systems]
    check_remote(settings, specs, [plan.dataset, *plan.suite_options.values()])
    with DirLock(out):
        plan = read_experiment(out)
        options = resume_options(SUITES.load(plan.suite), plan.suite_options, suite_options)
        try:  # the first run left to do refuses before anything of it runs
            return _complete(
                out, plan.model_copy(update={"suite_options": options}), settings, on_run
            )
        except ConsentError as e:
            raise ConsentError(f"{out}: {refused(e, options)}") from None


def is_experiment(path: str | Path) -> bool:
    """True when ``path`` is an experiment directory."""
    return (Path(path) / EXPERIMENT_FILE).is_file()


def read_experiment(out: str | Path) -> ExperimentFile:
    """Read ``experiment.json``.

    Raises:
        RunLogError: missing or malformed.
    """
    path = Path(out) / EXPERIMENT_FILE
    if not path.is_file():
        raise RunLogError(f"{out}: not an experiment directory (no {EXPERIMENT_FILE})")
    raw = json_document(path.read_text("utf-8"), path, RunLogError)
    try:
        return validate(ExperimentFile, raw, str(path))
    except MnemometerError as e:
        raise RunLogError(str(e)) from None


def _spec(entry: _SystemEntry, given: dict[str, dict[str, Any]] | None = None) -> SystemSpec:
    """The spec of a plan entry.

    Options as given (secrets included) when the caller has them, else the plan's, whose
    hidden secrets the factory reads from the environment.
    """
    label = entry.condition or entry.name
    options = (given or {}).get(label) or without_redacted(entry.options)
    return SystemSpec(entry.kind, entry.name, options, entry.condition, tuple(entry.notes))


def check_remote(settings: RunSettings | None, specs: Sequence[SystemSpec], inputs: list) -> None:
    """Before anything is written: a remote executor's workers can build every system.

    Nothing to check for the local executor.

    Raises:
        MnemometerError: a worker cannot build a system or read an input, Ray is missing,
            or the cluster cannot be reached.
    """
    executor = settings.executor if settings is not None else None
    if executor is None or not getattr(executor, "remote", False):
        return
    systems: list[tuple[str, str]] = []
    paths: list[str] = []
    for spec in specs:
        s, paths = remote_checks(spec, inputs)
        systems += [x for x in s if x not in systems]
    executor.preflight(systems, paths)  # type: ignore[attr-defined]


def _complete(
    out: Path,
    plan: ExperimentFile,
    settings: RunSettings | None,
    on_run: OnRun | None,
    given: dict[str, dict[str, Any]] | None = None,
) -> ExperimentResult:
    executor = settings.executor if settings is not None else None
    if executor is not None and getattr(executor, "remote", False):
        return _complete_remote([(out, plan)], settings or RunSettings(), on_run)[0]
    results: list[RunResult] = []
    for r in range(plan.repeats):
        for entry in plan.systems:
            spec = _spec(entry, given)
            run_dir = out / f"{spec.label}-r{r}"
            if (run_dir / HEADER_FILE).is_file():
                header = read_header(run_dir)
                if header.status == "finished" and (run_dir / SUMMARY_FILE).is_file():
                    result = RunResult(run_dir, header, run_summary(run_dir))
                else:  # unfinished, or killed while its summary was written
                    given = user_given(SUITES.load(plan.suite), plan.suite_options)
                    result = resume(run_dir, settings=settings, suite_options=given)
            else:
                if run_dir.exists():  # created, then killed before its header was written
                    shutil.rmtree(run_dir)
                result = run(
                    plan.suite,
                    spec,
                    dataset=plan.dataset,
                    suite_options=plan.suite_options,
                    out=run_dir,
                    settings=settings,
                    run_group=plan.run_group,
                    repeat=r,
                    limit=plan.limit,
                    sample=plan.sample,
                )
            results.append(result)
            if on_run is not None:
                on_run(result)
    return ExperimentResult(plan.run_group, out, results)


def _complete_remote(
    plans: Sequence[tuple[Path, ExperimentFile]], settings: RunSettings, on_run: OnRun | None
) -> list[ExperimentResult]:
    """Send every missing or unfinished run to the executor; write each as it comes back."""
    executor: Any = settings.executor
    on_worker = replace(settings, executor=None, progress=None)
    done: dict[Path, RunResult] = {}
    units: list[RunUnit] = []
    outs: dict[int, Path] = {}
    for out, plan in plans:
        for r in range(plan.repeats):
            for entry in plan.systems:
                spec = _spec(entry)
                run_dir = out / f"{spec.label}-r{r}"
                existing, header = None, None
                if (run_dir / HEADER_FILE).is_file():
                    header = read_header(run_dir)
                    if header.status == "finished" and (run_dir / SUMMARY_FILE).is_file():
                        done[run_dir] = RunResult(run_dir, header, run_summary(run_dir))
                        continue
                    existing = run_files(run_dir)
                elif run_dir.exists():  # created, then killed before its header was written
                    shutil.rmtree(run_dir)
                unit = RunUnit(
                    run_dir.name,
                    plan.suite,
                    spec,
                    plan.dataset,
                    dict(plan.suite_options),
                    plan.run_group,
                    r,
                    with_llm(on_worker, header),  # here: a worker's environment is not ours
                    existing,
                    plan.limit,
                    plan.sample,
                )
                units.append(unit)
                outs[id(unit)] = out

    def record(d: Done[RunUnit]) -> None:
        out = outs[id(d.item)]
        if d.error is not None:
            if isinstance(d.error, MnemometerError):
                raise d.error
            raise MnemometerError(
                f"run {out / d.item.name} failed on {executor.name}: "
                f"{type(d.error).__name__}: {d.error}; the finished runs are kept: "
                f"continue with --resume"
            )
        shipped: ShippedRun = d.result
        path = write_shipped(out, shipped)
        header = read_header(path)
        if d.attempts > 1:
            note = f"{executor.name}: this run ran {d.attempts} times: {'; '.join(d.lost)}"
            header = header.model_copy(update={"notes": [*header.notes, note]})
            write_header(path, header)
        result = RunResult(path, header, run_summary(path))
        done[path] = result
        if on_run is not None:
            on_run(result)

    executor.map(execute_run_unit, units, record, concurrency=max(1, len(units)), timeout=None)
    return [
        ExperimentResult(
            plan.run_group,
            out,
            [
                done[out / f"{_spec(e).label}-r{r}"]
                for r in range(plan.repeats)
                for e in plan.systems
            ],
        )
        for out, plan in plans
    ]
