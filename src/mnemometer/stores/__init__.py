"""Stores: the systems under test at the retrieval level, and how to create them by name."""

from mnemometer._registry import STORES
from mnemometer.stores._factory import create_store, store_names
from mnemometer.stores._protocol import (
    BatchStore,
    ClockAware,
    DeletableStore,
    Flushable,
    Hit,
    IngestCost,
    IngestCosted,
    ListableStore,
    Persistent,
    RetryCounted,
    Store,
    capabilities,
)
from mnemometer.stores._ties import DEFAULT_TIE_SEED, check_seed, rank_rows, tie_key

# In-process registration (notebooks, tests); plug-ins use entry points.
register_store = STORES.register
unregister_store = STORES.unregister

__all__ = [
    "register_store",
    "unregister_store",
    "DEFAULT_TIE_SEED",
    "BatchStore",
    "ClockAware",
    "DeletableStore",
    "Flushable",
    "Hit",
    "IngestCost",
    "IngestCosted",
    "ListableStore",
    "Persistent",
    "RetryCounted",
    "Store",
    "capabilities",
    "check_seed",
    "create_store",
    "rank_rows",
    "store_names",
    "tie_key",
]
