"""``fusion``: every retrieval channel (lexical, semantic, graph) fused by reciprocal rank.

Memory Layer's full-memory condition searched lexically, semantically and over a graph and
fused the three. This store does the same with the parts mnemometer has: BM25 (lexical),
dense MiniLM embeddings (semantic) and Graphiti's temporal knowledge graph (graph), each
asked for its best ``depth`` memories, fused by weighted reciprocal rank fusion (the
``hybrid`` store's :func:`~mnemometer.stores.hybrid.fused_hits`). The channels actually
used are recorded in the run log (``channels``): the semantic channel is dropped on
Chinese data with the English-only packaged model, as ``hybrid`` does.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mnemometer.embeddings import DEFAULT_MODEL, MINILM_REQUIRES, is_default
from mnemometer.errors import MnemometerError
from mnemometer.stores._protocol import Hit, IngestCost
from mnemometer.stores._ties import DEFAULT_TIE_SEED, check_seed
from mnemometer.stores.hybrid import fused_hits
from mnemometer.text import detect_language

CHANNELS = ("lexical", "semantic", "graph")


def _channels(value: str | Sequence[str]) -> tuple[str, ...]:
    names = value.split(",") if isinstance(value, str) else list(value)
    out = tuple(dict.fromkeys(n.strip() for n in names if n.strip()))
    bad = [n for n in out if n not in CHANNELS]
    if bad or not out:
        raise MnemometerError(
            f"fusion: channels must be some of {', '.join(CHANNELS)}, got {value!r}"
        )
    return out


_SAMPLE = 200  # texts detect_language looks at (its own default sample)


class FusionStore:
    """Lexical, semantic and graph retrieval fused by weighted reciprocal rank.

    Args:
        channels: the channels to fuse (``lexical``, ``semantic``, ``graph``; a list or a
            comma-separated string).
        weights: one RRF weight per channel, by name (default 1 each).
        rrf_k: RRF rank offset (60 in the original paper).
        depth: candidates taken from each channel before fusion.
        model: ``minilm`` (packaged) or a sentence-transformers directory, for the
            semantic channel (and Graphiti's embeddings).
        graph: options for the ``graphiti`` store (``backend``, ``base_url``, ...).
        lang: ``en``, ``zh`` or ``auto``.
        llm: the run's LLM settings (given by the runner; the graph channel asks it).
        workdir: the run's store directory (given by the runner).
        tie_seed: seed of the hash that orders equal scores.
    """

    requires = MINILM_REQUIRES
    """Optional modules, checked when the name is looked up (the graph channel's are
    checked when it is built)."""

    abstains = False

    @staticmethod
    def needs_llm(options: dict[str, Any]) -> bool:
        """Whether a store built with ``options`` asks the run's LLM.

        Its graph channel does, unless its own ``graph`` options name an endpoint and a model.
        """
        graph = options.get("graph") or {}
        own = bool(graph.get("base_url") and graph.get("llm_model"))
        return "graph" in _channels(options.get("channels", CHANNELS)) and not own

    def __init__(
        self,
        channels: str | Sequence[str] = CHANNELS,
        weights: dict[str, float] | None = None,
        rrf_k: float = 60.0,
        depth: int = 100,
        model: str | os.PathLike[str] = DEFAULT_MODEL,
        graph: dict[str, Any] | None = None,
        lang: str = "auto",
        llm: Any = None,
        workdir: Path | None = None,
        tie_seed: int = DEFAULT_TIE_SEED,
    ) -> None:
        from mnemometer.stores._factory import create_store

        self.requested = _channels(channels)
        weights = dict(weights or {})
        unknown = set(weights) - set(CHANNELS)
        if unknown or any(float(w) < 0 for w in weights.values()) or float(rrf_k) < 0:
            raise MnemometerError(
                "fusion: weights are non-negative numbers by channel name "
                f"({', '.join(CHANNELS)}) and rrf_k is non-negative"
            )
        if int(depth) < 1:
            raise MnemometerError(f"fusion: depth must be at least 1, got {depth}")
        self.weights = {c: float(weights.get(c, 1.0)) for c in CHANNELS}
        self.rrf_k, self.depth, self.lang = float(rrf_k), int(depth), lang
        self.model = str(model)
        self.tie_seed = check_seed(tie_seed)
        self.parts: dict[str, Any] = {}
        context = {"lang": lang, "workdir": workdir, "llm": llm, "tie_seed": self.tie_seed}
        if "lexical" in self.requested:
            self.parts["lexical"] = create_store("bm25", {}, **context)
        if "semantic" in self.requested and not (lang.startswith("zh") and is_default(model)):
            self.parts["semantic"] = create_store("dense", {"model": model}, **context)
        if "graph" in self.requested:
            opts = {"model": model, **(graph or {})}
            self.parts["graph"] = create_store("graphiti", opts, **context)
        self._decided = lang != "auto"
        self._sample: list[str] = []  # the first texts, to tell the language under "auto"

    def resolved_options(self) -> dict[str, Any]:
        """The channels actually fused (after the language rule), for the run log."""
        out: dict[str, Any] = {"channels": list(self.parts), "tie_seed": self.tie_seed}
        graph = self.parts.get("graph")
        if graph is not None:
            out["graph"] = graph.resolved_options()
        return out

    def reset(self) -> None:
        """Forget everything, in every channel."""
        for part in self.parts.values():
            part.reset()

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        """Remember ``text`` under ``metadata['memory_id']`` in every channel."""
        self.store_many([(text, metadata)])

    def store_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Store every ``(text, metadata)`` pair in every channel."""
        if not self._decided and len(self._sample) < _SAMPLE:
            self._sample += [text for text, _ in items[: _SAMPLE - len(self._sample)]]
        for part in self.parts.values():
            many = getattr(part, "store_many", None)
            if callable(many):
                many(items)
            else:
                for text, meta in items:
                    part.store(text, meta)

    def flush(self) -> None:
        """Index every channel; with ``lang=auto`` drop the semantic one on Chinese data."""
        if not self._decided:  # decided once, from the first texts, whichever channels
            if detect_language(self._sample) == "zh" and is_default(self.model):
                self.parts.pop("semantic", None)
            self._decided = True
        for part in self.parts.values():
            flush = getattr(part, "flush", None)
            if callable(flush):
                flush()

    def list_ids(self) -> list[str]:
        """Ids of every memory kept by any channel."""
        ids: dict[str, None] = {}
        for part in self.parts.values():
            ids.update(dict.fromkeys(part.list_ids()))
        return list(ids)

    def ingest_costs(self) -> list[IngestCost]:
        """The graph channel's LLM costs (the other channels ask no model)."""
        graph = self.parts.get("graph")
        return graph.ingest_costs() if graph is not None else []

    def close(self) -> None:
        """Close the channels that hold resources (the graph's database and relay)."""
        for part in self.parts.values():
            close = getattr(part, "close", None)
            if callable(close):
                close()

    def search(self, query: str, top_k: int) -> list[Hit]:
        """At most ``top_k`` memories by fused rank, best first."""
        if not self._decided:
            self.flush()
        if top_k <= 0 or not query.strip():
            return []
        depth = max(self.depth, top_k)
        found = {name: part.search(query, depth) for name, part in self.parts.items()}
        weights = [self.weights[name] for name in found]
        return fused_hits(list(found.values()), weights, self.rrf_k, self.tie_seed, top_k)
