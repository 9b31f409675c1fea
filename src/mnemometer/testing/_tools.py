"""Tool calls on cue: the rules that make the test LLM server call a function.

A :class:`ToolRule` says "when the user's message matches, call these tools, one per model
step". Agents loop: they run the tool, send the result back and ask again. The server counts
the tool-call steps the assistant already took since the user's message, so the second
request of a turn gets the second call, and once the calls are used up the turn ends with
the text reply (or, when ``tool_choice`` is ``"required"``, with the reply tool, e.g.
Letta's ``send_message``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mnemometer.testing._schema import Mode, instance

Match = str | re.Pattern[str] | Callable[[dict[str, Any]], bool]
Arguments = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]

#: Parameters that carry a model's inner monologue (Letta's MemGPT agents): never empty,
#: as a model would write them (Letta's streaming parser loses an empty one's message).
_INNER_THOUGHTS = frozenset({"thinking", "inner_thoughts"})
#: JSON user messages that agent frameworks inject (Letta's heartbeats and logins); they
#: are not what the user said.
EVENT_TYPES = frozenset({"heartbeat", "login", "system_alert"})


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One scripted call of a tool the request offers.

    ``arguments`` is a dict, or a callable taking the request body and returning one.
    Required parameters it leaves out are generated from the tool's parameter schema
    (``request_heartbeat`` is always ``true``, so agent loops continue to the reply, and
    an inner-monologue ``thinking`` is never empty).
    """

    name: str
    """The function name."""
    arguments: Arguments | None = None
    """Arguments, or a callable ``body -> arguments``; ``None`` generates them."""


@dataclass(frozen=True, slots=True)
class ToolRule:
    """When ``match`` matches, call ``calls`` in order, one per model step of the turn.

    ``match`` works like a text rule's: a case-insensitive substring of the last user
    message, a compiled regex searched in it, or a callable taking the request body.
    The first matching rule owns the turn. Calls of tools the request does not offer (or
    that a named ``tool_choice`` excludes) are skipped.
    """

    match: Match
    """What the user's message must contain (see above)."""
    calls: tuple[ToolCall, ...]
    """The calls, in order."""

    def __init__(
        self, match: Match, calls: ToolCall | str | Sequence[ToolCall | str | tuple[str, Any]]
    ) -> None:
        object.__setattr__(self, "match", match)
        object.__setattr__(self, "calls", tuple(_calls(calls)))


def _calls(calls: Any) -> list[ToolCall]:
    if isinstance(calls, ToolCall | str):
        calls = [calls]
    out = []
    for c in calls:
        if isinstance(c, ToolCall):
            out.append(c)
        elif isinstance(c, str):
            out.append(ToolCall(c))
        else:
            name, args = c
            out.append(ToolCall(name, args))
    return out


def is_event(content: Any) -> bool:
    """True for an injected JSON event message (``{"type": "heartbeat", ...}``)."""
    if not isinstance(content, str) or not content.lstrip().startswith("{"):
        return False
    try:
        data = json.loads(content)
    except ValueError:
        return False
    return isinstance(data, dict) and data.get("type") in EVENT_TYPES


def message_text(message: dict[str, Any]) -> str:
    """The text of a chat message (content parts joined)."""
    content = message.get("content")
    if isinstance(content, list):  # OpenAI content parts
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def user_turn(body: dict[str, Any]) -> tuple[str, int]:
    """The last real user message and how many tool-call steps the assistant took since."""
    messages = body.get("messages") or []
    start = -1
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.get("role") == "user" and not is_event(m.get("content")):
            start = i
            break
    if start < 0:
        return "", 0
    steps = sum(
        1 for m in messages[start + 1 :] if m.get("role") == "assistant" and m.get("tool_calls")
    )
    return message_text(messages[start]), steps


def matches(match: Match, text: str, body: dict[str, Any]) -> bool:
    """Whether a rule's ``match`` accepts this request."""
    if isinstance(match, str):
        return match.lower() in text.lower()
    if isinstance(match, re.Pattern):
        return match.search(text) is not None
    return bool(match(body))


def offered_tools(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Function name → function definition, for the tools a request offers."""
    out: dict[str, dict[str, Any]] = {}
    for tool in body.get("tools") or []:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and fn.get("name"):
            out[str(fn["name"])] = fn
    return out


def forced_tool(body: dict[str, Any]) -> str | None:
    """The function a named ``tool_choice`` forces, if any."""
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        return (choice.get("function") or {}).get("name") or choice.get("name")
    return None


def arguments_for(
    fn: dict[str, Any], given: dict[str, Any], mode: Mode, text: str
) -> dict[str, Any]:
    """``given`` completed with every required parameter, in the schema's property order.

    The order matters to clients that parse streamed arguments as they arrive (Letta reads
    ``thinking`` before ``message``), as it would from a real model.
    """
    params = fn.get("parameters") or {}
    props = params.get("properties") or {}
    required = set(params.get("required") or [])
    out: dict[str, Any] = {}
    for name in [*props, *sorted(required - set(props))]:
        if name in given:
            out[name] = given[name]
        elif name == "request_heartbeat" and name in required:
            out[name] = True
        elif name in _INNER_THOUGHTS and name in required:
            out[name] = "Thinking it over."
        elif name in required:
            sub = {**props.get(name, {}), "$defs": params.get("$defs", {})}
            out[name] = instance(sub, mode, text)
    out.update({k: v for k, v in given.items() if k not in out})
    return out


def scripted_call(
    rules: Sequence[ToolRule], body: dict[str, Any], mode: Mode
) -> tuple[str, dict[str, Any]] | None:
    """The call the first matching rule scripts for this step, or ``None``."""
    tools = offered_tools(body)
    forced = forced_tool(body)
    text, steps = user_turn(body)
    for rule in rules:
        if not matches(rule.match, text, body):
            continue
        usable = [c for c in rule.calls if c.name in tools and forced in (None, c.name)]
        if steps >= len(usable):
            return None
        call = usable[steps]
        given = call.arguments(body) if callable(call.arguments) else dict(call.arguments or {})
        return call.name, arguments_for(tools[call.name], given, mode, text)
    return None


def tool_call_message(name: str, arguments: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """An assistant message that calls ``name``; the call id is derived from the request."""
    digest = hashlib.sha256(
        json.dumps([body.get("messages"), name, arguments], sort_keys=True, default=str).encode()
    ).hexdigest()
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{digest[:24]}",
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": json.dumps(arguments, separators=(",", ":")),
                },
            }
        ],
    }
