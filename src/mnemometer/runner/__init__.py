"""The runner: experiments (conditions x repeats), concurrency, timeouts, durable logs, resume."""

from mnemometer.runner._conditions import DEFAULT_CONDITIONS, Condition, load_conditions
from mnemometer.runner._experiment import SuiteRun, run_suite
from mnemometer.runner._run import RunResult, run, summarize

__all__ = [
    "DEFAULT_CONDITIONS",
    "Condition",
    "RunResult",
    "SuiteRun",
    "load_conditions",
    "run",
    "run_suite",
    "summarize",
]
