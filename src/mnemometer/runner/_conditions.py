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
    fallback: str | list[str] | None = None
    """Store (or stores, tried in order) used, with a note recorded in the run, when
    ``store`` cannot run here: its extra is missing, or it asks an LLM and the run has none."""
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
    "graph": Condition(
        store="graphiti",
        description="Graphiti's temporal knowledge graph (needs an LLM: --llm-base-url)",
    ),
    "full-memory": Condition(
        store="fusion",
        fallback=["hybrid", "bm25"],
        description="lexical + semantic + graph channels fused by reciprocal rank",
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


def system_for(name: str, cond: Condition, llm: Any = None) -> SystemSpec:
    """The system that will run condition ``name``: its own, or its first fallback that can.

    A store cannot run here when its extra is missing or when it asks an LLM while it
    stores and neither its options nor ``llm`` (the run's resolved settings) name one.
    Each system passed over is a note, recorded in every run of the condition and warned
    about.

    Raises:
        MnemometerError: neither it nor any fallback can run.
    """
    kind = "store" if cond.store else "agent"
    system = cond.store or cond.agent or ""
    fallbacks = [cond.fallback] if isinstance(cond.fallback, str) else list(cond.fallback or [])
    tried: list[str] = []
    for i, (what, candidate, options) in enumerate(
        [(kind, system, dict(cond.options)), *(("store", f, {}) for f in fallbacks)]
    ):
        reason = _unavailable(what, candidate, options, llm)
        if reason is None:
            if not tried:
                return SystemSpec(kind, system, options, name)
            note = f"condition {name!r}: {'; '.join(tried)}; fell back to {candidate!r}"
            warnings.warn(note, stacklevel=2)
            return SystemSpec("store", candidate, options, name, (note,))
        if i == 0 and not fallbacks:
            raise MnemometerError(f"condition {name!r}: {reason}")
        tried.append(f"{what} {candidate!r} unavailable ({reason})")
    raise MnemometerError(f"condition {name!r}: {'; '.join(tried)}")


def _unavailable(kind: str, name: str, options: dict[str, Any], llm: Any) -> str | None:
    """Why ``name`` cannot run here, or None."""
    try:
        factory = (STORES if kind == "store" else AGENTS).load(name, options)
    except MnemometerError as e:
        return str(e)
    needs = getattr(factory, "needs_llm", False)
    if callable(needs):
        needs = needs(options)
    if not needs:
        return None
    from mnemometer.llm import LLMError, require_settings

    try:
        require_settings(llm, base_url=options.get("base_url"), model=options.get("llm_model"))
    except LLMError:
        return "it asks an LLM while it stores: pass --llm-base-url URL --llm-model M"
    return None
