"""mnemometer: measure AI-agent memory.

The public verbs are :func:`run`, :func:`report`, :func:`compare`, :func:`gate`,
:func:`run_suite`, :func:`load_dataset` and :func:`read_log`; the core nouns are
:class:`Dataset`, :class:`Memory`, :class:`Query`, :class:`Hit` and the :class:`Store`
protocol.
"""

from typing import Any

from mnemometer.datasets import Dataset, Memory, Query, load_dataset, save_dataset
from mnemometer.log import read_log
from mnemometer.report import report
from mnemometer.runner import RunResult, run
from mnemometer.stores import Hit, Store, create_store

__all__ = [
    "Dataset",
    "Hit",
    "Memory",
    "Query",
    "RunResult",
    "Store",
    "compare",
    "create_store",
    "gate",
    "load_dataset",
    "read_log",
    "report",
    "run",
    "run_suite",
    "save_dataset",
]

# Verbs whose modules pull in scipy and the suite machinery load on first use.
_LAZY = {
    "compare": "mnemometer.comparison",
    "gate": "mnemometer.comparison",
    "run_suite": "mnemometer.runner",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'mnemometer' has no attribute {name!r}")
