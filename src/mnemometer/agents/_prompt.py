"""The answer step every memory-backed agent of ours shares.

The same prompt is used whatever the memory, so differences between stores come from what
they retrieve, not from wording. It never contains a scenario's expected answer: it sees
only the user's messages and the retrieved memories.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from mnemometer.agents._protocol import Reply
from mnemometer.llm import LLMClient

SYSTEM_PROMPT = (
    "You are a helpful assistant with a long-term memory about the user. Use the memories "
    "when they are relevant. Reply briefly, with just what was asked."
)
"""The system prompt of the answer step (a persona instruction is appended to it)."""

MEMORY_HEADER = "Memories about me (oldest first; a later memory replaces an earlier one):"


def answer_messages(
    message: str,
    memories: Sequence[str],
    history: Sequence[tuple[str, str]] = (),
    persona: str | None = None,
) -> list[dict[str, str]]:
    """The chat messages for one answer.

    Memories and the message go in one user message (a small model answers better that way
    than with memories in the system message; see docs/scenarios.md).
    """
    system = SYSTEM_PROMPT + (f"\n{persona}" if persona else "")
    out = [{"role": "system", "content": system}]
    for user, assistant in history:
        out.append({"role": "user", "content": user})
        out.append({"role": "assistant", "content": assistant})
    listed = "\n".join(f"- {m}" for m in memories) if memories else "(none)"
    out.append({"role": "user", "content": f"{MEMORY_HEADER}\n{listed}\n\nMy message: {message}"})
    return out


def answer(
    llm: LLMClient,
    message: str,
    memories: Sequence[str],
    history: Sequence[tuple[str, str]] = (),
    persona: str | None = None,
    *,
    max_tokens: int = 64,
    memory_ms: float = 0.0,
) -> Reply:
    """Ask the LLM and wrap its answer as a :class:`Reply` with the time split."""
    t0 = time.perf_counter()
    reply = llm.chat(answer_messages(message, memories, history, persona), max_tokens=max_tokens)
    llm_ms = (time.perf_counter() - t0) * 1000.0
    return Reply(reply.text.strip(), reply.usage.as_dict(), memory_ms, llm_ms)


class Conversation:
    """Per-session chat history kept by our agents (the last ``turns`` exchanges)."""

    def __init__(self, turns: int) -> None:
        self.turns = max(0, int(turns))
        self.history: list[tuple[str, str]] = []
        self.persona: str | None = None

    def start(self, persona: str | None) -> None:
        """A new session: no history."""
        self.history = []
        self.persona = persona

    def recent(self) -> list[tuple[str, str]]:
        """The exchanges the next prompt may show."""
        return self.history[-self.turns :] if self.turns else []

    def add(self, user: str, assistant: str) -> None:
        """Remember one exchange of this session."""
        self.history.append((user, assistant))


def memory_turn(
    llm: LLMClient,
    chat: Conversation,
    message: str,
    recall: Callable[[], list[str]],
    remember: Callable[[], None],
    max_tokens: int,
) -> Reply:
    """One turn of an agent with a memory: recall, answer with the shared prompt, remember.

    The reply's memory time is recall plus remember (however much of either is an LLM call
    inside the memory system); the exchange joins ``chat``.
    """
    t0 = time.perf_counter()
    memories = recall()
    recall_ms = (time.perf_counter() - t0) * 1000.0
    reply = answer(
        llm,
        message,
        memories,
        chat.recent(),
        chat.persona,
        max_tokens=max_tokens,
        memory_ms=recall_ms,
    )
    t1 = time.perf_counter()
    remember()
    remember_ms = (time.perf_counter() - t1) * 1000.0
    chat.add(message, reply.text)
    return Reply(reply.text, reply.tokens, recall_ms + remember_ms, reply.llm_ms)


def answer_options(top_k: int, history_turns: int, max_tokens: int, llm: LLMClient) -> dict:
    """The answer settings our agents record in the run header (the LLM's key redacted)."""
    return {
        "top_k": top_k,
        "history_turns": history_turns,
        "max_tokens": max_tokens,
        "llm": llm.settings.redacted(),
    }
