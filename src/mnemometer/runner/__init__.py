"""The runner: runs and experiments (conditions x repeats), executors, timeouts, resume.

Names load on first use: a single run (``mnemometer run``, :func:`mnemometer.run`) imports
the run machinery only, not the experiments, conditions or the Ray executor.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mnemometer.runner._conditions import DEFAULT_CONDITIONS, Condition, load_conditions
    from mnemometer.runner._executor import Executor, LocalExecutor, WorkerFn
    from mnemometer.runner._experiment import (
        Experiment,
        ExperimentResult,
        OnRun,
        check_remote,
        complete_experiments,
        is_experiment,
        read_experiment,
        resume_experiment,
        run_experiment,
        run_suite,
        start_experiment,
    )
    from mnemometer.runner._ray import RayExecutor
    from mnemometer.runner._run import RunResult, RunSettings, resume, resummarize, run
    from mnemometer.scoring.aggregate import run_summary as summarize

_WHERE: dict[str, tuple[str, str]] = {
    **{
        name: ("mnemometer.runner._conditions", name)
        for name in ("DEFAULT_CONDITIONS", "Condition", "load_conditions")
    },
    **{
        name: ("mnemometer.runner._executor", name)
        for name in ("Executor", "LocalExecutor", "WorkerFn")
    },
    **{
        name: ("mnemometer.runner._experiment", name)
        for name in (
            "Experiment",
            "ExperimentResult",
            "OnRun",
            "check_remote",
            "complete_experiments",
            "is_experiment",
            "read_experiment",
            "resume_experiment",
            "run_experiment",
            "run_suite",
            "start_experiment",
        )
    },
    "RayExecutor": ("mnemometer.runner._ray", "RayExecutor"),
    **{
        name: ("mnemometer.runner._run", name)
        for name in ("RunResult", "RunSettings", "resume", "resummarize", "run")
    },
    "summarize": ("mnemometer.scoring.aggregate", "run_summary"),
}

__all__ = [
    "DEFAULT_CONDITIONS",
    "Condition",
    "Executor",
    "Experiment",
    "ExperimentResult",
    "OnRun",
    "LocalExecutor",
    "RayExecutor",
    "RunResult",
    "RunSettings",
    "check_remote",
    "complete_experiments",
    "is_experiment",
    "load_conditions",
    "read_experiment",
    "resume",
    "resume_experiment",
    "resummarize",
    "run",
    "run_experiment",
    "run_suite",
    "start_experiment",
    "summarize",
    "WorkerFn",
]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        module, attr = _WHERE[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value  # later lookups skip this hook
        return value
    raise AttributeError(f"module 'mnemometer.runner' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
