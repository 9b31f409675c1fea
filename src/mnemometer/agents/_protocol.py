"""The Agent protocol: sessions, messages, replies, and factories that isolate memory."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class Reply:
    """What an agent answered to one user message."""

    text: str
    """The reply text."""
    tokens: dict[str, int] = field(default_factory=dict)
    """Token usage of this turn (``prompt``, ``completion``), when known."""
    memory_ms: float | None = None
    """Milliseconds spent in memory operations (store, search), when the agent can tell."""
    llm_ms: float | None = None
    """Milliseconds spent waiting for the LLM, when the agent can tell."""


@runtime_checkable
class Agent(Protocol):
    """A memory-backed conversational system under test.

    A session is one conversation: ``start_session`` drops the chat history, so anything
    the agent recalls afterwards must come from its memory. The runner calls
    ``start_session`` before the first message and at every session break.
    """

    def start_session(self, system: str | None = None) -> None:
        """Open a new conversation; ``system`` is an optional persona instruction."""
        ...

    def send(self, message: str) -> Reply:
        """Send one user message and return the reply."""
        ...

    def close(self) -> None:
        """Release this agent's resources and forget its memory."""
        ...


@runtime_checkable
class AgentFactory(Protocol):
    """What a registered agent name creates: a maker of isolated agents.

    The runner asks for one agent per item (scenario), with a ``namespace`` unique to the
    item, so items can run concurrently without seeing each other's memories. Shared,
    expensive resources (a loaded model, an LLM client) live in the factory.
    """

    def create(self, namespace: str) -> Agent:
        """A fresh agent whose memory is empty and private to ``namespace``."""
        ...

    def close(self) -> None:
        """Release shared resources."""
        ...


def describe(factory: Any) -> dict[str, Any]:
    """Resolved options a factory reports for the run header (secrets removed)."""
    fn = getattr(factory, "resolved_options", None)
    return dict(fn()) if callable(fn) else {}
