"""Conditions: named configurations of the system under test, data-driven.

A condition maps a name to a registered store and its options. The built-in defaults
below can be overridden or extended with a TOML file of ``[NAME]`` tables::

    [bm25-tuned]
    store = "bm25"
    options = { k1 = 1.5 }
    description = "BM25 with a higher k1"
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from mnemometer._registry import AGENTS, STORES
from mnemometer.config import StrictModel, read_document, validate
from mnemometer.errors import MnemometerError, UnknownNameError, did_you_mean
from mnemometer.systems import SystemSpec


class Condition(StrictModel):
    """One condition: which store (or agent) runs, with which options."""

    store: str | None = Field(None, min_length=1)
    """Registered store name (see ``mnemometer list stores``)."""
    agent: str | None = Field(None, min_length=1)
    """Registered agent name instead of a store (``rag``, ``mem0``, ...): the suite seeds
    it by message and asks it each question."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Options for the store's (or agent's) factory."""
    fallback: str | None = None
    """Store used, with a warning recorded in the run, when ``store`` cannot load."""
    description: str = ""
    """What the condition means."""

    @model_validator(mode="after")
    def _one_system(self) -> Condition:
        if (self.store is None) == (self.agent is None):
            raise ValueError("give exactly one of 'store' and 'agent'")
        return self


DEFAULT_CONDITIONS: dict[str, Condition] = {
    "no-memory": Condition(store="none", description="nothing is remembered (baseline)"),
    "lexical": Condition(store="bm25", description="BM25 over the seeded memories"),
    "semantic": Condition(
        store="dense",
        fallback="bm25",
        description="dense embeddings (MiniLM) over the seeded memories",
    ),
    "hybrid": Condition(
        store="hybrid", fallback="bm25", description="BM25 and dense fused by reciprocal rank"
    ),
    "full-memory": Condition(
        store="hybrid",
        fallback="bm25",
        description="every retrieval channel we have (today: hybrid)",
    ),
}


def load_conditions(path: str | Path | None) -> dict[str, Condition]:
    """The default conditions, overridden and extended by a TOML file when given.

    Raises:
        MnemometerError: missing file, malformed TOML, unknown keys.
    """
    out = dict(DEFAULT_CONDITIONS)
    if path is None:
        return out
    p = Path(path)
    for name, table in read_document(p, what="conditions file").items():
        if not isinstance(table, dict):
            raise MnemometerError(f'{p}: {name!r} must be a table: [{name}] store = "..."')
        out[name] = validate(Condition, table, f"{p}: [{name}]")
    return out


def resolve(name: str, conditions: dict[str, Condition]) -> Condition:
    """The condition called ``name``.

    Raises:
        UnknownNameError: with "did you mean" and the known names.
    """
    if name not in conditions:
        raise UnknownNameError(
            f"unknown condition {name!r}{did_you_mean(name, list(conditions))}; known: "
            f"{', '.join(conditions)} (or define it in a --conditions TOML file)"
        )
    return conditions[name]


def system_for(name: str, cond: Condition) -> SystemSpec:
    """The system that will run condition ``name``: its own, or its fallback with a note.

    The fallback is taken only when the condition's store or agent cannot load here (a
    missing extra); the note is recorded in every run of the condition and warned about.

    Raises:
        MnemometerError: it cannot load and there is no fallback.
    """
    kind = "store" if cond.store else "agent"
    system = cond.store or cond.agent or ""
    try:
        (STORES if cond.store else AGENTS).load(system)
        return SystemSpec(kind, system, dict(cond.options), name)
    except MnemometerError as e:
        if cond.fallback is None:
            raise MnemometerError(f"condition {name!r}: {e}") from None
        note = (
            f"condition {name!r}: {kind} {system!r} unavailable ({e}); "
            f"fell back to {cond.fallback!r}"
        )
        warnings.warn(note, stacklevel=2)
        return SystemSpec("store", cond.fallback, {}, name, (note,))
