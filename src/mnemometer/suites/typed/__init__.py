"""Suite directories of typed items (``suite.toml`` + ``items.jsonl``), conditions, runs."""

from mnemometer.suites.typed import _build  # noqa: F401  (registers the shell item runners)
from mnemometer.suites.typed._conditions import DEFAULT_CONDITIONS, Condition, load_conditions
from mnemometer.suites.typed._items import ITEM_TYPES, ItemType, register_item_type
from mnemometer.suites.typed._manifest import (
    LoadedSuite,
    SuiteError,
    SuiteManifest,
    is_suite_path,
    load_suite,
)
from mnemometer.suites.typed._run import SuiteRun, run_suite
from mnemometer.suites.typed._suite import TypedSuite

__all__ = [
    "DEFAULT_CONDITIONS",
    "ITEM_TYPES",
    "Condition",
    "ItemType",
    "LoadedSuite",
    "SuiteError",
    "SuiteManifest",
    "SuiteRun",
    "TypedSuite",
    "is_suite_path",
    "load_conditions",
    "load_suite",
    "register_item_type",
    "run_suite",
]
