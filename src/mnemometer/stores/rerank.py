"""``rerank``: a second stage that re-orders any store's candidates.

The base store retrieves ``depth`` candidates; a reranker scores each ``(query, text)``
pair and the best ``top_k`` are returned. Rerankers: ``dense`` (bi-encoder cosine, the
packaged MiniLM by default), ``cross-encoder`` (a sentence-transformers ``CrossEncoder``
loaded by path) and ``llm`` (an OpenAI-compatible endpoint asked for a JSON-constrained
relevance verdict). A new reranker is a class with ``scores(query, texts) -> list[float]``
added to :data:`RERANKERS`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mnemometer._registry import require
from mnemometer.embeddings import (
    DEFAULT_MODEL,
    MINILM_REQUIRES,
    load_embedder,
    model_path,
    offline_env,
)
from mnemometer.errors import MnemometerError
from mnemometer.stores._protocol import Hit
from mnemometer.stores._ties import DEFAULT_TIE_SEED, check_seed


class DenseReranker:
    """Cosine similarity of query and candidate embeddings (any sentence-transformers model)."""

    def __init__(self, model: str | None = None, **_: Any) -> None:
        self.embedder = load_embedder(model or DEFAULT_MODEL)
        self.model = self.embedder.path

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """One cosine per text."""
        vecs = self.embedder.encode([query, *texts], cache=False)  # search time: never cached
        return [float(x) for x in vecs[1:] @ vecs[0]]


class CrossEncoderReranker:
    """A sentence-transformers ``CrossEncoder`` loaded from a local directory."""

    def __init__(self, model: str | None = None, **_: Any) -> None:
        if not model:
            raise MnemometerError(
                "rerank by cross-encoder needs a model directory: -S model=/path/to/cross-encoder"
            )
        self.model = model_path(model)
        offline_env()
        st = require("sentence_transformers", "embeddings", "the cross-encoder reranker")
        try:
            self._ce = st.CrossEncoder(self.model, device="cpu")
        except Exception as e:
            raise MnemometerError(
                f"cross-encoder {self.model}: could not load it ({type(e).__name__}: {str(e)[:200]})"
            ) from None

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance logit per text."""
        out = self._ce.predict([(query, t) for t in texts], show_progress_bar=False)
        return [float(x) for x in out]


_VERDICT_SCHEMA = {
    "type": "object",
    "properties": {
        "verdicts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer"},
                    "relevance": {"type": "integer", "minimum": 0, "maximum": 3},
                },
                "required": ["id", "relevance"],
            },
        }
    },
    "required": ["verdicts"],
}
_PROMPT = (
    "Rate how useful each numbered memory is for answering the question. "
    "relevance: 3 = answers it, 2 = directly related, 1 = loosely related, 0 = unrelated. "
    'Reply with JSON only: {"verdicts": [{"id": <number>, "relevance": <0-3>}, ...]}.'
)


class LLMReranker:
    """An LLM's 0–3 relevance verdict per candidate, one JSON-constrained call per query.

    The endpoint is the run's (``llm``, from ``--llm-base-url``/``--llm-model`` or the
    environment); ``model``, ``base_url`` and ``timeout``, when given, win over it.
    Candidates the reply does not mention score 0; ties keep the base store's order.
    """

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        timeout: float | None = None,
        llm: Any = None,
        **_: Any,
    ) -> None:
        from mnemometer.llm import LLMClient, require_settings

        settings = require_settings(llm, base_url=base_url, model=model, timeout=timeout)
        self.client = LLMClient.from_settings(settings)
        self.model = settings.model

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """One verdict per text (0 when the reply leaves it out)."""
        listing = "\n".join(f"[{i}] {t}" for i, t in enumerate(texts))
        reply = self.client.chat_json(
            [
                {"role": "system", "content": _PROMPT},
                {"role": "user", "content": f"Question: {query}\n\nMemories:\n{listing}"},
            ],
            _VERDICT_SCHEMA,
            name="relevance",
        )
        verdicts = reply.get("verdicts") if isinstance(reply, dict) else None
        if not isinstance(verdicts, list):
            raise MnemometerError(f"LLM reranker: reply has no 'verdicts' list: {reply!r:.200}")
        out = [0.0] * len(texts)
        for v in verdicts:
            try:
                i, rel = int(v["id"]), float(v["relevance"])
            except (KeyError, TypeError, ValueError):
                continue  # one malformed verdict does not void the others
            if 0 <= i < len(texts):
                out[i] = max(0.0, min(3.0, rel))
        return out


