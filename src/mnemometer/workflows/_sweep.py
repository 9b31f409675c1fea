"""``sweep``: a matrix of systems × datasets × conditions × repeats from one TOML file.

A sweep is one experiment per dataset (``OUT/<dataset>/``, the same layout as
``mnemometer run --condition ... --repeat N``), all finished together: on a remote executor
(Ray) every run of the matrix goes out at once, a whole run per worker. Running the same
sweep again into the same directory finishes what is missing, so a sweep resumes like an
experiment. It ends with a leaderboard (``OUT/leaderboard.md``) and the paired comparisons
the file names (``OUT/<dataset>/comparison-<baseline>-vs-<candidate>.json``).

An example file::

    suite = "retrieval"
    repeats = 2
    conditions = ["lexical"]          # named conditions, as --condition

    [[systems]]
    store = "keyword"

    [[systems]]
    store = "bm25"
    name = "bm25-k1.5"                # how runs and the leaderboard name it
    options = { k1 = 1.5 }

    [[datasets]]
    path = "demo-en"                  # a built-in name, or a file (relative to this one)

    [[compare]]
    baseline = "keyword"
    candidate = "bm25-k1.5"
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from mnemometer._jsonl import check_regular, shown
from mnemometer._registry import SUITES
from mnemometer.config import StrictModel, load_model
from mnemometer.errors import MnemometerError, shortened
from mnemometer.log._lock import DirLock, out_dir
from mnemometer.runner import (
    Experiment,
    ExperimentResult,
    OnRun,
    RunSettings,
    check_remote,
    complete_experiments,
    load_conditions,
    read_experiment,
    start_experiment,
)
from mnemometer.runner._conditions import resolve, system_for
from mnemometer.runner._setup import check_scorable, dataset_as_option, with_llm
from mnemometer.suites import create_suite, user_only_options
from mnemometer.systems import SystemSpec
from mnemometer.workflows._leaderboard import write_leaderboard

LEADERBOARD_FILE = "leaderboard.md"


class SweepSystem(StrictModel):
    """One system of the matrix: a registered store or agent with options."""

    store: str | None = Field(None, min_length=1)
    """Registered store name."""
    agent: str | None = Field(None, min_length=1)
    """Registered agent name (for conversation suites)."""
    name: str | None = Field(None, min_length=1)
    """Label of its runs (default: the store or agent name)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Factory options."""

    @model_validator(mode="after")
    def _one_system(self) -> SweepSystem:
        if (self.store is None) == (self.agent is None):
            raise ValueError("give exactly one of 'store' and 'agent'")
        return self

    def spec(self) -> SystemSpec:
        """The system as a spec whose condition is its label."""
        kind = "store" if self.store else "agent"
        name = self.store or self.agent or ""
        return SystemSpec(kind, name, dict(self.options), self.name or name)


class SweepDataset(StrictModel):
    """One dataset of the matrix."""

    path: str = Field(min_length=1)
    """A built-in dataset name or a file (relative paths are relative to the sweep file)."""
    name: str | None = Field(None, min_length=1)
    """Its directory under the sweep's output (default: from the path)."""


class SweepComparison(StrictModel):
    """A paired comparison to run on every dataset when the runs are done."""

    baseline: str = Field(min_length=1)
    """Label of the baseline system or condition."""
    candidate: str = Field(min_length=1)
    """Label of the candidate system or condition."""


class SweepFile(StrictModel):
    """A sweep file: which suite, on which datasets, with which systems, how many times."""

    suite: str = "retrieval"
    """Registered suite name."""
    suite_options: dict[str, Any] = Field(default_factory=dict)
    """Options for the suite (``top_k``, ...)."""
    repeats: int = Field(1, ge=1)
    """Runs of every system on every dataset."""
    systems: list[SweepSystem] = Field(default_factory=list)
    """Systems by registered name."""
    conditions: list[str] = Field(default_factory=list)
    """Named conditions (the built-in ones, or from ``conditions_file``)."""
    conditions_file: str | None = None
    """TOML file of more conditions (relative to the sweep file)."""
    datasets: list[SweepDataset] = Field(min_length=1)
    """Datasets; each becomes one experiment directory."""
    compare: list[SweepComparison] = Field(default_factory=list)
    """Paired comparisons to compute on every dataset."""


