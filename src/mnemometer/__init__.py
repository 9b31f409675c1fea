"""mnemometer: measure AI-agent memory.

The public verbs are :func:`run`, :func:`resume`, :func:`run_experiment`, :func:`run_suite`,
:func:`score`, :func:`report`, :func:`compare`, :func:`gate`, :func:`load_dataset` and
:func:`read_log`; the
core nouns are :class:`Dataset`, :class:`Memory`, :class:`Query`, :class:`Hit`, the
:class:`Store` protocol, :class:`SystemSpec`, :class:`RunSettings` and :class:`Experiment`.
Everything else lives in the subpackages (``mnemometer.stores``, ``mnemometer.suites``, ...).

Names load on first use, so ``import mnemometer`` is cheap and a report or a dataset load
never imports the runner, the suites or any optional extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import mnemometer._lazy as _lazy

if TYPE_CHECKING:
    from mnemometer.comparison import compare, gate
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
        score,
    )
    from mnemometer.stores import Hit, Store, create_store
    from mnemometer.systems import SystemSpec
    from mnemometer.workflows import run_suite

_WHERE = {
    "compare": "mnemometer.comparison",
    "gate": "mnemometer.comparison",
    "Dataset": "mnemometer.datasets",
    "Memory": "mnemometer.datasets",
    "Query": "mnemometer.datasets",
    "load_dataset": "mnemometer.datasets",
    "save_dataset": "mnemometer.datasets",
    "read_log": "mnemometer.log",
    "report": "mnemometer.report",
    "Experiment": "mnemometer.runner",
    "RunResult": "mnemometer.runner",
    "RunSettings": "mnemometer.runner",
    "resume": "mnemometer.runner",
    "run": "mnemometer.runner",
    "run_experiment": "mnemometer.runner",
    "score": "mnemometer.runner",
    "Hit": "mnemometer.stores",
    "Store": "mnemometer.stores",
    "create_store": "mnemometer.stores",
    "SystemSpec": "mnemometer.systems",
    "run_suite": "mnemometer.workflows",
}

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
    "score",
]


__getattr__, __dir__ = _lazy.attach(__name__, _WHERE)
