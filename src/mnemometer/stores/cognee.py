"""``cognee``: cognee's knowledge engine with its embedded defaults, in the run directory.

cognee keeps a relational database (SQLite), a vector database (LanceDB) and a graph
(Ladybug, a Kuzu fork) under one system directory, and the added texts under a data
directory; this store puts both inside its ``workdir``. Memories are added as documents;
``cognify`` (chunking, then one LLM extraction of a knowledge graph and one summary per
document) runs once per batch: on ``flush``, i.e. once per conversation in the
``retrieval`` suite (``cognify=each`` runs it per memory instead, to measure the
difference). Every document's name is cognee's hash of its text, so each retrieved chunk
maps back to the memories it holds.

Two search modes: ``chunks`` (vector search over the chunks; no LLM call) and
``graph_completion`` (the context cognee's graph completion retrieves for the question:
triplets of the graph and the chunks they come from, ranked by where the chunks appear;
the answer itself, an LLM call, is the reader's job and not asked for).

The LLM is the run's (``--llm-base-url``/``--llm-model``, or ``-S base_url=``); it and
cognee's embedding endpoint are reached through one metering relay on 127.0.0.1 per
process, which answers embeddings itself with the packaged MiniLM. cognee's configuration
is process-wide, so stores take turns: one cognee call at a time in a process.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import threading
from collections.abc import Sequence
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
from mnemometer.errors import MissingExtraError, MnemometerError
from mnemometer.stores._extracting import Ledger, LoopThread, llm_settings, reference_time
from mnemometer.stores._llm_relay import LLMRelay
from mnemometer.stores._protocol import Hit, IngestCost
from mnemometer.stores._ties import DEFAULT_TIE_SEED, check_seed, rank_rows, ranked_search
from mnemometer.stores._vector import data_dir

_EXTRA = "cognee"
_MODES = ("chunks", "graph_completion")
_NODE = re.compile(r"__node_content_start__\n(.*?)\n__node_content_end__", re.S)
_LOCK = threading.RLock()  # cognee's configuration is process-wide
_SHARED: dict[str, Any] = {}


def _process_parts(model: str) -> tuple[LLMRelay, LoopThread]:
    """The relay and event loop every cognee store of this process shares (made once).

    cognee reads its configuration from the environment on first use, so the environment
    is set here, before cognee is imported.
    """
    with _LOCK:
        if "relay" in _SHARED:
            return _SHARED["relay"], _SHARED["loop"]
        embedder = load_embedder(model)
        relay = LLMRelay(
            "http://127.0.0.1:9/v1",
            embed=lambda texts: embedder.encode(texts, cache=False).tolist(),
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
                "TELEMETRY_DISABLED": "1",
                "COGNEE_TELEMETRY_DISABLED": "1",
                "LITELLM_LOCAL_MODEL_COST_MAP": "True",
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


class CogneeStore:
    """cognee (graph + vector memory engine), embedded, with everything in the run directory.

    Args:
        mode: ``chunks`` or ``graph_completion`` (see the module docstring).
        cognify: ``batch`` (once per flush: per conversation) or ``each`` (per memory).
        model: ``minilm`` (packaged) or the directory of a sentence-transformers model
            (one per process: the first cognee store's).
        base_url: OpenAI-compatible endpoint (default: the run's ``--llm-base-url``).
        llm_model: model name (default: the run's ``--llm-model``).
        api_key: the endpoint's key, if it wants one.
        dated: write the memory's date before its text.
        retry_seconds: how long cognee keeps retrying an LLM reply it cannot use (cognee's
            own floor is 240 s per call, with at least two attempts; process-wide).
        llm: the run's LLM settings (given by the runner).
        workdir: the run's store directory (given by the runner).
        tie_seed: seed of the hash that orders equal scores (see ``docs/stores.md``).
    """

    requires = (("cognee", "cognee"), *MINILM_REQUIRES)
    """Optional modules, checked when the name is looked up."""

    abstains = False

    def __init__(
        self,
        mode: str = "chunks",
        cognify: str = "batch",
        model: str | os.PathLike[str] = DEFAULT_MODEL,
        base_url: str | None = None,
        llm_model: str | None = None,
        api_key: str | None = None,
        dated: bool = True,
        retry_seconds: float | None = None,
        llm: Any = None,
        workdir: Path | None = None,
        tie_seed: int = DEFAULT_TIE_SEED,
    ) -> None:
        self.tie_seed = check_seed(tie_seed)
        if mode not in _MODES:
            raise MnemometerError(f"cognee: mode must be one of {', '.join(_MODES)}, got {mode!r}")
        if cognify not in ("batch", "each"):
            raise MnemometerError(f"cognee: cognify must be batch or each, got {cognify!r}")
        self.mode = mode
        self.cognify = cognify
        self.dated = bool(dated)
        if importlib.util.find_spec("cognee") is None:  # before the environment is set
            raise MissingExtraError("the cognee store", _EXTRA, "cognee")
        self.settings = llm_settings(llm, base_url, llm_model, api_key, "the cognee store")
        self.relay, self._loop = _process_parts(str(model))
        self.model = _SHARED["model"]
        self.cognee = require("cognee", _EXTRA, "the cognee store")
        self.retry_seconds = retry_seconds
        if retry_seconds is not None:
            _retry_floor(float(retry_seconds))
        self.dir = data_dir(workdir, "cognee", self)
        self.dataset = "mnemometer"
        self.ledger = Ledger(self.relay, "cognee", self.settings.base_url)
        self._owners: dict[str, list[str]] = {}  # text hash -> memory ids
        self._pending: list[tuple[str, str]] = []  # (memory id, text) not cognified yet
        self._stored: dict[str, None] = {}

    def resolved_options(self) -> dict[str, Any]:
        """The mode, model and endpoint actually used, for the run log."""
        return {
            "mode": self.mode,
            "cognify": self.cognify,
            "retry_seconds": self.retry_seconds,
            "model": self.model,
            "base_url": self.settings.base_url,
            "llm_model": self.settings.model,
            "tie_seed": self.tie_seed,
        }

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

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        """Add one memory (cognified on ``flush``, or at once with ``cognify=each``)."""
        self.store_many([(text, metadata)])

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
