"""Asking the LLM for JSON that validates: structured output, repair, retry.

Order of defences: ask with the reply model's JSON Schema as structured output; take the
JSON out of code fences or prose; close a reply cut short (``finish_reason: length`` or a
dropped connection) after its last complete element; accept MemTest's bare array for a
one-field object; drop single invalid facts but keep the valid ones; and when nothing
validates, tell the model what was wrong and ask again.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from mnemometer.datasets.build._prompts import RETRY_USER
from mnemometer.datasets.build._schema import Extraction, Fact, reply_schema
from mnemometer.llm import LLMClient, LLMError

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)(?:```|\Z)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Answer:
    """The outcome of one :func:`ask` (valid or not)."""

    value: BaseModel | None
    """The validated reply, or ``None`` when every attempt failed."""
    attempts: int
    """Chat calls made."""
    prompt_tokens: int
    completion_tokens: int
    note: str | None
    """What went wrong (the last error) or what was repaired; ``None`` when clean."""


class StructuredMode:
    """Whether to send ``response_format``; switched off once if the endpoint rejects it."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._lock = threading.Lock()

    def disable(self) -> None:
        """Stop sending ``response_format`` (the endpoint answered HTTP 400 to it)."""
        with self._lock:
            self.enabled = False


def ask(
    client: LLMClient,
    messages: list[dict[str, Any]],
    model: type[BaseModel],
    *,
    lang: str,
    retries: int = 2,
    max_tokens: int = 4096,
    structured: StructuredMode | None = None,
) -> Answer:
    """Ask until the reply validates as ``model`` or ``retries`` follow-ups are spent.

    Raises:
        LLMError: the endpoint cannot be reached or keeps failing (not a content problem).
    """
    mode = structured or StructuredMode()
    fmt = {"type": "json_object", "schema": reply_schema(model)}
    convo = list(messages)
    attempts = prompt = completion = 0
    error = "no reply"
    for _ in range(retries + 1):
        attempts += 1
        try:
            reply = client.chat(
                convo, max_tokens=max_tokens, response_format=fmt if mode.enabled else None
            )
        except LLMError as e:
            if mode.enabled and "HTTP 400" in str(e):
                mode.disable()  # e.g. an endpoint without structured output: ask in prose
                reply = client.chat(convo, max_tokens=max_tokens)
            elif "malformed JSON reply" in str(e) or "no choices" in str(e):
                error = str(e)  # a garbled HTTP body: ask again
                continue
            else:
                raise
        prompt += reply.usage.prompt_tokens
        completion += reply.usage.completion_tokens
        finish = _finish_reason(reply.raw)
        value, note = parse(reply.text, model, truncated=finish == "length")
        if value is not None:
            return Answer(value, attempts, prompt, completion, note)
        error = note or "invalid reply"
        convo = [
            *messages,
            {"role": "assistant", "content": reply.text[:4000]},
            {"role": "user", "content": RETRY_USER[lang].format(error=error[:300])},
        ]
    return Answer(None, attempts, prompt, completion, error)


def _finish_reason(raw: dict[str, Any]) -> str | None:
    try:
        return raw["choices"][0].get("finish_reason")
    except (KeyError, IndexError, TypeError, AttributeError):
        return None


def parse(text: str, model: type[BaseModel], truncated: bool = False) -> tuple[Any, str | None]:
    """Validate ``text`` as ``model``: ``(value, note)`` or ``(None, error)``."""
    body = extract_json_text(text)
    if body is None:
        return None, f"no JSON object in the reply ({text[:60]!r})"
    notes: list[str] = []
    try:
        data = json.loads(body)
    except json.JSONDecodeError as e:
        data = repair_truncated(body)
        if data is None:
            return None, f"malformed JSON: {e.msg} at char {e.pos}"
        notes.append(
            "cut-short reply closed after its last complete element"
            + (" (finish_reason: length)" if truncated else "")
        )
    fields = list(model.model_fields)
    if isinstance(data, list) and len(fields) == 1:
        data = {fields[0]: data}  # MemTest's bare-array form of a one-field object
        notes.append("bare array accepted")
    try:
        return model.model_validate(data), "; ".join(notes) or None
    except ValidationError as e:
        if model is Extraction and isinstance(data, dict) and isinstance(data.get("facts"), list):
            good, bad = _salvage_facts(data["facts"])
            if good:
                notes.append(f"{bad} invalid facts dropped")
                return Extraction(facts=good), "; ".join(notes)
        err = e.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "<root>"
        return None, f"schema violation at {loc}: {err['msg']}"


def _salvage_facts(items: list[Any]) -> tuple[list[Fact], int]:
    good: list[Fact] = []
    bad = 0
    for item in items:
        try:
            good.append(Fact.model_validate(item))
        except ValidationError:
            bad += 1
    return good, bad


def extract_json_text(text: str) -> str | None:
    """The JSON part of a reply: inside a code fence, or from the first ``{``/``[`` on."""
    m = _FENCE.search(text)
    if m and m.group(1).strip():
        text = m.group(1)
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return None
    body = text[min(starts) :].strip()
    # Drop trailing prose after a complete value.
    try:
        json.loads(body)
        return body
    except json.JSONDecodeError as e:
        if e.msg == "Extra data":
            return body[: e.pos]
        return body


def repair_truncated(body: str) -> Any:
    """Parse JSON cut short: keep everything up to the last complete element, close the rest.

    Returns the parsed value, or ``None`` when no prefix can be closed into valid JSON.
    """
    stack: list[str] = []
    cuts: list[tuple[int, str]] = []  # (end position, closing brackets needed there)
    in_string = escape = False
    for i, ch in enumerate(body):
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack:
                break
            stack.pop()
            cuts.append((i + 1, "".join(reversed(stack))))
        elif ch == "," and stack:
            cuts.append((i, "".join(reversed(stack))))
    for end, closing in reversed(cuts[-200:]):
        try:
            return json.loads(body[:end] + closing)
        except json.JSONDecodeError:
            continue
    return None
