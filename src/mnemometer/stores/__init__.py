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
from mnemometer.stores._ties import DEFAULT_TIE_SEED, tie_key

__all__ = [
    "DEFAULT_TIE_SEED",
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
    "tie_key",
]
