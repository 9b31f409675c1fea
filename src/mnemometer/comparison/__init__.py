"""Comparisons: pair runs item by item, compute paired statistics, gate the result."""

from mnemometer.comparison._compare import compare
from mnemometer.comparison._gate import (
    GatePolicy,
    GateResult,
    gate,
    load_comparison,
    load_policy,
)
from mnemometer.comparison._model import Comparison
from mnemometer.comparison._pairs import PairingError, condition_of, expand_runs
from mnemometer.comparison._sides import split_sides

__all__ = [
    "Comparison",
    "GatePolicy",
    "GateResult",
    "PairingError",
    "compare",
    "condition_of",
    "expand_runs",
    "gate",
    "load_comparison",
    "load_policy",
    "split_sides",
]
