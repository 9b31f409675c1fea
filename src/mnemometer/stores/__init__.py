"""Stores: the systems under test at the retrieval level, and how to create them by name."""

from mnemometer.stores._factory import create_store, store_names
from mnemometer.stores._protocol import (
    BatchStore,
    ClockAware,
    DeletableStore,
    Flushable,
    Hit,
    ListableStore,
    Store,
    capabilities,
)

__all__ = [
    "BatchStore",
    "ClockAware",
    "DeletableStore",
    "Flushable",
    "Hit",
    "ListableStore",
    "Store",
    "capabilities",
    "create_store",
    "store_names",
]
