"""``letta``: a Letta server through ``letta-client`` (REST), one Letta agent per scenario.

Server versions: the last Letta server that runs offline here is **0.11.7** (SQLite; pin
``pydantic<2.13`` and ``mcp[cli]==1.12.4``), with ``letta-client`` **0.1.307**. Servers
from 0.12 on need Postgres with pgvector. Letta sends ``tool_choice: "required"`` and
``max_completion_tokens``, which llama.cpp's server does not support, so a real run needs a
tool-calling endpoint (OpenAI, vLLM, ...). See docs/scenarios.md.

Sessions: Letta keeps an agent's message history on the server. A session break resets
the agent's messages (``agents.messages.reset``) while its memory blocks and archival
memory stay, so recall after a break must come from Letta's memory.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from mnemometer._registry import require
from mnemometer.agents._protocol import Reply
from mnemometer.errors import MnemometerError
from mnemometer.llm import LLMSettings

HUMAN_BLOCK = "Name:\nLocation:\nPreferences:\nTasks:"
PERSONA_BLOCK = "I am a helpful assistant with a long-term memory. I keep facts about the user."


class LettaAgentFactory:
    """Agents on a Letta server (one per scenario, deleted afterwards).

    Args:
        base_url: the Letta server (``--letta-url``), e.g. ``http://127.0.0.1:8283``.
        token: bearer token of the Letta server, if it wants one (never the LLM key).
        model: a Letta model handle (``openai/gpt-4o-mini``); when ``llm`` is given
            instead, an explicit ``llm_config`` pointing at that endpoint is sent.
        embedding: a Letta embedding handle; or ``embedding_endpoint`` for an explicit one.
        embedding_endpoint: OpenAI-compatible ``/embeddings`` base URL for Letta.
        embedding_model: model name at ``embedding_endpoint``.
        embedding_dim: vector size of that model.
        context_window: context window declared in ``llm_config``.
        llm: the run's LLM endpoint settings.
    """

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8283",
        token: str | None = None,
        model: str | None = None,
        embedding: str | None = None,
        embedding_endpoint: str | None = None,
        embedding_model: str = "text-embedding-3-small",
        embedding_dim: int = 1536,
        context_window: int = 8192,
        llm: LLMSettings | None = None,
    ) -> None:
        sdk = require("letta_client", "letta", "the letta agent")
        self.base_url = base_url
        self.client = (
            sdk.Letta(base_url=base_url, token=token) if token else sdk.Letta(base_url=base_url)
        )
        try:
            self.client.health.check()
        except Exception as e:
            raise MnemometerError(
                f"cannot reach the Letta server at {base_url} ({type(e).__name__}: {e}); "
                "start one (server 0.11.7, see docs/scenarios.md) or pass --letta-url"
            ) from None
        self.create_kwargs: dict[str, Any] = {}
        if model:
            self.create_kwargs["model"] = model
        elif llm is not None:
            self.create_kwargs["llm_config"] = {
                "model": llm.model,
                "model_endpoint_type": "openai",
                "model_endpoint": llm.base_url,
                "context_window": int(context_window),
            }
        else:
            raise MnemometerError(
                "--agent letta needs -A model=HANDLE or --llm-base-url/--llm-model"
            )
        if embedding:
            self.create_kwargs["embedding"] = embedding
        elif embedding_endpoint:
            self.create_kwargs["embedding_config"] = {
                "embedding_model": embedding_model,
                "embedding_endpoint_type": "openai",
                "embedding_endpoint": embedding_endpoint,
                "embedding_dim": int(embedding_dim),
                "embedding_chunk_size": 300,
            }
        else:
            raise MnemometerError(
                "--agent letta needs -A embedding=HANDLE or -A embedding_endpoint=URL"
            )

    def resolved_options(self) -> dict[str, Any]:
        """What each agent is created with."""
        return {"base_url": self.base_url, **self.create_kwargs}

    def create(self, namespace: str) -> LettaAgent:
        """Create a Letta agent with empty human and persona blocks."""
        state = self.client.agents.create(
            name=f"mnemometer-{namespace}-{uuid.uuid4().hex[:6]}",
            memory_blocks=[
                {"label": "human", "value": HUMAN_BLOCK, "limit": 5000},
                {"label": "persona", "value": PERSONA_BLOCK, "limit": 2000},
            ],
            include_base_tools=True,
            **self.create_kwargs,
        )
        return LettaAgent(self.client, state.id)

    def close(self) -> None:
        """Nothing shared."""


class LettaAgent:
    """One Letta agent; sessions are message resets."""

    def __init__(self, client: Any, agent_id: str) -> None:
        self.client = client
        self.agent_id = agent_id
        self.persona: str | None = None
        self._started = False

    def start_session(self, system: str | None = None) -> None:
        """Drop the server-side message history (memory blocks stay)."""
        if self._started:
            self.client.agents.messages.reset(
                agent_id=self.agent_id, add_default_initial_messages=False
            )
        self._started = True
        self.persona = system

    def send(self, message: str) -> Reply:
        """Send one message; the reply is the first assistant message (never an error body)."""
        content = f"({self.persona})\n{message}" if self.persona else message
        t0 = time.perf_counter()
        resp = self.client.agents.messages.create(
            agent_id=self.agent_id, messages=[{"role": "user", "content": content}]
        )
        ms = (time.perf_counter() - t0) * 1000.0
        texts = [
            m.content
            for m in resp.messages
            if getattr(m, "message_type", "") == "assistant_message"
        ]
        if not texts:
            raise MnemometerError("Letta returned no assistant message")
        usage = getattr(resp, "usage", None)
        tokens = {}
        if usage is not None:
            tokens = {
                "prompt": int(getattr(usage, "prompt_tokens", 0) or 0),
                "completion": int(getattr(usage, "completion_tokens", 0) or 0),
            }
        # Letta's memory edits happen inside its LLM loop: the split is not observable.
        return Reply(str(texts[0]), tokens, None, ms)

    def close(self) -> None:
        """Delete the Letta agent."""
        self.client.agents.delete(agent_id=self.agent_id)
