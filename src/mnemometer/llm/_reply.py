"""What one chat call returns and costs: the reply, and its token counts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one call (or running totals)."""

    prompt_tokens: int = 0
    """Prompt tokens the endpoint reported (0 when it did not say, or for a cache hit)."""
    completion_tokens: int = 0
    """Completion tokens the endpoint reported."""
    calls: int = 0
    cached_calls: int = 0
    counted_prompt_tokens: int = 0
    """Prompt tokens counted here, with the model's tokenizer or the labelled estimate
    (:attr:`LLMClient.counter`): the text of the messages, without the chat template."""
    counted_completion_tokens: int = 0
    """The reply's tokens, counted the same way."""

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.calls + other.calls,
            self.cached_calls + other.cached_calls,
            self.counted_prompt_tokens + other.counted_prompt_tokens,
            self.counted_completion_tokens + other.counted_completion_tokens,
        )

    def as_dict(self) -> dict[str, int]:
        """Counts for a run log's ``tokens`` field."""
        return {"prompt": self.prompt_tokens, "completion": self.completion_tokens}

    def counted(self) -> dict[str, int]:
        """The counts made here, keyed as :meth:`as_dict` keys the endpoint's."""
        return {"prompt": self.counted_prompt_tokens, "completion": self.counted_completion_tokens}


@dataclass(frozen=True, slots=True)
class ChatReply:
    """One chat completion."""

    text: str
    """The first choice's message content ("" when the model sent none)."""
    usage: Usage
    """Tokens of this call (zero when the server did not say)."""
    seconds: float
    """Wall time of the call, retries included (0 for a cache hit)."""
    cached: bool = False
    """True when the reply came from the disk cache."""
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    """The decoded response body."""


def _text(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    return ""


def _usage(raw: Any, cached: bool) -> Usage:
    if cached:
        return Usage(calls=1, cached_calls=1)
    if not isinstance(raw, Mapping):
        return Usage(calls=1)
    return Usage(int(raw.get("prompt_tokens") or 0), int(raw.get("completion_tokens") or 0), 1)