@dataclass(frozen=True)
class SweepResult:
    """What :func:`sweep` returns."""

    out: Path
    """The sweep directory."""
    experiments: dict[str, ExperimentResult]
    """One experiment per dataset, by its directory name."""
    leaderboard: Path
    """``OUT/leaderboard.md``."""
    comparisons: list[Path]
    """The comparison files written."""


def load_sweep(path: str | Path) -> SweepFile:
    """Read and validate a sweep file.

    Raises:
        MnemometerError: one line naming the file and the key.
    """
    sweep_file = load_model(path, SweepFile, what="sweep file")
    try:
        guarded = user_only_options(SUITES.load(sweep_file.suite))
    except MnemometerError:
        guarded = {}  # an unknown suite: named when it is created
    if given := sorted(guarded.keys() & sweep_file.suite_options.keys()):
        key = given[0]
        raise MnemometerError(
            f"{path}: suite_options.{key}: {guarded[key]} is taken from the command line only "
            "(consent to run a suite's code and its sandbox are not a file's to give)"
        )
    labels = _labels(sweep_file)
    if len(set(labels)) != len(labels):
        raise MnemometerError(f"{path}: a system or condition is listed twice: {labels}")
    for c in sweep_file.compare:
        for side in (c.baseline, c.candidate):
            if side not in labels:
                raise MnemometerError(
                    f"{path}: [[compare]] names {side!r}, which is not a system or condition "
                    f"of the sweep ({', '.join(labels)})"
                )
    return sweep_file


def _labels(s: SweepFile) -> list[str]:
    return [x.spec().label for x in s.systems] + list(s.conditions)


@dataclass(frozen=True)
class CheckedSweep:
    """A sweep file with everything checked that can be before a run starts."""

    spec: SweepFile
    """The file."""
    systems: list[SystemSpec]
    """Its systems, then its named conditions."""
    datasets: list[tuple[str, str]]
    """``(directory name, dataset)`` per dataset: a built-in name or an absolute path."""


def check_sweep(path: str | Path, settings: RunSettings | None = None) -> CheckedSweep:
    """Read the sweep file at ``path`` and check it: systems, conditions, suite, datasets.

    Raises:
        MnemometerError: one line naming the file (and the key) of the first problem.
    """
    path = Path(path)
    spec = load_sweep(path)
    if not spec.systems and not spec.conditions:
        raise MnemometerError(f"{path}: a sweep needs [[systems]] or conditions")
    base = path.resolve().parent
    try:
        table = load_conditions(_relative(spec.conditions_file, base))
    except MnemometerError as e:
        raise MnemometerError(f"{path}: conditions_file: {e}") from None
    systems = [s.spec() for s in spec.systems]
    llm = with_llm((settings or RunSettings()).checked()).llm
    try:
        systems += [system_for(n, resolve(n, table), llm) for n in spec.conditions]
    except MnemometerError as e:
        raise MnemometerError(f"{path}: conditions: {e}") from None
    datasets: list[tuple[str, str]] = []
    for i, d in enumerate(spec.datasets):
        name = d.name or _slug(Path(d.path).name.split(".")[0])
        if name in (n for n, _ in datasets):
            raise MnemometerError(f"{path}: two datasets are named {name!r}; give them names")
        try:
            datasets.append((name, _dataset(d.path, base)))
        except MnemometerError as e:
            raise MnemometerError(f"{path}: datasets[{i}].path: {e}") from None
    # Bad options fail before anything runs (a suite that reads its file sees the first),
    # and so does a dataset the suite cannot score.
    try:
        options = dataset_as_option(spec.suite, datasets[0][1], spec.suite_options)[1]
        suite = create_suite(spec.suite, options)
    except MnemometerError as e:
        raise MnemometerError(f"{path}: suite {shortened(spec.suite)!r}: {e}") from None
    for _, d in datasets:
        check_scorable(suite, d)
    return CheckedSweep(spec, systems, datasets)


