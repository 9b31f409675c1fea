"""A stand-in for Anthropic's Messages API on 127.0.0.1, for tests of provider models.

It speaks the real protocol over real HTTP, as documented by Anthropic: ``POST
/v1/messages`` with an ``x-api-key`` and an ``anthropic-version`` header, a top-level
``system``, ``messages`` of ``user``/``assistant`` turns whose content is a string or a
list of blocks, a required ``max_tokens``; structured output as ``output_format`` (a JSON
Schema) or a forced tool (``tool_choice: {"type": "tool", "name": ...}``); ``tools`` with
``tool_choice`` ``auto``, ``any`` or a named tool, answered by the server's tool rules;
replies of ``content`` blocks (``text``, ``tool_use``) with ``usage.input_tokens`` and
``output_tokens``; errors as ``{"type": "error", "error": {"type": ..., "message": ...}}``
(401 ``authentication_error``, 400 ``invalid_request_error``, 404 ``not_found_error``).
``GET /v1/models`` lists the models served.

Answers come from the rules of :class:`mnemometer.testing.FakeLLMServer` (this class is
one): the request is read as the OpenAI-shaped conversation it stands for, so the same
rules script both protocols. Token counts are words, as there.

Example::

    from mnemometer.testing import AnthropicServer

    with AnthropicServer(rules=[("city", "Phoenix")], models=["claude-haiku-4-5"],
                         api_key="sk-ant-test") as srv:
        LLMClient(srv.url, "anthropic/claude-haiku-4-5", "sk-ant-test").chat(...)
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from mnemometer.testing._handler import Handler
from mnemometer.testing.llm_server import FakeLLMServer

_ROLES = ("user", "assistant")


class AnthropicServer(FakeLLMServer):
    """A scriptable stand-in for Anthropic's Messages API (a context manager).

    Takes :class:`FakeLLMServer`'s arguments; ``api_key`` is checked against
    ``x-api-key``. :attr:`url` is the root to pass as ``--llm-base-url`` (the client adds
    ``/v1/messages``).
    """

    def _handler(self) -> type[Handler]:
        return type("_AnthropicHandler", (_Messages,), {"server_ref": self})

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``: the API root (``/v1/messages`` below it)."""
        return f"http://127.0.0.1:{self.port}"

    def answer_messages(self, body: dict[str, Any]) -> dict[str, Any]:
        """The Messages API reply to a valid request ``body``.

        A forced tool whose rule answers JSON gets that JSON as the tool's input (how
        LiteLLM asks older models for structured output); otherwise the tool rules decide
        as they do for :class:`FakeLLMServer` (``auto``, ``any``, a named tool).
        """
        chat = _as_openai(body)
        text = self.text_reply(chat)
        forced = body.get("tool_choice") or {}
        tools = {t.get("name"): t for t in body.get("tools") or []}
        given = _json_or_none(text) if isinstance(text, str) else None
        calls: list[tuple[str, Any]] = []
        if forced.get("type") == "tool" and forced.get("name") in tools and isinstance(given, dict):
            calls = [(forced["name"], given)]
        elif tools:
            message = self._tool_message(chat) or {}
            for c in message.get("tool_calls") or []:
                calls.append((c["function"]["name"], json.loads(c["function"]["arguments"])))
        if calls:
            blocks = [
                {"type": "tool_use", "id": f"toolu_{_digest(body)}_{i}", "name": n, "input": a}
                for i, (n, a) in enumerate(calls)
            ]
            reply, stop = json.dumps([a for _, a in calls]), "tool_use"
        else:
            reply = text if isinstance(text, str) else json.dumps(text)
            blocks, stop = [{"type": "text", "text": reply}], "end_turn"
        prompt = sum(len(_text(m.get("content")).split()) for m in chat["messages"])
        return {
            "id": "msg_" + _digest(body),
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": prompt, "output_tokens": len(reply.split())},
        }


