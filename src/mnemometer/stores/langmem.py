"""``langmem``: LangMem's memory manager over a LangGraph store with local embeddings.

Each memory is one conversation turn given to LangMem's store manager
(``create_memory_store_manager``): its LLM decides, with one tool call, which memories to
create or update (its ``Memory`` and ``PatchDoc`` tools). The memories it writes live in a
LangGraph ``InMemoryStore`` indexed with the packaged MiniLM. A LangMem memory credits
every turn whose ingest created or updated it, so hits map back to the turns they came
from. The memory's date, when it has one, is written before its text (``[2024-03-01]
Alice: ...``), as the conversation would show it.

The LLM is the run's (``--llm-base-url``/``--llm-model``, or ``-S base_url=``), reached
through a metering relay on 127.0.0.1 that records what each memory cost. LangGraph's
in-memory store keeps nothing on disk.
"""

from __future__ import annotations

import os
import threading
import uuid
from pathlib import Path
from typing import Any

from mnemometer._registry import require
from mnemometer.embeddings import DEFAULT_MODEL, MINILM_REQUIRES, load_embedder
from mnemometer.envfile import quiet_libraries
from mnemometer.stores._extracting import Ledger, llm_settings, reference_time
from mnemometer.stores._llm_relay import relay_for
from mnemometer.stores._protocol import Hit, IngestCost
from mnemometer.stores._ties import DEFAULT_TIE_SEED, check_seed, ranked_search

_EXTRA = "langmem"


class LangMemStore:
    """LangMem (LangChain's long-term memory library) with a local LangGraph store.

    Args:
        model: ``minilm`` (packaged) or the directory of a sentence-transformers model.
        base_url: OpenAI-compatible endpoint (default: the run's ``--llm-base-url``).
        llm_model: model name (default: the run's ``--llm-model``).
        api_key: the endpoint's key, if it wants one.
        enable_deletes: let LangMem's LLM delete memories too (off, as in LangMem).
        dated: write the memory's date before its text.
        llm: the run's LLM settings (given by the runner).
        workdir: the run's store directory (unused: the store lives in memory).
        tie_seed: seed of the hash that orders equal scores (see ``docs/stores.md``).
    """

    requires = (("langmem", "langmem"), ("langchain_openai", "langmem"), *MINILM_REQUIRES)
    """Optional modules, checked when the name is looked up."""

    abstains = False

    def __init__(
        self,
        model: str | os.PathLike[str] = DEFAULT_MODEL,
        base_url: str | None = None,
        llm_model: str | None = None,
        api_key: str | None = None,
        enable_deletes: bool = False,
        dated: bool = True,
        llm: Any = None,
        workdir: Path | None = None,
        tie_seed: int = DEFAULT_TIE_SEED,
    ) -> None:
        del workdir
        self.tie_seed = check_seed(tie_seed)
        quiet_libraries()
        require("langmem", _EXTRA, "the langmem store")
        require("langchain_openai", _EXTRA, "the langmem store")
        self.settings = llm_settings(llm, base_url, llm_model, api_key, "the langmem store")
        self.embedder = load_embedder(model)
        self.enable_deletes = bool(enable_deletes)
        self.dated = bool(dated)
        self.relay = relay_for(self.settings)
        self.ledger = Ledger(self.relay, "langmem", self.settings.base_url)
        self._lock = threading.RLock()
        self._user = "mnemometer"
        self._namespace = ("memories", self._user)
        self._owners: dict[str, list[str]] = {}  # LangMem key -> memory ids, oldest first
        self._stored: dict[str, None] = {}  # memory ids ingested without error
        self.langgraph: Any = None
        self.manager: Any = None
        self._open()

    def resolved_options(self) -> dict[str, Any]:
        """The embedding model and endpoint actually used, for the run log."""
        return {
            "model": self.embedder.path,
            "base_url": self.settings.base_url,
            "llm_model": self.settings.model,
            "tie_seed": self.tie_seed,
        }

    def _open(self) -> None:
        from langchain_openai import ChatOpenAI
        from langgraph.store.memory import InMemoryStore
        from langmem import create_memory_store_manager

        encode = self.embedder.encode
        self.langgraph = InMemoryStore(
            index={"dims": self.embedder.dim, "embed": lambda texts: encode(list(texts)).tolist()}
        )
        chat = ChatOpenAI(
            model=self.settings.model,
            base_url=self.relay.base_url,
            api_key=self.settings.api_key or "sk-local",
            temperature=0,
            max_retries=1,
        )
        self.manager = create_memory_store_manager(
            chat,
            namespace=("memories", "{langgraph_user_id}"),
            store=self.langgraph,
            enable_deletes=self.enable_deletes,
        )

    def close(self) -> None:
        """Stop the relay."""
        self.relay.close()

    def reset(self) -> None:
        """Forget everything: a new, empty LangGraph store."""
        with self._lock:
            self._owners.clear()
            self._stored.clear()
            self.ledger.clear()
            self._open()

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        """Give one turn to LangMem; a failed call is recorded (``ingest_costs``), not raised."""
        mid = str(metadata["memory_id"])
        if self.dated and metadata.get("timestamp"):
            text = f"[{reference_time(metadata['timestamp']).date().isoformat()}] {text}"
        with self._lock:  # LangMem reads existing memories first: one turn at a time
            ok, _ = self.ledger.run([mid], lambda: self._add(mid, text))
            if ok:
                self._stored[mid] = None

    def _add(self, mid: str, text: str) -> int:
        config = {"configurable": {"langgraph_user_id": self._user, "thread_id": uuid.uuid4().hex}}
        out = self.manager.invoke({"messages": [{"role": "user", "content": text}]}, config=config)
        touched = 0
        for item in out or []:
            key = str(item.get("key") if isinstance(item, dict) else getattr(item, "key", ""))
            if not key:
                continue
            owners = self._owners.setdefault(key, [])
            if mid not in owners:
                owners.append(mid)
            touched += 1
        return touched

    def ingest_costs(self) -> list[IngestCost]:
        """LLM calls, tokens, seconds and failures of every memory stored since ``reset``."""
        return self.ledger.costs()

    def list_ids(self) -> list[str]:
        """Ids of the turns whose ingest succeeded."""
        with self._lock:
            return list(self._stored)

    def delete(self, memory_id: str) -> None:
        """Drop the turn; LangMem memories that only it produced are deleted."""
        mid = str(memory_id)
        with self._lock:
            self._stored.pop(mid, None)
            for key, owners in list(self._owners.items()):
                if mid in owners:
                    owners.remove(mid)
                    if not owners:
                        self.langgraph.delete(self._namespace, key)
                        del self._owners[key]

    def search(self, query: str, top_k: int) -> list[Hit]:
        """Vector search over LangMem's memories; each credits the turns that made it."""
        if top_k <= 0 or not query.strip() or not self._owners:
            return []

        def rows(n: int) -> list[tuple[str, float, str]]:
            out = []
            for item in self.langgraph.search(self._namespace, query=query, limit=n):
                content = (item.value or {}).get("content")
                if isinstance(content, dict):
                    content = content.get("content", "")
                for mid in self._owners.get(item.key, []):
                    out.append((mid, float(item.score or 0.0), str(content or "")))
            return out

        # A memory credits several turns, so rows can outnumber the memories asked for;
        # the bound is every (memory, turn) pair.
        limit = max(sum(len(o) for o in self._owners.values()), 1)
        return ranked_search(rows, top_k, self.tie_seed, limit=limit)
