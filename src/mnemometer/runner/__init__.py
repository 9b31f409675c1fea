"""The runner: runs and experiments (conditions x repeats), executors, timeouts, resume."""

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
from mnemometer.runner._run import (
    RunResult,
    RunSettings,
    resume,
    resummarize,
    run,
)
from mnemometer.scoring.aggregate import run_summary as summarize

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
