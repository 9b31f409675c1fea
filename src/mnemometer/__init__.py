"""mnemometer: measure AI-agent memory.

The public verbs are :func:`run`, :func:`resume`, :func:`run_experiment`, :func:`run_suite`,
:func:`report`, :func:`compare`, :func:`gate`, :func:`load_dataset` and :func:`read_log`; the
core nouns are :class:`Dataset`, :class:`Memory`, :class:`Query`, :class:`Hit`, the
:class:`Store` protocol, :class:`SystemSpec`, :class:`RunSettings` and :class:`Experiment`.
Everything else lives in the subpackages (``mnemometer.stores``, ``mnemometer.suites``, ...).
"""

from typing import Any

from mnemometer.datasets import Dataset, Memory, Query, load_dataset, save_dataset
from mnemometer.log import read_log
from mnemometer.report import report
from mnemometer.runner import (
    Experiment,
    RunResult,
    RunSettings,
    resume,
    run,
    run_experiment,
    run_suite,
)
from mnemometer.stores import Hit, Store, create_store
from mnemometer.systems import SystemSpec

__all__ = [
    "Dataset",
    "Experiment",
    "Hit",
    "Memory",
    "Query",
    "RunResult",
    "RunSettings",
    "Store",
    "SystemSpec",
    "compare",
    "create_store",
    "gate",
    "load_dataset",
    "read_log",
    "report",
    "resume",
    "run",
    "run_experiment",
    "run_suite",
    "save_dataset",
]

# Verbs whose modules pull in scipy load on first use.
_LAZY = {
    "compare": "mnemometer.comparison",
    "gate": "mnemometer.comparison",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'mnemometer' has no attribute {name!r}")
