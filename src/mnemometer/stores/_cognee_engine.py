"""One cognee, in the process it runs in: what :class:`~mnemometer.stores.cognee.CogneeStore` drives.

cognee keeps its configuration (directories, LLM endpoint) process-wide and is set up from
the environment on first import, so an engine sets both, once per process, and every
engine of a process takes turns under one lock. The store runs its first engine in its own
process and each further one that is open at the same time in a worker process of its
own (:mod:`mnemometer.stores._worker`), where it is alone.

cognee embeds through an OpenAI-compatible endpoint: the metering relay answers it with
the packaged MiniLM (:class:`BatchedEmbed`: the requests cognee sends at once are embedded
in one model call, each distinct text once per process).
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mnemometer._registry import require
from mnemometer.embeddings import load_embedder, model_path, offline_env
from mnemometer.envfile import quiet_libraries
from mnemometer.stores._extracting import Ledger, LoopThread, reference_time
from mnemometer.stores._llm_relay import LLMRelay
from mnemometer.stores._protocol import Hit, IngestCost
from mnemometer.stores._ties import rank_rows, ranked_search

_EXTRA = "cognee"
_NODE = re.compile(r"__node_content_start__\n(.*?)\n__node_content_end__", re.S)
_LOCK = threading.RLock()  # cognee's configuration is process-wide
_SHARED: dict[str, Any] = {}


class BatchedEmbed:
    """Embed what concurrent requests ask for in one model call; each distinct text once.

    cognee sends its embedding requests a few texts at a time, many at once (chunks,
    summaries, entity names, edge types; the same names again for every document): one
    model call each was most of a memory's ingest time. Requests that arrive while the
    model is busy queue their texts; the next caller embeds the whole queue. A text's
    vector is kept for the process, so a repeated text gets the identical vector.

    Args:
        encode: the model (``texts -> rows of floats``), called by one thread at a time.
    """

    def __init__(self, encode: Callable[[list[str]], Any]) -> None:
        self._encode = encode
        self._mu = threading.Lock()  # guards the queue and the vectors
        self._model = threading.Lock()  # one model call at a time
        self._queue: set[str] = set()
        self._vectors: dict[str, list[float]] = {}
        self.model_calls = 0

    def __call__(self, texts: list[str]) -> list[list[float]]:
        """The vectors of ``texts``, in order."""
        with self._mu:
            self._queue.update(t for t in texts if t not in self._vectors)
        with self._model:
            with self._mu:
                todo, self._queue = sorted(self._queue), set()
            if todo:  # else an earlier caller embedded ours with its own
                rows = self._encode(todo)
                with self._mu:
                    self._vectors.update(
                        zip(todo, (list(map(float, r)) for r in rows), strict=True)
                    )
                    self.model_calls += 1
        with self._mu:
            return [self._vectors[t] for t in texts]


def _process_parts(model: str) -> tuple[LLMRelay, LoopThread]:
    """The relay and event loop every cognee engine of this process shares (made once).

    cognee reads its configuration from the environment on first use, so the environment
    is set here, before cognee is imported.
    """
    with _LOCK:
        if "relay" in _SHARED:
            return _SHARED["relay"], _SHARED["loop"]
        embedder = load_embedder(model)
        relay = LLMRelay(
            "http://127.0.0.1:9/v1",
            embed=BatchedEmbed(lambda texts: embedder.encode(texts, cache=False)),
        )
        offline_env()
        os.environ.update(
            {
                "EMBEDDING_PROVIDER": "openai_compatible",
                "EMBEDDING_ENDPOINT": relay.base_url,
                "EMBEDDING_MODEL": "openai/mnemometer-minilm",
                "EMBEDDING_DIMENSIONS": str(embedder.dim),
                "EMBEDDING_API_KEY": "local",
                "HUGGINGFACE_TOKENIZER": model_path(model),
                "CACHING": "false",
            }
        )
        # cognee logs every pipeline task at INFO and keeps a log file in ~/.cognee/logs
        os.environ.setdefault("COGNEE_LOG_FILE", "false")
        os.environ.setdefault("LOG_LEVEL", "ERROR")
        try:  # litellm ships tiktoken's cl100k_base; without this it downloads it
            import litellm

            tokens = Path(litellm.__file__).parent / "litellm_core_utils" / "tokenizers"
            os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(tokens))
        except ImportError:
            pass
        _SHARED.update(relay=relay, loop=LoopThread("mnemometer-cognee"), model=embedder.path)
        return relay, _SHARED["loop"]


class CogneeEngine:
    """One cognee database, driven in this process (see :class:`~mnemometer.stores.cognee.CogneeStore`).

    Args:
        directory: where cognee keeps its databases and data.
        settings: the LLM endpoint (:class:`mnemometer.llm.LLMSettings`).
        mode: ``chunks`` or ``graph_completion``.
        cognify: ``batch`` or ``each``.
        model: the embedding model (one per process: the first engine's).
        dated: write the memory's date before its text.
        retry_seconds: cognee's minimum retry time for an LLM reply (process-wide).
        tie_seed: seed of the hash that orders equal scores.
    """

    def __init__(
        self,
        directory: Path,
        settings: Any,
        mode: str,
        cognify: str,
        model: str,
        dated: bool,
        retry_seconds: float | None,
        tie_seed: int,
    ) -> None:
        quiet_libraries()  # before `require` imports cognee (and litellm, posthog with it)
        self.mode, self.cognify, self.dated, self.tie_seed = mode, cognify, dated, tie_seed
        self.settings = settings
        self.relay, self._loop = _process_parts(model)
        self.model = _SHARED["model"]
        self.cognee = require("cognee", _EXTRA, "the cognee store")
        if retry_seconds is not None:
            _retry_floor(float(retry_seconds))
        self.dir = Path(directory)
        self.dataset = "mnemometer"
        self.ledger = Ledger(self.relay, "cognee", self.settings.base_url)
        self._owners: dict[str, list[str]] = {}  # text hash -> memory ids
        self._pending: list[tuple[str, str]] = []  # (memory id, text) not cognified yet
        self._stored: dict[str, None] = {}

    def _call(self, make: Any) -> Any:
        """Run one cognee coroutine with this store's directories and endpoint."""
        with _LOCK:
            self.relay.upstream = self.settings.base_url.rstrip("/")
            cfg = self.cognee.config
            cfg.system_root_directory(str(self.dir / "system"))
            cfg.data_root_directory(str(self.dir / "data"))
            cfg.set_llm_config(
                {
                    "llm_provider": "openai",
                    "llm_model": f"openai/{self.settings.model}",
                    "llm_endpoint": self.relay.base_url,
                    "llm_api_key": self.settings.api_key or "local",
                }
            )
            return self._loop.run(make())

    def close(self) -> None:
        """Nothing to release (the relay and loop serve the whole process)."""

    def reset(self) -> None:
        """Forget everything: cognee's own prune of this store's data and system."""
        with _LOCK:
            self._call(self._prune)
            self._owners.clear()
            self._pending.clear()
            self._stored.clear()
            self.ledger.clear()

    async def _prune(self) -> None:
        await self.cognee.prune.prune_data()
        await self.cognee.prune.prune_system(metadata=True)

    def store_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Add memories; with ``cognify=each`` each is cognified as it comes."""
        for text, metadata in items:
            if self.dated and metadata.get("timestamp"):
                day = reference_time(metadata["timestamp"]).date().isoformat()
                text = f"[{day}] {text}"
            self._pending.append((str(metadata["memory_id"]), text))
            if self.cognify == "each":
                self.flush()

    def flush(self) -> None:
        """Add and cognify everything pending, as one batch; a failure is recorded."""
        with _LOCK:
            batch, self._pending = self._pending, []
            if not batch:
                return
            for mid, text in batch:
                self._owners.setdefault(_hash(text), []).append(mid)
            ids = [mid for mid, _ in batch]
            ok, _ = self.ledger.run(ids, lambda: self._call(lambda: self._cognify(batch)))
            if ok:
                self._stored.update(dict.fromkeys(ids))

    async def _cognify(self, batch: list[tuple[str, str]]) -> int:
        before = await _edge_count()
        await self.cognee.add([text for _, text in batch], dataset_name=self.dataset)
        await self.cognee.cognify(datasets=[self.dataset])
        return max(0, await _edge_count() - before)

    def ingest_costs(self) -> list[IngestCost]:
        """LLM calls, tokens, seconds and failures of every cognify since ``reset``."""
        return self.ledger.costs()

    def list_ids(self) -> list[str]:
        """Ids of the memories cognified without error."""
        return list(self._stored)

    def search(self, query: str, top_k: int) -> list[Hit]:
        """Chunks, or the chunks in the graph-completion context; each credits its memories."""
        if self._pending:
            self.flush()
        if top_k <= 0 or not query.strip() or not self._stored:
            return []
        if self.mode == "chunks":

            def rows(n: int) -> list[tuple[str, float, str]]:
                found = self._call(lambda: self._search("CHUNKS", query, n, False))
                out = []
                for chunk in _results(found):
                    text = str(chunk.get("text", ""))
                    score = 1.0 - float(chunk.get("score") or 0.0)  # cognee gives a distance
                    out.extend((mid, score, text) for mid in self._credit(chunk, text))
                return out

            return ranked_search(rows, top_k, self.tie_seed, limit=max(len(self._stored), 1))
        found = self._call(lambda: self._search("GRAPH_COMPLETION", query, top_k * 4 + 8, True))
        rows = []
        for context in _results(found):
            for rank, text in enumerate(_NODE.findall(str(context))):
                for mid in self._owners.get(_hash(text), []):
                    rows.append((mid, 1.0 / (rank + 1), text))
        return rank_rows(rows, top_k, self.tie_seed)

    def _credit(self, chunk: dict[str, Any], text: str) -> list[str]:
        name = str(chunk.get("document_name") or "")
        if name.startswith("text_") and name[5:] in self._owners:
            return self._owners[name[5:]]
        return self._owners.get(_hash(text), [])

    async def _search(self, kind: str, query: str, n: int, context: bool) -> Any:
        from cognee import SearchType

        return await self.cognee.search(
            query_text=query,
            query_type=getattr(SearchType, kind),
            datasets=[self.dataset],
            top_k=n,
            only_context=context,
        )


def _retry_floor(seconds: float) -> None:
    """Set cognee's minimum retry time for LLM calls (a process-wide tenacity condition)."""
    from cognee.infrastructure.llm import retry_config

    for stop in getattr(retry_config.llm_retry_stop_condition, "stops", ()):
        if hasattr(stop, "max_delay"):
            stop.max_delay = seconds


def _hash(text: str) -> str:
    """The name cognee gives a text document: the MD5 of its text."""
    return hashlib.md5(text.encode("utf-8")).hexdigest()


def _results(found: Any) -> list[Any]:
    """The search results, flattened over datasets."""
    out: list[Any] = []
    for entry in found or []:
        result = entry.get("search_result") if isinstance(entry, dict) else entry
        if isinstance(result, list):
            out.extend(result)
        elif result is not None:
            out.append(result)
    return out


async def _edge_count() -> int:
    from cognee.infrastructure.databases.graph import get_graph_engine

    try:
        engine = await get_graph_engine()
        _, edges = await engine.get_graph_data()
        return len(edges)
    except Exception:  # noqa: BLE001 - an empty or new graph
        return 0
