"""``rag``: any Store becomes an Agent (retrieve, answer with the shared prompt, store)."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

from mnemometer.agents._factory import llm_client
from mnemometer.agents._prompt import Conversation, answer_options, memory_turn
from mnemometer.agents._protocol import Reply
from mnemometer.llm import LLMClient, LLMSettings
from mnemometer.stores._factory import create_store
from mnemometer.stores._protocol import Flushable, Hit


class RagAgentFactory:
    """Retrieval-augmented agent over any Store, answering with an OpenAI-compatible LLM.

    On every user message it searches the store with the message, asks the LLM with the
    shared answer prompt (retrieved memories, oldest first, plus this session's recent
    exchanges), then stores the message as a new memory. Every message is stored: there is
    no keyword routing deciding what is a fact and what is a question.

    Args:
        store: registered store name (``bm25``, ``dense``, ...).
        store_options: options for the store's factory.
        top_k: memories retrieved per message.
        history_turns: exchanges of the current session shown to the LLM.
        max_tokens: answer length cap.
        llm: the run's endpoint settings (or a client); its store is given them too.
        workdir: where stores that keep files keep them (one directory per scenario).
    """

    def __init__(
        self,
        store: str = "bm25",
        store_options: dict[str, Any] | None = None,
        top_k: int = 5,
        history_turns: int = 3,
        max_tokens: int = 64,
        llm: LLMSettings | LLMClient | None = None,
        workdir: Path | None = None,
    ) -> None:
        self.store_name = store
        self.store_options = dict(store_options or {})
        self.top_k = int(top_k)
        self.history_turns = int(history_turns)
        self.max_tokens = int(max_tokens)
        self.llm = llm_client(llm)
        self.llm.check()  # unreachable endpoint, bad key, unknown model: fail before the run
        self.workdir = workdir
        # Fail before the run, not in the first scenario: unknown store, bad option.
        self._new_store("_probe")
        if self.workdir is not None:
            shutil.rmtree(self._dir("_probe"), ignore_errors=True)

    def _dir(self, namespace: str) -> Path | None:
        return None if self.workdir is None else self.workdir / namespace

    def _new_store(self, namespace: str) -> Any:
        # A store that asks an LLM while it stores asks the run's endpoint too.
        return create_store(
            self.store_name,
            self.store_options,
            lang="en",
            workdir=self._dir(namespace),
            llm=self.llm.settings,
        )

    def resolved_options(self) -> dict[str, Any]:
        """Options as they ran, for the run header."""
        return {
            "store": self.store_name,
            "store_options": self.store_options,
            **answer_options(self.top_k, self.history_turns, self.max_tokens, self.llm),
        }

    def create(self, namespace: str) -> RagAgent:
        """A fresh agent with its own empty store."""
        store = self._new_store(namespace)
        store.reset()
        return RagAgent(store, self.llm, self.top_k, self.history_turns, self.max_tokens)

    def close(self) -> None:
        """Nothing shared to release."""


class RagAgent:
    """One conversation partner over one store (see :class:`RagAgentFactory`)."""

    def __init__(
        self, store: Any, llm: LLMClient, top_k: int, history_turns: int, max_tokens: int
    ) -> None:
        self.store = store
        self.llm = llm
        self.top_k = top_k
        self.max_tokens = max_tokens
        self.chat = Conversation(history_turns)
        self._texts: dict[str, str] = {}
        self._lock = threading.Lock()

    def start_session(self, system: str | None = None) -> None:
        """New session: the chat history is dropped, the store keeps everything."""
        self.chat.start(system)

    def send(self, message: str) -> Reply:
        """Retrieve, answer, then remember the message."""

        def recall() -> list[str]:
            hits = [Hit.coerce(h) for h in self.store.search(message, self.top_k)][: self.top_k]
            # Oldest first, so "a later memory replaces an earlier one" reads true.
            ids = sorted({h.memory_id for h in hits})
            return [
                self._texts.get(i) or next(h.text for h in hits if h.memory_id == i) for i in ids
            ]

        def remember() -> None:
            memory_id = f"m{len(self._texts):05d}"  # zero-padded: sorts in storage order
            self._texts[memory_id] = message
            self.store.store(message, {"memory_id": memory_id})
            if isinstance(self.store, Flushable):
                self.store.flush()

        return memory_turn(self.llm, self.chat, message, recall, remember, self.max_tokens)

    def close(self) -> None:
        """Forget everything."""
        self.store.reset()
