"""A deterministic OpenAI-compatible HTTP server on 127.0.0.1, for tests.

It speaks the real protocol over real HTTP (``/v1/chat/completions`` plain and streamed as
SSE, ``/v1/embeddings``, ``/v1/models``), answers from rules you script, and can misbehave
on demand (429, 500, malformed or truncated bodies, slow replies) so clients and agents are
tested against the failures real endpoints produce. Real systems (Letta, mem0, Graphiti,
cognee, LangMem) talk to it as they talk to OpenAI: structured output (``response_format``
``json_schema`` or ``json_object``) gets an instance valid against the schema, ``tools``
get the calls a :class:`ToolRule` scripts. See docs/testing.md.

Example::

    from mnemometer.testing import FakeLLMServer, ToolRule

    with FakeLLMServer(rules=[("name and city", "Darrin Phoenix")], default="OK") as srv:
        client = LLMClient(srv.base_url, srv.model)
        srv.fail_next(2, status=429)        # the next two requests get HTTP 429
        client.chat([...]).text             # retried, then "Darrin Phoenix"
        srv.requests                        # every decoded request body, in order

A rule is ``(match, reply)``. ``match`` is a substring of the last user message
(case-insensitive), a compiled regex searched in it, or a callable taking the request body.
``reply`` is a string, or a callable taking the request body and returning a string or a
full chat-completion dict. The first matching rule wins; otherwise ``default`` (a string or
callable) answers. With ``mode="minimal"`` or ``mode="content"``, a structured-output
request no rule matches gets a generated JSON instance instead of ``default``. Embeddings
are deterministic bag-of-words hashes (same text, same vector; shared words give a
positive cosine), or MiniLM vectors with ``embeddings="minilm"``.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from mnemometer.testing._handler import Handler
from mnemometer.testing._schema import entities, facts, instance
from mnemometer.testing._tools import (
    Match,
    ToolCall,
    ToolRule,
    arguments_for,
    forced_tool,
    matches,
    offered_tools,
    scripted_call,
    tool_call_message,
    user_turn,
)
from mnemometer.testing._wire import embeddings_response, hash_embedding

__all__ = [
    "Fault",
    "FakeLLMServer",
    "ToolCall",
    "ToolRule",
    "echo_memories",
    "hash_embedding",
    "last_user_message",
]

Reply = str | Callable[[dict[str, Any]], "str | dict[str, Any]"]
Embed = Callable[[list[str]], list[list[float]]]
_MODES = ("scripted", "minimal", "content")


@dataclass(frozen=True, slots=True)
class Fault:
    """One scripted misbehaviour."""

    kind: str
    """``status`` (an HTTP error), ``malformed`` (not JSON), ``truncated`` (a body cut short),
    ``slow`` (answer after ``delay`` seconds) or ``empty`` (a reply with no choices)."""
    status: int = 500
    """HTTP status for ``status`` faults."""
    delay: float = 0.0
    """Seconds to wait before answering (``slow``)."""


def last_user_message(body: dict[str, Any]) -> str:
    """The content of the last ``user`` message in a chat request ("" if none).

    JSON event messages that agents inject as user messages (Letta's heartbeats and
    logins) are skipped: they are not what the user said.
    """
    return user_turn(body)[0]


class FakeLLMServer:
    """A scriptable OpenAI-compatible server on 127.0.0.1 (a context manager).

    Args:
        rules: ``(match, reply)`` pairs tried in order.
        default: the reply when no rule matches.
        models: chat model ids served (and listed by ``/v1/models``); requests for any
            other model get a 404 naming it.
        api_key: when set, requests without ``Authorization: Bearer <api_key>`` get a 401.
        embedding_dim: size of the hashed embedding vectors.
        port: 0 picks a free port.
        mode: ``scripted`` (every answer comes from ``rules``/``default``), ``minimal``
            or ``content``: structured-output requests no rule matches get a generated
            JSON instance, minimal or filled from the user's message (see
            :mod:`mnemometer.testing._schema`); generated tool arguments follow the same
            mode.
        tool_rules: :class:`ToolRule` s: when to call which tool with what arguments.
        reply_tool: when ``tool_choice`` is ``"required"`` and no tool rule applies, the
            reply goes out as a call of this tool (its ``message`` argument), if offered.
        embeddings: ``hash`` (bag-of-words hashes), ``minilm`` (the packaged MiniLM;
            needs the ``[embeddings]`` extra) or a callable ``texts -> vectors``.
        embedding_models: further model ids ``/v1/embeddings`` accepts (not listed as
            chat models), e.g. ``text-embedding-3-small``.
        log_path: append one JSON line per request (path, request, status, response).
        usage: what a chat reply says it cost: ``words`` (whitespace-separated words of the
            messages and the reply), ``none`` (no ``usage`` field, as some servers), or a
            callable ``(request body, reply message) -> usage dict or None`` (an endpoint
            that misreports, for the cost summary's checks).
        latency: seconds every chat answer waits before it is sent, as a model's time
            would (each request in its own thread: requests in flight wait together).
    """

    def __init__(
        self,
        rules: Sequence[tuple[Match, Reply]] = (),
        default: Reply = "OK",
        *,
        models: Sequence[str] = ("fake-llm",),
        api_key: str | None = None,
        embedding_dim: int = 64,
        port: int = 0,
        mode: str = "scripted",
        tool_rules: Sequence[ToolRule] = (),
        reply_tool: str = "send_message",
        embeddings: str | Embed = "hash",
        embedding_models: Sequence[str] = (),
        log_path: str | Path | None = None,
        usage: str | Callable[[dict[str, Any], dict[str, Any]], dict[str, Any] | None] = "words",
        latency: float = 0.0,
    ) -> None:
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {', '.join(_MODES)}, got {mode!r}")
        self.rules = list(rules)
        self.default = default
        self.models = list(models)
        self.api_key = api_key
        self.embedding_dim = embedding_dim
        self.mode = mode
        self.tool_rules = list(tool_rules)
        self.reply_tool = reply_tool
        self.embedding_models = list(embedding_models)
        self._embed = self._embedder(embeddings)
        self.log_path = Path(log_path) if log_path else None
        if not callable(usage) and usage not in ("words", "none"):
            raise ValueError(f"usage must be 'words', 'none' or a callable, got {usage!r}")
        self.usage = usage
        self.latency = float(latency)
        self.requests: list[dict[str, Any]] = []
        """Every decoded request body (chat and embeddings), in arrival order."""
        self.paths: list[str] = []
        """The path of every request, in arrival order."""
        self.log: list[dict[str, Any]] = []
        """Every exchange: ``path``, ``request``, ``status`` and ``response``, in order."""
        self._faults: list[Fault] = []
        self._lock = threading.Lock()
        self._port = port
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def _embedder(self, embeddings: str | Embed) -> Embed:
        if callable(embeddings):
            return embeddings
        if embeddings == "hash":
            return lambda texts: [hash_embedding(t, self.embedding_dim) for t in texts]
        if embeddings == "minilm":
            from mnemometer.embeddings import load_embedder

            model = load_embedder()  # raises naming the [embeddings] extra when missing
            self.embedding_dim = model.dim
            return lambda texts: model.encode(texts, cache=False).tolist()
        raise ValueError(f"embeddings must be 'hash', 'minilm' or a callable, got {embeddings!r}")

    # ---- lifecycle ----------------------------------------------------------------------

    def start(self) -> FakeLLMServer:
        """Bind and serve in a background thread."""
        self._httpd = ThreadingHTTPServer(("127.0.0.1", self._port), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def _handler(self) -> type[Handler]:
        """The request handler class, bound to this server (a protocol's stand-in overrides it)."""
        return type("_Handler", (Handler,), {"server_ref": self})

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port."""
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def model(self) -> str:
        """The first served model id."""
        return self.models[0]

    # ---- scripting ----------------------------------------------------------------------

    def add_rule(self, match: Match, reply: Reply) -> None:
        """Append a rule."""
        with self._lock:
            self.rules.append((match, reply))

    def add_tool_rule(self, match: Match, *calls: ToolCall | str | tuple[str, Any]) -> None:
        """Append a :class:`ToolRule`: on ``match``, make these calls, one per step."""
        with self._lock:
            self.tool_rules.append(ToolRule(match, list(calls)))

    def fail_next(
        self, n: int = 1, *, status: int = 500, kind: str = "status", delay: float = 0.0
    ) -> None:
        """Make the next ``n`` requests misbehave (see :class:`Fault`)."""
        if kind not in ("status", "malformed", "truncated", "slow", "empty"):
            raise ValueError(f"unknown fault kind {kind!r}")
        with self._lock:
            self._faults.extend(Fault(kind, status, delay) for _ in range(n))

    def chat_requests(self) -> list[dict[str, Any]]:
        """The chat-completion request bodies received so far."""
        with self._lock:
            return [
                b
                for b, p in zip(self.requests, self.paths, strict=True)
                if p.endswith("/chat/completions")
            ]

    def tool_calls(self) -> list[tuple[str, dict[str, Any]]]:
        """Every tool call the server answered with, as ``(name, arguments)``, in order."""
        with self._lock:
            exchanges = list(self.log)
        out = []
        for ex in exchanges:
            for choice in (ex.get("response") or {}).get("choices") or []:
                for call in (choice.get("message") or {}).get("tool_calls") or []:
                    fn = call["function"]
                    out.append((fn["name"], json.loads(fn["arguments"])))
        return out

    # ---- answering (called from handler threads) ----------------------------------------

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self._faults.pop(0) if self._faults else None

    def _record(self, path: str, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(body)
            self.paths.append(path)

    def _logged(self, path: str, body: dict[str, Any], status: int, response: Any) -> None:
        entry = {"time": time.time(), "path": path, "request": body, "status": status}
        entry["response"] = response
        with self._lock:
            self.log.append(entry)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(entry, default=str) + "\n")

    def text_reply(self, body: dict[str, Any]) -> str | dict[str, Any]:
        """What the rules, the structured-output mode or ``default`` answer (no tools)."""
        text = last_user_message(body)
        with self._lock:
            rules = list(self.rules)
        for match, candidate in rules:
            if matches(match, text, body):
                return candidate(body) if callable(candidate) else candidate
        fmt = body.get("response_format") or {}
        if self.mode != "scripted" and fmt.get("type") in ("json_schema", "json_object"):
            schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema")
            if schema is not None:
                return json.dumps(instance(schema, self.mode, text))  # type: ignore[arg-type]
            if self.mode == "minimal":
                return "{}"
            return json.dumps({"entities": entities(text), "facts": facts(text)})
        return self.default(body) if callable(self.default) else self.default

    def _tool_message(self, body: dict[str, Any]) -> dict[str, Any] | None:
        tools = offered_tools(body)
        choice = body.get("tool_choice", "auto")
        if not tools or choice == "none":
            return None
        mode = "minimal" if self.mode == "scripted" else self.mode
        with self._lock:
            rules = list(self.tool_rules)
        call = scripted_call(rules, body, mode)  # type: ignore[arg-type]
        forced = forced_tool(body)
        if call is None and (forced or choice == "required"):
            name = forced or (self.reply_tool if self.reply_tool in tools else next(iter(tools)))
            out = self.text_reply(body)
            reply = _content(out)
            given = {"message": reply} if "message" in _params(tools[name]) else {}
            call = name, arguments_for(tools[name], given, mode, last_user_message(body))  # type: ignore[arg-type]
        if call is None:
            return None
        return tool_call_message(call[0], call[1], body)

    def answer_chat(self, body: dict[str, Any]) -> dict[str, Any]:
        """The chat-completion response for ``body``."""
        message = self._tool_message(body)
        if message is None:
            out = self.text_reply(body)
            if isinstance(out, dict):
                return out
            message = {"role": "assistant", "content": str(out)}
        response: dict[str, Any] = {
            "id": "chatcmpl-"
            + hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:12],
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model"),
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    "message": message,
                }
            ],
        }
        usage = self._usage(body, message)
        if usage is not None:
            response["usage"] = usage
        return response

    def _usage(self, body: dict[str, Any], message: dict[str, Any]) -> dict[str, Any] | None:
        if callable(self.usage):
            return self.usage(body, message)
        if self.usage == "none":
            return None
        prompt_tokens = sum(len(_content(m).split()) for m in body.get("messages") or [])
        completion_tokens = len(_content(message).split()) or (
            len(json.dumps(message.get("tool_calls"))) // 4
        )
        return {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }

    def answer_embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        """The embeddings response for ``body`` (``encoding_format`` float or base64)."""
        return embeddings_response(body, self._embed)


def _content(message: Any) -> str:
    if isinstance(message, str):
        return message
    if isinstance(message, dict) and "choices" in message:  # a full completion from a rule
        choices = message.get("choices") or [{}]
        return _content(choices[0].get("message") or {})
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _params(fn: dict[str, Any]) -> dict[str, Any]:
    return (fn.get("parameters") or {}).get("properties") or {}


def echo_memories(body: dict[str, Any]) -> str:
    """A reply that lists the memories the prompt gave ("- " lines), or "Noted.".

    A deterministic stand-in for a perfect reader: what an agent retrieved is what it says,
    so scenario results measure the memory alone.
    """
    lines = [ln[2:] for ln in last_user_message(body).splitlines() if ln.startswith("- ")]
    return "; ".join(lines) if lines else "Noted."
