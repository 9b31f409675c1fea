"""``mem0``: the open-source mem0 ``Memory`` class embedded and offline, or a remote Mem0.

``mode=platform`` (the hosted API, ``MEM0_API_KEY``) and ``mode=server`` (the self-hosted
REST server, ``MEM0_BASE_URL``) talk to Mem0 as people deploy it (see
:mod:`mnemometer.stores._mem0_remote`).
"""

from __future__ import annotations

import logging
import os
import threading
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mnemometer._registry import require
from mnemometer.embeddings import (
    DEFAULT_BATCH,
    DEFAULT_MODEL,
    MINILM_REQUIRES,
    Embedder,
    load_embedder,
    offline_env,
)
from mnemometer.envfile import quiet_libraries
from mnemometer.errors import MnemometerError
from mnemometer.stores._mem0_remote import Mem0Remote, check_mode
from mnemometer.stores._protocol import Hit
from mnemometer.stores._ties import DEFAULT_TIE_SEED, check_seed, ranked_search
from mnemometer.stores._vector import data_dir, locked

_DUMMY_LLM = "http://127.0.0.1:9/v1"  # never called with infer=False; mem0 builds it eagerly
_VECTOR_STORES = ("qdrant", "faiss")


def import_mem0(home: Path, what: str) -> Any:
    """``mem0``, imported with its config directory at ``home`` and its notices quiet.

    mem0 writes ``~/.mem0`` at import unless ``MEM0_DIR`` says otherwise, so it is set
    first (an earlier ``MEM0_DIR`` wins: mem0 reads it once per process).
    """
    os.environ.setdefault("MEM0_DIR", str(home))
    quiet_libraries()
    mem0 = require("mem0", "mem0", what)
    logging.getLogger("mem0").setLevel(logging.ERROR)  # spaCy/fastembed notices
    return mem0


def close_vector_store(memory: Any) -> None:
    """Close the client of an embedded ``Memory``'s vector store (releases a local Qdrant)."""
    client = getattr(getattr(memory, "vector_store", None), "client", None)
    if client is not None and callable(getattr(client, "close", None)):
        client.close()


class SharedEmbedding:
    """mem0's embedder interface over our shared :class:`Embedder`.

    mem0 would load its own copy of the model per ``Memory`` (one per conversation in a
    benchmark run) and embed one text per ``add``. This one shares the process's model
    (and its content cache) and serves ``add`` embeddings from vectors prepared in one
    batch by :meth:`prepare`; anything not prepared (searches, extracted facts) is
    embedded on the spot.
    """

    def __init__(self, embedder: Embedder, config: Any = None) -> None:
        self.embedder = embedder
        self.config = config
        self._ready: dict[str, list[float]] = {}

    def prepare(self, texts: Sequence[str], batch_size: int) -> None:
        """Embed ``texts`` in one batched pass for the ``add`` calls that follow."""
        vecs = self.embedder.encode(texts, batch_size)
        self._ready = {t: v.tolist() for t, v in zip(texts, vecs, strict=True)}

    def clear(self) -> None:
        """Drop prepared vectors (after the batch is stored)."""
        self._ready = {}

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        """A prepared vector for an ``add``, else one forward pass (never cached)."""
        if memory_action == "add" and text in self._ready:
            return self._ready[text]
        return self.embedder.encode([text], cache=False)[0].tolist()

    def embed_batch(self, texts: Sequence[str], memory_action: str = "add") -> list[list[float]]:
        """Several texts in one pass (mem0 calls this for extracted facts)."""
        return [v.tolist() for v in self.embedder.encode(list(texts))]


