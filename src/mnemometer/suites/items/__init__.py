"""The ``items`` suite: a suite directory of typed items (``suite.toml`` + ``items.jsonl``)."""

from mnemometer.suites.items._manifest import (
    LoadedSuite,
    SuiteError,
    SuiteManifest,
    is_suite_path,
    load_suite,
)
from mnemometer.suites.items._query import query_suite
from mnemometer.suites.items._suite import ItemsSuite
from mnemometer.suites.items._types import (
    ITEM_TYPES,
    BaseItem,
    ItemType,
    item_type,
    register_item_type,
)

__all__ = [
    "ITEM_TYPES",
    "BaseItem",
    "ItemType",
    "ItemsSuite",
    "LoadedSuite",
    "SuiteError",
    "SuiteManifest",
    "is_suite_path",
    "item_type",
    "load_suite",
    "query_suite",
    "register_item_type",
]
