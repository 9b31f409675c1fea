"""Suites: named procedures over items (retrieval, and more as they arrive)."""

from mnemometer.suites._base import BaseSuite, Flag, Item, RunContext, Suite

__all__ = [
    "register_suite",
    "unregister_suite",
    "BaseSuite",
    "Flag",
    "Item",
    "RunContext",
    "Suite",
    "create_suite",
    "suite_names",
]


def suite_names() -> list[str]:
    """Every registered suite name."""
    from mnemometer._registry import SUITES

    return SUITES.names()


def create_suite(name: str, options: dict | None = None) -> Suite:
    """Create the suite registered as ``name`` with ``options``.

    Raises:
        UnknownNameError: no such suite (with "did you mean").
        MnemometerError: an option it does not take (naming the ones it does).
    """
    from mnemometer._registry import SUITES, call_with_context

    return call_with_context(SUITES.load(name), dict(options or {}))


def register_suite(name: str, factory: object) -> None:
    """Register a suite factory in-process (notebooks, tests); plug-ins use entry points.

    Raises:
        MnemometerError: ``name`` is already registered.
    """
    from mnemometer._registry import SUITES

    SUITES.register(name, factory)  # type: ignore[arg-type]


def unregister_suite(name: str) -> None:
    """Remove an in-process registration (a no-op for names it did not add)."""
    from mnemometer._registry import SUITES

    SUITES.unregister(name)
