"""Tools for people who write adapters: the conformance kit."""

from mnemometer.testing._conformance import Check, ConformanceReport, check_store

__all__ = ["Check", "ConformanceReport", "check_store"]