class Mem0Store:
    """mem0's OSS ``Memory`` embedded: local Qdrant (or FAISS), packaged MiniLM embedder.

    With ``infer=False`` (the default) every memory is stored verbatim, so the run measures
    mem0's storage and search: ``store_many`` embeds every text in batches first, then
    gives mem0 one ``add`` per memory with all its versions as messages (mem0 stores each
    message as its own record); with ``infer=True`` mem0 asks the LLM to extract facts
    (one chat call per memory) and the facts it creates are credited to the memory that
    produced them. The LLM endpoint is the options' (``base_url``, ``llm_model``) over the
    run's (``--llm-base-url``/``--llm-model`` or the environment). Telemetry is off;
    mem0's files (vector store, history database, its config directory) stay in the run
    directory.

    Args:
        infer: let mem0's LLM extract facts instead of storing texts verbatim.
        vector_store: ``qdrant`` (local mode) or ``faiss``.
        model: ``minilm`` (packaged) or the directory of a sentence-transformers model.
        batch_size: texts per forward pass when ``store_many`` embeds.
        base_url: OpenAI-compatible endpoint for ``infer=True``.
        llm_model: model name for ``infer=True``.
        threshold: mem0's minimum search score (0 returns every ranked memory).
        workdir: the run's store directory (given by the runner).
        tie_seed: seed of the hash that orders equal scores (see ``docs/stores.md``).
        mode: ``embedded`` (in-process, offline), ``platform`` (the hosted API) or
            ``server`` (the self-hosted REST server).
        url: the platform's or the server's URL (server default: ``MEM0_BASE_URL``).
        api_key: the platform's or server's key (default: ``MEM0_API_KEY``); never logged.
        llm: the run's LLM settings (given by the runner), for ``infer=True``.
    """

    @staticmethod
    def requires(options: dict[str, Any]) -> tuple[tuple[str, str], ...]:
        """Optional modules for a store built with ``options``, checked when it is looked up.

        The hosted and self-hosted modes talk HTTP: they need neither mem0 nor the model.
        """
        if options.get("mode", "embedded") != "embedded":
            return ()
        return (("mem0", "mem0"), *MINILM_REQUIRES)

    abstains = False

    def __init__(
        self,
        infer: bool = False,
        vector_store: str = "qdrant",
        model: str | os.PathLike[str] = DEFAULT_MODEL,
        batch_size: int = DEFAULT_BATCH,
        base_url: str | None = None,
        llm_model: str | None = None,
        threshold: float = 0.0,
        workdir: Path | None = None,
        tie_seed: int = DEFAULT_TIE_SEED,
        mode: str = "embedded",
        url: str | None = None,
        api_key: str | None = None,
        llm: Any = None,
    ) -> None:
        self.mode = check_mode(mode)
        self.infer = bool(infer)
        self.threshold = float(threshold)
        self.tie_seed = check_seed(tie_seed)
        self._lock = threading.Lock()
        self._owner: dict[str, str] = {}  # mem0 id → our memory_id
        self._ids: dict[str, list[str]] = {}  # our memory_id → mem0 ids
        self.remote: Mem0Remote | None = None
        self._relay: Any = None  # a provider's model: the relay mem0 asks (see _llm)
        if mode != "embedded":  # one user per store: runs sharing an account never meet
            self._user = f"mnemometer-{uuid.uuid4().hex[:12]}"
            self.remote = Mem0Remote(mode, url, api_key)
            self.memory: Any = self.remote
            return
        if vector_store not in _VECTOR_STORES:
            raise MnemometerError(
                f"mem0: vector_store must be one of {', '.join(_VECTOR_STORES)}, got {vector_store!r}"
            )
        self.vector_store = vector_store
        self.embedder = load_embedder(model)
        self.model = self.embedder.path
        self.batch_size = int(batch_size)
        self.dir = data_dir(workdir, "mem0", self)
        offline_env()
        mem0 = import_mem0(self.dir / "home", "the mem0 store")
        self.llm = self._llm(base_url, llm_model, llm)
        try:
            self.memory = mem0.Memory.from_config(self._config())
        except Exception as e:  # noqa: BLE001 - surface the SDK's reason as one line
            if "already accessed" in str(e):
                raise locked(self.dir / "qdrant", "mem0", e) from None
            raise MnemometerError(
                f"mem0: could not start ({type(e).__name__}: {str(e)[:200]})"
            ) from None
        # Our embedder in place of the one mem0 built (which loaded nothing: see _config).
        self.embedding = SharedEmbedding(self.embedder, self.memory.embedding_model.config)
        self.memory.embedding_model = self.embedding
        self._user = "mnemometer"

    def _llm(self, base_url: str | None, llm_model: str | None, llm: Any) -> dict[str, Any]:
        if not self.infer:
            return {"model": "unused", "api_key": "sk-unused", "openai_base_url": _DUMMY_LLM}
        from mnemometer.stores._extracting import llm_settings

        s = llm_settings(llm, base_url, llm_model, None, "mem0 with infer=true")
        url = s.base_url
        if s.provider is not None:  # mem0 speaks OpenAI to a relay that speaks the provider's
            from mnemometer.stores._llm_relay import relay_for

            self._relay = relay_for(s)
            url = self._relay.base_url
        return {"model": s.model, "api_key": s.api_key or "sk-local", "openai_base_url": url}

    def _config(self) -> dict[str, Any]:
        vs: dict[str, Any] = {
            "collection_name": "mnemometer",
            "embedding_model_dims": self.embedder.dim,
        }
        vs["path"] = str(self.dir / self.vector_store)
        if self.vector_store == "qdrant":
            vs["on_disk"] = True
        return {
            "vector_store": {"provider": self.vector_store, "config": vs},
            # With a base URL mem0 builds a client instead of loading a second copy of the
            # model; the client is never called: __init__ swaps in SharedEmbedding.
            "embedder": {
                "provider": "huggingface",
                "config": {
                    "model": self.model,
                    "embedding_dims": self.embedder.dim,
                    "huggingface_base_url": _DUMMY_LLM,
                },
            },
            "llm": {"provider": "openai", "config": self.llm},
            "history_db_path": str(self.dir / "history.db"),
        }

    def resolved_options(self) -> dict[str, Any]:
        """The embedding model (or the remote Mem0) and the tie seed, for the run log."""
        if self.remote is not None:
            return {**self.remote.describe(), "tie_seed": self.tie_seed}
        return {"model": self.model, "tie_seed": self.tie_seed}

    def close(self) -> None:
        """Release the vector store's directory (remote: delete this store's memories)."""
        if self._relay is not None:
            self._relay.close()
            self._relay = None
        if self.remote is not None:  # leave nothing behind on the user's account
            try:
                self.remote.delete_all(user_id=self._user)
            finally:
                self.remote.close()
            return
        close_vector_store(self.memory)

    def reset(self) -> None:
        """Forget everything (mem0's own ``reset``)."""
        with self._lock:
            if self.remote is not None:
                self.remote.delete_all(user_id=self._user)  # only this store's memories
            else:
                self.memory.reset()
            self._owner.clear()
            self._ids.clear()

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        """``Memory.add`` one text (verbatim, or through the LLM with ``infer=True``)."""
        self._add([text], metadata)

    def _add(self, texts: list[str], metadata: dict[str, Any]) -> None:
        mid = str(metadata["memory_id"])
        meta = {"memory_id": mid}
        if "timestamp" in metadata:
            meta["timestamp"] = str(metadata["timestamp"])
        messages = [{"role": "user", "content": t} for t in texts]
        out = self.memory.add(messages, user_id=self._user, metadata=meta, infer=self.infer)
        with self._lock:
            self._ids.setdefault(mid, [])
            for r in out.get("results", []):
                if r.get("id") and r.get("event", "ADD") == "ADD":
                    self._owner[r["id"]] = mid
                    self._ids[mid].append(r["id"])

    def store_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Embed every text in batches, then one ``add`` per memory with all its versions.

        With ``infer=True`` each text is its own ``add`` (one extraction per text, as with
        ``store``): batching versions would change what the LLM sees. A remote Mem0 embeds
        on its side: one ``add`` per text, as it is deployed.
        """
        if self.infer or self.remote is not None:
            for text, metadata in items:
                self._add([text], metadata)
            return
        self.embedding.prepare([t for t, _ in items], self.batch_size)
        try:
            for texts, metadata in _runs(items):
                self._add(texts, metadata)
        finally:
            self.embedding.clear()

    def list_ids(self) -> list[str]:
        """Ids of every memory given to mem0."""
        return list(self._ids)

    def delete(self, memory_id: str) -> None:
        """``Memory.delete`` every mem0 memory credited to ``memory_id``."""
        with self._lock:
            for mem_id in self._ids.pop(str(memory_id), []):
                self.memory.delete(mem_id)
                self._owner.pop(mem_id, None)

    def search(self, query: str, top_k: int) -> list[Hit]:
        """``Memory.search`` scoped to this store's user; hits credited to their memory."""
        if top_k <= 0 or not query.strip() or not self._owner:
            return []

        def rows(n: int) -> list[tuple[str, float, str]]:
            res = self.memory.search(
                query, filters={"user_id": self._user}, top_k=n, threshold=self.threshold
            )
            out = []
            for r in res.get("results", []):
                mid = self._owner.get(r.get("id")) or (r.get("metadata") or {}).get("memory_id")
                if mid is not None:
                    out.append((str(mid), float(r.get("score") or 0.0), r.get("memory", "")))
            return out

        # mem0 orders tied results its own way; re-sort by the tie rule, widening the
        # request while a tie may straddle the cut (at most 1,000 results, as before).
        return ranked_search(rows, top_k, self.tie_seed, limit=1000)


def _runs(
    items: Sequence[tuple[str, dict[str, Any]]],
) -> list[tuple[list[str], dict[str, Any]]]:
    """Adjacent items of one memory (same id and timestamp) as ``(texts, metadata)``."""
    out: list[tuple[list[str], dict[str, Any]]] = []
    key = None
    for text, metadata in items:
        k = (str(metadata["memory_id"]), metadata.get("timestamp"))
        if out and k == key:
            out[-1][0].append(text)
        else:
            out.append(([text], metadata))
            key = k
    return out
