"""Suites: named procedures over items (retrieval, and more as they arrive)."""

from mnemometer.suites._base import Item, Suite

__all__ = ["Item", "Suite", "create_suite", "suite_names"]


def suite_names() -> list[str]:
    """Every registered suite name."""
    from mnemometer._registry import SUITES

    return SUITES.names()


def create_suite(name: str, options: dict | None = None) -> Suite:
    """Create the suite registered as ``name`` with ``options``."""
    from mnemometer._registry import SUITES, call_with_context

    return call_with_context(SUITES.load(name), dict(options or {}))