#: Reranker name → factory taking ``model`` (and, for ``llm``, endpoint settings).
RERANKERS: dict[str, Callable[..., Any]] = {
    "dense": DenseReranker,
    "cross-encoder": CrossEncoderReranker,
    "llm": LLMReranker,
}


class RerankStore:
    """Any store's candidates re-ordered by a second stage (dense, cross-encoder or LLM).

    Args:
        base: the first-stage store's registered name.
        base_options: options for the base store.
        by: ``dense``, ``cross-encoder`` or ``llm``.
        model: the reranker's model: a directory (``dense``, ``cross-encoder``; ``dense``
            defaults to the packaged MiniLM) or the LLM's model name (``llm``).
        depth: candidates taken from the base store and rescored.
        base_url: OpenAI-compatible endpoint for ``llm`` (default: the run's).
        timeout: seconds per LLM request (default: the run's).
        lang: passed on to the base store.
        workdir: passed on to the base store.
        llm: the run's LLM settings (given by the runner), for ``by=llm`` and the base.
        tie_seed: passed on to the base store (when it takes one and ``base_options`` do
            not set it). Equal rerank scores keep the base store's order, which is itself
            free of insertion order: the base breaks its own ties by this seed.
    """

    requires = MINILM_REQUIRES
    """Optional modules, checked when the name is looked up."""

    def __init__(
        self,
        base: str = "bm25",
        base_options: dict[str, Any] | None = None,
        by: str = "dense",
        model: str | os.PathLike[str] | None = None,
        depth: int = 50,
        base_url: str | None = None,
        timeout: float | None = None,
        lang: str | None = None,
        workdir: Path | None = None,
        tie_seed: int = DEFAULT_TIE_SEED,
        llm: Any = None,
    ) -> None:
        from mnemometer.stores._factory import create_store

        if by not in RERANKERS:
            raise MnemometerError(f"rerank: by must be one of {', '.join(RERANKERS)}, got {by!r}")
        if base == "rerank":
            raise MnemometerError("rerank: the base store cannot itself be 'rerank'")
        if int(depth) < 1:
            raise MnemometerError(f"rerank: depth must be at least 1, got {depth}")
        if base_options is not None and not isinstance(base_options, dict):
            raise MnemometerError("rerank: base_options must be a JSON object")
        self.base_name = base
        self.by = by
        self.depth = int(depth)
        self.tie_seed = check_seed(tie_seed)
        self.base = create_store(
            base, base_options, lang=lang, workdir=workdir, llm=llm, tie_seed=self.tie_seed
        )
        self.reranker = RERANKERS[by](
            model=None if model is None else str(model), base_url=base_url, timeout=timeout, llm=llm
        )

    @property
    def abstains(self) -> bool:
        """Reranking adds nothing: an empty result means what it means for the base."""
        return bool(getattr(self.base, "abstains", False))

    def resolved_options(self) -> dict[str, Any]:
        """The reranker model actually used and the tie seed, for the run log."""
        return {"model": self.reranker.model, "tie_seed": self.tie_seed}

    def __getattr__(self, name: str) -> Any:
        # Optional capabilities are the base store's own (delete, list_ids, set_time).
        if name in ("delete", "list_ids", "set_time") and "base" in self.__dict__:
            return getattr(self.base, name)
        raise AttributeError(name)

    def reset(self) -> None:
        """Forget everything."""
        self.base.reset()

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        """Store in the base store."""
        self.base.store(text, metadata)

    def store_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Store in the base store (batched when it can)."""
        many = getattr(self.base, "store_many", None)
        if callable(many):
            many(items)
        else:
            for text, metadata in items:
                self.base.store(text, metadata)

    def flush(self) -> None:
        """Flush the base store when it can."""
        flush = getattr(self.base, "flush", None)
        if callable(flush):
            flush()

    def search(self, query: str, top_k: int) -> list[Hit]:
        """Rescore the base store's best ``depth`` candidates; return the best ``top_k``."""
        if top_k <= 0:
            return []
        cands = [Hit.coerce(h) for h in self.base.search(query, max(self.depth, top_k))]
        if any(not h.text for h in cands):
            raise MnemometerError(
                f"rerank: base store {self.base_name!r} returns hits without their text; "
                "a reranker needs the text"
            )
        if not cands or not query.strip():
            return cands[:top_k]
        scores = self.reranker.scores(query, [h.text for h in cands])
        # Equal rerank scores (an LLM's 0-3 verdicts) keep the base store's order: a cascade
        # as deployed, and free of insertion order because the base breaks its ties by the
        # seeded id hash.
        order = sorted(range(len(cands)), key=lambda i: (-scores[i], i))
        return [Hit(cands[i].memory_id, scores[i], cands[i].text) for i in order[:top_k]]
