"""Prices of LLM tokens: LiteLLM's bundled price map, pinned by its hash, and your overrides.

The map is ``model_prices_and_context_window_backup.json`` as the installed LiteLLM wheel
ships it, read from the file (LiteLLM is never imported and nothing is fetched: the map
LiteLLM would download at import is exactly what a run must not depend on). A run records
the map's SHA-256 and LiteLLM's version, and the price it found for each model it asks, so
its dollars never change after the fact.

An override file (``--prices FILE``, TOML or JSON) prices models the map lacks or prices
differently (a local server that costs nothing, a negotiated rate)::

    [models."my-model"]
    input_per_million = 0.15     # USD per million prompt tokens
    output_per_million = 0.60    # USD per million completion tokens

``input_cost_per_token`` / ``output_cost_per_token`` (the map's own fields, USD per token)
may be given instead, so a map entry can be pasted as it is. Overrides win over the map.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from mnemometer.config import StrictModel, load_model
from mnemometer.llm._tokens import litellm_root, litellm_version

PRICE_MAP_FILE = "model_prices_and_context_window_backup.json"
"""LiteLLM's bundled price map, inside the installed ``litellm`` package."""


class PriceEntry(StrictModel):
    """One model's price in an override file (USD; per million tokens or per token)."""

    input_per_million: float | None = Field(default=None, ge=0)
    """USD per million prompt tokens."""
    output_per_million: float | None = Field(default=None, ge=0)
    """USD per million completion tokens."""
    input_cost_per_token: float | None = Field(default=None, ge=0)
    """USD per prompt token (the price map's own field)."""
    output_cost_per_token: float | None = Field(default=None, ge=0)
    """USD per completion token (the price map's own field)."""

    @model_validator(mode="after")
    def _one_each(self) -> PriceEntry:
        for side in ("input", "output"):
            given = [
                x
                for x in (
                    getattr(self, f"{side}_per_million"),
                    getattr(self, f"{side}_cost_per_token"),
                )
                if x is not None
            ]
            if len(given) != 1:
                raise ValueError(
                    f"give exactly one of {side}_per_million and {side}_cost_per_token"
                )
        return self

    def per_token(self) -> tuple[float, float]:
        """(input, output) USD per token."""
        i = self.input_cost_per_token
        o = self.output_cost_per_token
        if i is None:
            i = (self.input_per_million or 0.0) / 1e6
        if o is None:
            o = (self.output_per_million or 0.0) / 1e6
        return i, o


class PriceFile(StrictModel):
    """An override file: ``[models."NAME"]`` tables."""

    models: dict[str, PriceEntry] = Field(default_factory=dict)
    """Model name (as the run asks it) -> its price."""


@dataclass(frozen=True)
class Price:
    """What one model's tokens cost (USD per token), and where the figure came from."""

    model: str
    """The model as the run asks it."""
    key: str
    """The price map's entry (or the override's name) that priced it."""
    input_per_token: float
    """USD per prompt token."""
    output_per_token: float
    """USD per completion token."""
    source: str
    """``litellm`` (the bundled map) or ``override``."""


@dataclass(frozen=True)
class PriceBook:
    """The price map and the overrides a run prices its models with."""

    source: str
    """``litellm 1.110.2 model_prices_and_context_window_backup.json``, or ``none``."""
    sha256: str | None
    """SHA-256 of the map file's bytes (``None``: no map installed)."""
    overrides_path: str | None = None
    """The override file, if any."""
    overrides_sha256: str | None = None
    """Its SHA-256."""
    entries: Mapping[str, Any] = field(default_factory=dict, repr=False)
    overrides: Mapping[str, PriceEntry] = field(default_factory=dict, repr=False)

    def price(self, model: str) -> Price | None:
        """The price of ``model``, or ``None`` when neither the overrides nor the map have it.

        Tried in order: an override of that name; the map's entry of that name; without a
        provider prefix (``openai/gpt-4o-mini`` -> ``gpt-4o-mini``) when the entry is that
        provider's.
        """
        if model in self.overrides:
            i, o = self.overrides[model].per_token()
            return Price(model, model, i, o, "override")
        for key in _candidates(model):
            entry = self.entries.get(key)
            if key == "sample_spec" or not isinstance(entry, Mapping):
                continue
            provider = model.split("/", 1)[0] if "/" in model and key != model else None
            if provider is not None and entry.get("litellm_provider") != provider:
                continue
            i, o = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
            if i is None and o is None:
                continue
            return Price(model, key, float(i or 0.0), float(o or 0.0), "litellm")
        return None


def _candidates(model: str) -> list[str]:
    out = [model]
    if "/" in model:
        out.append(model.split("/", 1)[1])
    return out


def price_map_path() -> Path | None:
    """The installed LiteLLM's bundled price map (``None``: LiteLLM is not installed)."""
    root = litellm_root()
    path = root / PRICE_MAP_FILE if root is not None else None
    return path if path is not None and path.is_file() else None


def load_prices(overrides: str | Path | None = None) -> PriceBook:
    """The bundled map (when LiteLLM is installed) and the override file (when given).

    Raises:
        MnemometerError: an unreadable or invalid override file (naming the field).
    """
    path = price_map_path()
    entries: Mapping[str, Any] = {}
    source, digest = "none", None
    if path is not None:
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        entries = json.loads(data)
        source = f"litellm {litellm_version()} {PRICE_MAP_FILE}"
    extra: Mapping[str, PriceEntry] = {}
    opath = osha = None
    if overrides is not None:
        extra = load_model(overrides, PriceFile, what="price file").models
        opath = str(Path(overrides).resolve())
        osha = hashlib.sha256(Path(overrides).read_bytes()).hexdigest()
    return PriceBook(source, digest, opath, osha, entries, extra)


def no_price(model: str) -> str:
    """The note for a model no price covers."""
    return f"no price for model {model!r}: add it with --prices FILE"


__all__ = [
    "PRICE_MAP_FILE",
    "Price",
    "PriceBook",
    "PriceEntry",
    "PriceFile",
    "load_prices",
    "no_price",
    "price_map_path",
]
