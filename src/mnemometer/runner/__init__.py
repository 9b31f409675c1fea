"""The runner: concurrency, timeouts, durable logging and resume."""

from mnemometer.runner._run import RunResult, run, summarize

__all__ = ["RunResult", "run", "summarize"]