def sweep(
    path: str | Path,
    out: str | Path,
    *,
    settings: RunSettings | None = None,
    on_run: OnRun | None = None,
) -> SweepResult:
    """Run (or finish) the sweep described by the TOML file at ``path`` into ``out``.

    Raises:
        MnemometerError: a bad sweep file, or ``out`` holds a different sweep.
        DirectoryLocked: another live process is running a sweep into ``out``.
    """
    checked = check_sweep(path, settings)
    spec = checked.spec
    out = out_dir(out, "sweep directory")
    created = not out.exists()
    # One sweep writer per directory: a second one would plan and run the same experiments.
    try:
        with DirLock(out):
            plans = []
            for name, dataset in checked.datasets:
                exp = Experiment(
                    spec.suite, checked.systems, spec.repeats, dataset, dict(spec.suite_options)
                )
                plans.append((out / name, _plan(exp, out / name, settings)))
            results = complete_experiments(plans, settings=settings, on_run=on_run)
            experiments = dict(zip([n for n, _ in checked.datasets], results, strict=True))
            comparisons = _compare(spec, experiments)
            board = write_leaderboard(out / LEADERBOARD_FILE, experiments, comparisons)
    except BaseException:
        if created and out.is_dir() and not any(out.iterdir()):
            out.rmdir()  # a sweep that failed before writing anything leaves nothing
        raise
    return SweepResult(out, experiments, board, [c for c, _ in comparisons])


def _plan(exp: Experiment, out: Path, settings: RunSettings | None) -> Any:
    """A new experiment's plan, or the recorded one when the sweep ran here before."""
    exp = exp.checked()  # as recorded: a suite that reads its file has it in its options
    check_remote(settings, exp.systems, [exp.dataset, *exp.suite_options.values()])
    if not (out / "experiment.json").is_file():
        if out.exists() and any(out.iterdir()):
            raise MnemometerError(f"{out}: exists and is not an experiment of this sweep")
        return start_experiment(exp, out)
    plan = read_experiment(out)
    recorded = [(e.kind, e.name, e.options, e.condition) for e in plan.systems]
    wanted = [(s.kind, s.name, s.options, s.condition) for s in exp.systems]
    same = (plan.suite, plan.dataset, plan.repeats, plan.suite_options) == (
        exp.suite,
        exp.dataset,
        exp.repeats,
        exp.suite_options,
    )
    if not same or recorded != wanted:
        raise MnemometerError(
            f"{out}: holds an experiment of a different sweep (suite, dataset, systems or "
            "repeats differ); choose another --out"
        )
    return plan


def _compare(spec: SweepFile, experiments: dict[str, ExperimentResult]) -> list[tuple[Path, Any]]:
    from mnemometer.comparison import compare
    from mnemometer.report import render

    written = []
    for name, exp in experiments.items():
        for c in spec.compare:
            base = [r.path for r in exp.runs if _label(r) == c.baseline]
            cand = [r.path for r in exp.runs if _label(r) == c.candidate]
            result = compare(base, cand)
            target = exp.out / f"comparison-{_slug(c.baseline)}-vs-{_slug(c.candidate)}.json"
            target.write_text(render(result, "json") + "\n", "utf-8")
            written.append((target, (name, c.baseline, c.candidate, result)))
    return written


def _label(run: Any) -> str:
    return run.header.system.condition or run.header.system.name


def _relative(value: str | None, base: Path) -> Path | None:
    if value is None:
        return None
    p = Path(value)
    return p if p.is_absolute() else base / p


def _dataset(value: str, base: Path) -> str:
    """A built-in name as is; a file as an absolute path (so every worker finds it)."""
    from mnemometer.datasets._io import BUILTIN

    if value in BUILTIN:
        return value
    p = _relative(value, base)
    assert p is not None
    missing = f"no such file (looked at {shown(p)})"
    return str(check_regular(p, MnemometerError, "dataset", missing=missing).resolve())


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "dataset"
