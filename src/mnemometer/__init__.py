"""mnemometer: measure AI-agent memory.

The public verbs are :func:`run`, :func:`report`, :func:`load_dataset` and
:func:`read_log`; the core nouns are :class:`Dataset`, :class:`Memory`, :class:`Query`,
:class:`Hit` and the :class:`Store` protocol.
"""

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
    "create_store",
    "load_dataset",
    "read_log",
    "report",
    "run",
    "save_dataset",
]
