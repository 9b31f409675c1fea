"""``letta``: a Letta server through ``letta-client`` 1.x (REST), one Letta agent per scenario.

Server versions: tested with Letta **0.16.8** and letta-client **1.12.1**; servers before
0.16 are refused (their API is not letta-client 1.x's). ``mnemometer serve letta`` starts
a server with PostgreSQL + pgvector on 127.0.0.1 (see docs/systems.md).

Agent types: ``letta_v1_agent`` (Letta's default: memory tools, a plain text reply ends
the turn) and ``memgpt_v2_agent`` (MemGPT style: every step is a tool call, the reply is
``send_message``), chosen with ``-A agent_type=...``.

Sessions: Letta keeps an agent's message history on the server. A session break resets
the agent's messages (``agents.messages.reset``) while its memory blocks and archival
memory stay, so recall after a break must come from Letta's memory.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from mnemometer.agents._protocol import Reply
from mnemometer.errors import MnemometerError
from mnemometer.llm import LLMSettings
from mnemometer.services._letta_client import (
    connect,
    default_url,
    embedding_kwargs,
    llm_kwargs,
    text_of,
)

HUMAN_BLOCK = "Name:\nLocation:\nPreferences:\nTasks:"
PERSONA_BLOCK = "I am a helpful assistant with a long-term memory. I keep facts about the user."
AGENT_TYPES = ("letta_v1_agent", "memgpt_v2_agent")


class LettaAgentFactory:
    """Agents on a Letta server (one per scenario, deleted afterwards).

    Args:
        base_url: the Letta server (``--letta-url``; default ``$MNEMOMETER_LETTA_URL`` or
            ``http://127.0.0.1:8283``).
        token: bearer token of the Letta server, if it wants one (never the LLM key).
        agent_type: ``letta_v1_agent`` (default) or ``memgpt_v2_agent``.
        model: a Letta model handle (``openai-proxy/fake-llm``); when ``llm`` is given
            instead, an explicit ``llm_config`` pointing at that endpoint is sent; with
            neither, the server's only model handle.
        embedding: a Letta embedding handle; or ``embedding_endpoint`` for an explicit one;
            with neither, ``openai/text-embedding-3-small`` when the server offers it.
        embedding_endpoint: OpenAI-compatible ``/embeddings`` base URL for Letta.
        embedding_model: model name at ``embedding_endpoint``.
        embedding_dim: vector size of that model.
        context_window: context window declared in ``llm_config``.
        stream: send messages through Letta's streaming endpoint (SSE end to end).
        llm: the run's LLM endpoint settings.
    """

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        agent_type: str = "letta_v1_agent",
        model: str | None = None,
        embedding: str | None = None,
        embedding_endpoint: str | None = None,
        embedding_model: str = "text-embedding-3-small",
        embedding_dim: int = 1536,
        context_window: int = 32000,
        stream: bool = False,
        llm: LLMSettings | None = None,
    ) -> None:
        if agent_type not in AGENT_TYPES:
            raise MnemometerError(
                f"letta: agent_type must be one of {', '.join(AGENT_TYPES)}, got {agent_type!r}"
            )
        self.base_url = base_url or default_url()
        self.client, self.server_version = connect(self.base_url, token, "the letta agent")
        self.agent_type = agent_type
        self.stream = bool(stream)
        self.create_kwargs: dict[str, Any] = {
            "agent_type": agent_type,
            **llm_kwargs(self.client, model, llm, context_window),
            **embedding_kwargs(
                self.client, embedding, embedding_endpoint, embedding_model, embedding_dim
            ),
        }

    def resolved_options(self) -> dict[str, Any]:
        """What each agent is created with, and the server's version."""
        return {
            "base_url": self.base_url,
            "server_version": self.server_version,
            "stream": self.stream,
            **self.create_kwargs,
        }

    def create(self, namespace: str) -> LettaAgent:
        """Create a Letta agent with a template human block and a persona block."""
        state = self.client.agents.create(
            name=f"mnemometer-{namespace}-{uuid.uuid4().hex[:6]}",
            memory_blocks=[
                {"label": "human", "value": HUMAN_BLOCK, "limit": 5000},
                {"label": "persona", "value": PERSONA_BLOCK, "limit": 2000},
            ],
            include_base_tools=True,
            tags=["mnemometer"],
            **self.create_kwargs,
        )
        return LettaAgent(self.client, state.id, stream=self.stream)

    def close(self) -> None:
        """Close the HTTP client."""
        self.client.close()


class LettaAgent:
    """One Letta agent; sessions are message resets."""

    def __init__(self, client: Any, agent_id: str, stream: bool = False) -> None:
        self.client = client
        self.agent_id = agent_id
        self.stream = stream
        self.persona: str | None = None
        self._started = False

    def start_session(self, system: str | None = None) -> None:
        """Drop the server-side message history (memory blocks stay)."""
        if self._started:
            self.client.agents.messages.reset(self.agent_id, add_default_initial_messages=False)
        self._started = True
        self.persona = system

    def send(self, message: str) -> Reply:
        """Send one message; the reply is the first assistant message (never an error body)."""
        content = f"({self.persona})\n{message}" if self.persona else message
        messages = [{"role": "user", "content": content}]
        t0 = time.perf_counter()
        if self.stream:
            texts, tokens = self._streamed(messages)
        else:
            resp = self.client.agents.messages.create(self.agent_id, messages=messages)
            texts, tokens = text_of(resp.messages), _tokens(getattr(resp, "usage", None))
        ms = (time.perf_counter() - t0) * 1000.0
        if not texts:
            raise MnemometerError("Letta returned no assistant message")
        # Letta's memory edits happen inside its LLM loop: the split is not observable.
        return Reply(texts[0], tokens, None, ms)

    def _streamed(self, messages: list[dict[str, str]]) -> tuple[list[str], dict[str, int]]:
        parts: dict[str, str] = {}
        tokens: dict[str, int] = {}
        for chunk in self.client.agents.messages.create(
            self.agent_id, messages=messages, streaming=True, stream_tokens=True
        ):
            kind = getattr(chunk, "message_type", "")
            if kind == "assistant_message":
                key = str(getattr(chunk, "id", "") or len(parts))
                parts[key] = parts.get(key, "") + "".join(text_of([chunk]))
            elif kind == "usage_statistics":
                tokens = _tokens(chunk)
        return [p for p in parts.values() if p], tokens

    def memory(self, label: str = "human") -> str:
        """The current value of one of the agent's memory blocks."""
        return str(self.client.agents.blocks.retrieve(label, agent_id=self.agent_id).value)

    def close(self) -> None:
        """Delete the Letta agent."""
        self.client.agents.delete(self.agent_id)


def _tokens(usage: Any) -> dict[str, int]:
    if usage is None:
        return {}
    return {
        "prompt": int(getattr(usage, "prompt_tokens", 0) or 0),
        "completion": int(getattr(usage, "completion_tokens", 0) or 0),
    }
