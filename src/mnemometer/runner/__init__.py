"""The runner: runs and experiments (conditions x repeats), executors, timeouts, resume.

Names load on first use: a single run (``mnemometer run``, :func:`mnemometer.run`) imports
the run machinery only, not the experiments, conditions or the Ray executor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import mnemometer._lazy as _lazy

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
        start_experiment,
    )
    from mnemometer.runner._ray import RayExecutor
    from mnemometer.runner._run import RunSettings, resume, resummarize, run
    from mnemometer.runner._score import resume_scoring, score
    from mnemometer.runner._setup import RunResult
    from mnemometer.scoring.aggregate import run_summary as summarize

_WHERE = {
    "DEFAULT_CONDITIONS": "mnemometer.runner._conditions",
    "Condition": "mnemometer.runner._conditions",
    "load_conditions": "mnemometer.runner._conditions",
    "Executor": "mnemometer.runner._executor",
    "LocalExecutor": "mnemometer.runner._executor",
    "WorkerFn": "mnemometer.runner._executor",
    "Experiment": "mnemometer.runner._experiment",
    "ExperimentResult": "mnemometer.runner._experiment",
    "OnRun": "mnemometer.runner._experiment",
    "check_remote": "mnemometer.runner._experiment",
    "complete_experiments": "mnemometer.runner._experiment",
    "is_experiment": "mnemometer.runner._experiment",
    "read_experiment": "mnemometer.runner._experiment",
    "resume_experiment": "mnemometer.runner._experiment",
    "run_experiment": "mnemometer.runner._experiment",
    "start_experiment": "mnemometer.runner._experiment",
    "RayExecutor": "mnemometer.runner._ray",
    "RunResult": "mnemometer.runner._setup",
    "RunSettings": "mnemometer.runner._run",
    "resume": "mnemometer.runner._run",
    "resummarize": "mnemometer.runner._run",
    "run": "mnemometer.runner._run",
    "resume_scoring": "mnemometer.runner._score",
    "score": "mnemometer.runner._score",
    "summarize": "mnemometer.scoring.aggregate:run_summary",
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
    "resume_scoring",
    "resummarize",
    "run",
    "run_experiment",
    "score",
    "start_experiment",
    "summarize",
    "WorkerFn",
]


__getattr__, __dir__ = _lazy.attach(__name__, _WHERE)