class _Messages(Handler):
    """The routes of :class:`AnthropicServer`."""

    def _error(self, status: int, message: str, code: str = "invalid_request_error") -> None:
        self._json(status, {"type": "error", "error": {"type": code, "message": message}})

    def _authorised(self) -> bool:
        key = self.server_ref.api_key
        if key is None or self.headers.get("x-api-key") == key:
            return True
        self._error(401, "invalid x-api-key", "authentication_error")
        return False

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        if not self._authorised():
            return
        if self.path.split("?")[0].rstrip("/") != "/v1/models":
            self._error(404, f"no route {self.path}", "not_found_error")
            return
        models = self.server_ref.models
        data = [{"type": "model", "id": m, "display_name": m, "created_at": ""} for m in models]
        self._json(200, {"data": data, "has_more": False, "first_id": None, "last_id": None})

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        srv = self.server_ref
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not self._authorised():
            return
        path = self.path.split("?")[0].rstrip("/")
        if path != "/v1/messages":
            self._error(404, f"no route {self.path}", "not_found_error")
            return
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self._error(400, "request body is not valid JSON")
            return
        srv._record(path, body)
        problem = _invalid(body, self.headers.get("anthropic-version"))
        if problem:
            srv._logged(path, body, 400, problem)
            self._error(400, problem)
            return
        fault = srv._next_fault()
        if fault is not None and fault.kind in ("status", "slow") and self._fault(fault, body):
            return
        if body["model"] not in srv.models:
            self._error(404, f"model: {body['model']}", "not_found_error")
            return
        try:
            out = srv.answer_messages(body)
        except Exception as e:  # a rule that raises is the server's 500, as in real life
            srv._logged(path, body, 500, f"{type(e).__name__}: {e}")
            self._error(500, f"{type(e).__name__}: {e}", "api_error")
            return
        srv._logged(path, body, 200, out)
        self._json(200, out)


def _invalid(body: Any, version: str | None) -> str:
    """What the real API would refuse in this request ("" when nothing)."""
    if not version:
        return "anthropic-version: header is required"
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        return "model: Field required"
    if not isinstance(body.get("max_tokens"), int):
        return "max_tokens: Field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in _ROLES:
            role = m.get("role") if isinstance(m, dict) else None
            return f"messages.{i}.role: Input should be 'user' or 'assistant', got {role!r}"
    if messages[0]["role"] != "user":
        return "messages: first message must use the 'user' role"
    return ""


def _as_openai(body: dict[str, Any]) -> dict[str, Any]:
    """The OpenAI-shaped chat request a Messages request stands for (for the rules)."""
    messages = []
    if body.get("system"):
        messages.append({"role": "system", "content": _text(body["system"])})
    messages += [{"role": m["role"], "content": _text(m.get("content"))} for m in body["messages"]]
    chat: dict[str, Any] = {"model": body["model"], "messages": messages}
    schema = (body.get("output_format") or {}).get("schema")
    if schema is not None:
        chat["response_format"] = {"type": "json_schema", "json_schema": {"schema": schema}}
    if body.get("tools"):
        chat["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.get("name"),
                    "description": t.get("description", ""),
                    "parameters": t.get("input_schema") or {"type": "object"},
                },
            }
            for t in body["tools"]
        ]
        choice = body.get("tool_choice") or {"type": "auto"}
        chat["tool_choice"] = {
            "auto": "auto",
            "any": "required",
            "none": "none",
            "tool": {"type": "function", "function": {"name": choice.get("name")}},
        }.get(choice.get("type"), "auto")
    return chat


def _text(content: Any) -> str:
    """A string, or the text of a list of content blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and "text" in b
        )
    return ""


def _last(chat: dict[str, Any]) -> str:
    return next((m["content"] for m in reversed(chat["messages"]) if m["role"] == "user"), "")


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _digest(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:12]


__all__ = ["AnthropicServer"]
