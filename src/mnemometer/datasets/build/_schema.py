"""The shapes the LLM must answer in, and the checkpoint record.

One pydantic model per reply is both the JSON Schema sent to the endpoint (structured
output) and the validator of the answer, so the prompt and the parser cannot disagree
(MemTest's extraction prompt asked for ``{"facts": [...]}`` while its parser took only a bare
array and extracted nothing).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mnemometer.config import StrictModel


class _Lenient(BaseModel):
    # A model's reply may carry keys we did not ask for; they are dropped, not errors.
    model_config = ConfigDict(extra="ignore", use_attribute_docstrings=True)


class Fact(_Lenient):
    """One atomic fact extracted from a chunk."""

    content: str = Field(min_length=1)
    """The fact as one self-contained sentence."""
    person: str = ""
    """The main person the fact is about ("" if none)."""
    location: str = ""
    """A physical place ("" if none)."""
    time: str = ""
    """The specific time as written in the text ("" if none)."""
    era: str = ""
    """A period, era or dynasty, kept apart from ``time`` ("" if none)."""
    event_type: str = ""
    """A short label for the kind of event (one or two words)."""
    chain: str = ""
    """A label shared by consecutive facts of one causal or temporal sequence ("" if none)."""

    @field_validator("person", "location", "time", "era", "event_type", "chain", mode="before")
    @classmethod
    def _text(cls, v: Any) -> str:
        # Models write null, numbers or lists for "unknown"; take them as text.
        if v is None:
            return ""
        if isinstance(v, list):
            return ", ".join(str(x) for x in v if x is not None)
        return str(v).strip()

    @field_validator("content", mode="before")
    @classmethod
    def _content(cls, v: Any) -> str:
        return str(v).strip() if v is not None else ""


class Extraction(_Lenient):
    """The reply to one extraction request."""

    facts: list[Fact]
    """Every fact in the chunk, in the order the text tells them."""


class Label(_Lenient):
    """The kind of one ambiguous location string."""

    term: str
    """The string as it was sent."""
    kind: Literal["place", "era", "concept"]
    """``place`` (a physical location), ``era`` (a period or dynasty) or ``concept``."""


class Classification(_Lenient):
    """The reply to one classification request."""

    labels: list[Label]
    """One label per term sent."""


def reply_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of ``model`` as sent to the endpoint (no titles, no extra keys)."""
    schema = model.model_json_schema()

    def scrub(node: Any) -> Any:
        if isinstance(node, dict):
            # Descriptions repeat the prompt's rules; leaving them out keeps prompts short.
            out = {
                k: scrub(v) for k, v in node.items() if k not in ("title", "default", "description")
            }
            if out.get("type") == "object":
                out.setdefault("additionalProperties", False)
                if "properties" in out:
                    out["required"] = list(out["properties"])  # strict mode wants every key
            return out
        if isinstance(node, list):
            return [scrub(x) for x in node]
        return node

    return scrub(schema)


class ChunkRecord(StrictModel):
    """One finished chunk in the build checkpoint (a JSONL line)."""

    key: str
    """``file#hash#index/count``: relative path and content hash, never the basename."""
    file: str
    """Path relative to the corpus root."""
    index: int
    """Chunk position in the file."""
    category: str = ""
    """Directory label of the file."""
    facts: list[Fact] = Field(default_factory=list)
    """The validated facts."""
    status: Literal["ok", "failed"] = "ok"
    """``failed``: no valid reply after every retry (retried on ``--resume``)."""
    error: str | None = None
    """Why the chunk failed, or what was repaired."""
    attempts: int = 1
    """LLM calls spent on the chunk."""
    prompt_tokens: int = 0
    """Prompt tokens spent (0 when served from the cache)."""
    completion_tokens: int = 0
    """Completion tokens spent."""
