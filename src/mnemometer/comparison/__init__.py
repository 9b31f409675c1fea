"""Comparisons: pair runs item by item, compute paired statistics, gate the result."""

from mnemometer.comparison._compare import (
    SUCCESS_DEFINITION,
    PairingError,
    compare,
    condition_of,
    expand_runs,
    success_of,
)
from mnemometer.comparison._gate import (
    GatePolicy,
    GateResult,
    gate,
    load_comparison,
    load_policy,
    render_gate,
)
from mnemometer.comparison._model import Comparison
from mnemometer.comparison._render import render
from mnemometer.comparison._sides import split_sides

__all__ = [
    "SUCCESS_DEFINITION",
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
    "render",
    "render_gate",
    "split_sides",
    "success_of",
]
