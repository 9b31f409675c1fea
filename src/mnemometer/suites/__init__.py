"""Suites: named procedures over items (retrieval, and more as they arrive)."""

from mnemometer._registry import SUITES
from mnemometer.suites._base import BaseSuite, Flag, Item, RunContext, Suite, user_only_options

# In-process registration (notebooks, tests); plug-ins use entry points.
register_suite = SUITES.register
unregister_suite = SUITES.unregister

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
    "user_only_options",
]


def suite_names() -> list[str]:
    """Every registered suite name."""
    return SUITES.names()


def create_suite(name: str, options: dict | None = None) -> Suite:
    """Create the suite registered as ``name`` with ``options``.

    Raises:
        UnknownNameError: no such suite (with "did you mean").
        MnemometerError: an option it does not take (naming the ones it does).
    """
    from mnemometer._registry import call_with_context

    return call_with_context(SUITES.load(name), dict(options or {}))
