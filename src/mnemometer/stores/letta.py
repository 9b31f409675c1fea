"""``letta``: Letta's archival memory (passages with vector search) on a Letta server.

One Letta agent holds the archive; ``reset`` replaces it with a fresh one. Each memory
becomes one passage (several, if Letta chunks a long text) tagged ``memory_id:<id>`` and,
when the memory has a timestamp, ``date:<YYYY-MM-DD>``, with ``created_at`` set to that
timestamp. Search is Letta's vector search (``/archival-memory/search``); hits map back to
memory ids through the passage ids (or their tags), one hit per memory, best first. The
server returns no scores, so a hit's score is ``1 / rank``.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

from mnemometer.errors import MnemometerError
from mnemometer.services._letta_client import connect, default_url, embedding_kwargs
from mnemometer.stores._protocol import Hit

_TAG = "memory_id:"
# Never called: a store's agent only holds passages, but Letta wants an LLM to create it.
_NO_LLM = {
    "model": "unused",
    "model_endpoint_type": "openai",
    "model_endpoint": "http://127.0.0.1:9/v1",
    "context_window": 8192,
}


class LettaStore:
    """Letta's archival memory (``agents.passages``) through ``letta-client``.

    Args:
        base_url: the Letta server (default ``$MNEMOMETER_LETTA_URL`` or
            ``http://127.0.0.1:8283``; ``mnemometer serve letta`` starts one).
        token: bearer token of the Letta server, if it wants one.
        embedding: a Letta embedding handle (default ``openai/text-embedding-3-small``
            when the server offers it).
        embedding_endpoint: an OpenAI-compatible ``/embeddings`` base URL instead.
        embedding_model: model name at ``embedding_endpoint``.
        embedding_dim: vector size of that model.
        workers: parallel inserts in ``store_many``.
        server_version: refuse a server of any other version (the run log records the
            version a run used, so a resumed run checks it is the same server).
    """

    abstains = False

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        embedding: str | None = None,
        embedding_endpoint: str | None = None,
        embedding_model: str = "text-embedding-3-small",
        embedding_dim: int = 1536,
        workers: int = 4,
        server_version: str | None = None,
    ) -> None:
        self.base_url = base_url or default_url()
        self.client, self.server_version = connect(self.base_url, token, "the letta store")
        if server_version and server_version != self.server_version:
            raise MnemometerError(
                f"the Letta server at {self.base_url} is {self.server_version}, "
                f"not {server_version} as asked (server_version)"
            )
        self.embedding = embedding_kwargs(
            self.client, embedding, embedding_endpoint, embedding_model, embedding_dim
        )
        self.workers = max(1, int(workers))
        self._lock = threading.Lock()
        self._owner: dict[str, str] = {}  # passage id -> memory id
        self.agent_id: str | None = None
        self.reset()

    def resolved_options(self) -> dict[str, Any]:
        """The server, its version and the embedding the archive uses (factory options)."""
        out: dict[str, Any] = {"base_url": self.base_url, "server_version": self.server_version}
        if "embedding" in self.embedding:
            return {**out, "embedding": self.embedding["embedding"]}
        cfg = self.embedding["embedding_config"]
        return {
            **out,
            "embedding_endpoint": cfg["embedding_endpoint"],
            "embedding_model": cfg["embedding_model"],
            "embedding_dim": cfg["embedding_dim"],
        }

    def reset(self) -> None:
        """Replace the archive's agent with a fresh one (its passages go with it)."""
        self._drop_agent()
        state = self.client.agents.create(
            name=f"mnemometer-store-{uuid.uuid4().hex[:8]}",
            memory_blocks=[],
            include_base_tools=False,
            tags=["mnemometer", "mnemometer-store"],
            llm_config=_NO_LLM,
            **self.embedding,
        )
        with self._lock:
            self.agent_id = state.id
            self._owner.clear()

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        """Insert one passage tagged with its memory id (and date, when known)."""
        mid = str(metadata["memory_id"])
        tags = [f"{_TAG}{mid}"]
        extra: dict[str, Any] = {}
        stamp = _timestamp(metadata.get("timestamp"))
        if stamp is not None:
            tags.append(f"date:{stamp.date().isoformat()}")
            extra["created_at"] = stamp
        passages = self.client.agents.passages.create(self.agent_id, text=text, tags=tags, **extra)
        if not isinstance(passages, list):
            passages = [passages]
        with self._lock:
            for p in passages:
                self._owner[str(p.id)] = mid

    def store_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Insert many passages, ``workers`` at a time."""
        with ThreadPoolExecutor(self.workers) as pool:
            for _ in pool.map(lambda item: self.store(*item), items):
                pass

    def search(self, query: str, top_k: int) -> list[Hit]:
        """Letta's vector search; one hit per memory, best first (score ``1 / rank``)."""
        if not query.strip() or top_k <= 0:  # Letta answers an empty query with HTTP 422
            return []
        found = self.client.agents.passages.search(
            self.agent_id, query=query, top_k=max(2 * top_k, top_k + 5)
        )
        hits: list[Hit] = []
        seen: set[str] = set()
        for r in found.results:
            mid = self._memory_id(str(r.id), list(r.tags or []))
            if mid is None or mid in seen:
                continue
            seen.add(mid)
            hits.append(Hit(mid, 1.0 / (len(hits) + 1), str(r.content or "")))
            if len(hits) == top_k:
                break
        return hits

    def _memory_id(self, passage_id: str, tags: list[str]) -> str | None:
        with self._lock:
            mid = self._owner.get(passage_id)
        if mid is not None:
            return mid
        return next((t[len(_TAG) :] for t in tags if t.startswith(_TAG)), None)

    def delete(self, memory_id: str) -> None:
        """Delete every passage of one memory."""
        with self._lock:
            mine = [pid for pid, mid in self._owner.items() if mid == str(memory_id)]
        for pid in mine:
            self.client.agents.passages.delete(pid, agent_id=self.agent_id)
            with self._lock:
                self._owner.pop(pid, None)

    def list_ids(self) -> list[str]:
        """The memory ids of every passage in the archive (read from the server)."""
        ids: list[str] = []
        after: str | None = None
        while True:
            page = self.client.agents.passages.list(
                self.agent_id, limit=500, ascending=True, **({"after": after} if after else {})
            )
            for p in page:
                mid = self._memory_id(str(p.id), list(p.tags or []))
                if mid is not None and mid not in ids:
                    ids.append(mid)
            if len(page) < 500:
                return ids
            after = str(page[-1].id)

    def close(self) -> None:
        """Delete the archive's agent."""
        self._drop_agent()
        self.client.close()

    def _drop_agent(self) -> None:
        if self.agent_id is not None:
            try:
                self.client.agents.delete(self.agent_id)
            except Exception:  # noqa: BLE001 - already gone is fine
                pass
            self.agent_id = None


def _timestamp(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if not value:
        return None
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
