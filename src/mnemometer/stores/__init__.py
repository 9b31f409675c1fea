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
    "register_store",
    "unregister_store",
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


def register_store(name: str, factory: object) -> None:
    """Register a store factory in-process (notebooks, tests); plug-ins use entry points.

    Raises:
        MnemometerError: ``name`` is already registered.
    """
    from mnemometer._registry import STORES

    STORES.register(name, factory)  # type: ignore[arg-type]


def unregister_store(name: str) -> None:
    """Remove an in-process registration (a no-op for names it did not add)."""
    from mnemometer._registry import STORES

    STORES.unregister(name)
