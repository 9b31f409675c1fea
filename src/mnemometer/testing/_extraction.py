"""A deterministic stand-in for the LLM that graph and memory systems extract with.

Graphiti, cognee and LangMem send long prompts (instructions, examples, earlier messages)
around the one text they are extracting from. The generic ``content`` mode of
:class:`~mnemometer.testing.FakeLLMServer` reads entities from the whole prompt, examples
included; :func:`extraction_llm` reads them from the text itself, the way a model would:

- **Graphiti**: ``ExtractedEntities`` gets the speaker and the capitalised names of the
  ``<CURRENT MESSAGE>``; ``ExtractedEdges`` one fact linking its first two entities, whose
  text is the message; every other schema (timestamps, summaries, duplicate checks) the
  minimal valid instance, i.e. "nothing to change".
- **cognee**: ``KnowledgeGraph`` gets the text's entities as nodes and one edge between the
  first two, named by the text; ``SummarizedContent`` a summary that is the text.
- **LangMem**: the ``Memory`` tool is called with the last user message as its content.

A text with fewer than two capitalised names (Chinese, lower-case) gets its first and last
words as entities, so every text yields one fact: retrieval over the extracted facts then
measures the system's plumbing (what it stores, how hits map back), never a model's
judgement. ``mode="minimal"`` (every extraction empty) shows what a system does when its
model finds nothing.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mnemometer.testing._schema import entities, instance
from mnemometer.testing._tools import ToolCall, ToolRule, offered_tools
from mnemometer.testing.llm_server import FakeLLMServer

_CURRENT = re.compile(r"<CURRENT[ _]MESSAGE>\s*(.*?)\s*</CURRENT[ _]MESSAGE>", re.S)
_SESSION = re.compile(r"<session_[^>]*>\s*(.*?)\s*</session_[^>]*>", re.S)
_HEADER = re.compile(r"^=+ [^=]+ =+$", re.M)
_ENTITIES = re.compile(r"<ENTITIES>\s*(.*?)\s*</ENTITIES>", re.S)
_SPEAKER = re.compile(r"^\s*([^:\n]{1,40}):\s")


_FENCED = re.compile(r"```json\s*(\{.*?\})\s*```", re.S)
_FORMAT = re.compile(r"following format:\s*(\{.*\})\s*$", re.S)


def _prompt_schema(body: dict[str, Any]) -> dict[str, Any]:
    """A JSON Schema written into the prompt (``json_object`` mode: litellm, Graphiti)."""
    for m in body.get("messages") or []:
        text = str(m.get("content") or "")
        for found in [*_FENCED.findall(text), *_FORMAT.findall(text)]:
            try:
                schema = json.loads(found)
            except ValueError:
                continue
            if isinstance(schema, dict) and "properties" in schema:
                return schema
    return {}


def _schema(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    fmt = body.get("response_format") or {}
    spec = fmt.get("json_schema") or {}
    schema = spec.get("schema") or fmt.get("schema") or {}
    if not schema and fmt.get("type") == "json_object":
        schema = _prompt_schema(body)
    return str(spec.get("name") or schema.get("title") or ""), schema


def _last_user(body: dict[str, Any]) -> str:
    for m in reversed(body.get("messages") or []):
        if m.get("role") == "user":
            content = m.get("content")
            if isinstance(content, list):
                return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            return str(content or "")
    return ""


def current_text(body: dict[str, Any]) -> str:
    """The text a request extracts from (Graphiti's message, LangMem's session, cognee's chunk)."""
    prompt = _last_user(body)
    found = _CURRENT.search(prompt)
    if found:
        return found.group(1).strip()
    found = _SESSION.search(prompt)
    if found:
        return _HEADER.sub("", found.group(1)).strip()
    return prompt.strip()


def text_entities(text: str) -> list[str]:
    """The speaker, then the capitalised names; first and last words when fewer than two."""
    out: list[str] = []
    text = re.sub(r"^\s*\[[^\]]{1,40}\]\s*", "", text)  # a leading date, "[2024-03-01]"
    speaker = _SPEAKER.match(text)
    if speaker:
        out.append(speaker.group(1).strip())
        text = text[speaker.end() :]
    out += [e for e in entities(text) if e not in out]
    words = re.findall(r"\w+", text)
    if len(words) == 1 and len(words[0]) > 4:  # unsegmented text (Chinese): its two ends
        words = [words[0][:4], words[0][-4:]]
    for w in (words[:1] + words[-1:]) if len(out) < 2 else []:
        if w not in out:
            out.append(w)
    return out or ["text"]


def _graphiti_entities(body: dict[str, Any], schema: dict[str, Any]) -> str:
    names = text_entities(current_text(body))
    items = [{"name": n, "entity_type_id": 0, "episode_indices": [0]} for n in names]
    return json.dumps({**instance(schema, "minimal"), "extracted_entities": items})


def _graphiti_edges(body: dict[str, Any], schema: dict[str, Any]) -> str:
    text = current_text(body)
    offered = _ENTITIES.search(_last_user(body))
    known = re.findall(r'"name":\s*"((?:[^"\\]|\\.)*)"', offered.group(1)) if offered else []
    names = [n for n in text_entities(text) if n in known] or known
    edges = []
    if len(names) >= 2:
        edges.append(
            {
                "source_entity_name": names[0],
                "target_entity_name": names[1],
                "relation_type": "MENTIONED_WITH",
                "fact": text,
                "valid_at": None,
                "invalid_at": None,
                "episode_indices": [0],
            }
        )
    return json.dumps({**instance(schema, "minimal"), "edges": edges})


def _cognee_graph(body: dict[str, Any], schema: dict[str, Any]) -> str:
    text = current_text(body)
    names = text_entities(text)
    nodes = [
        {"id": n, "name": n, "type": "Entity", "description": f"{n}, as in: {text}"} for n in names
    ]
    edges = [  # none for a text with one name ("Caroline: 😊"), which raised IndexError
        {"source_node_id": a, "target_node_id": b, "relationship_name": "mentioned_with"}
        for a, b in zip(names[:1], names[1:2], strict=False)
    ]
    return json.dumps({"nodes": nodes, "edges": edges})


def _cognee_summary(body: dict[str, Any], schema: dict[str, Any]) -> str:
    text = current_text(body)
    out = instance(schema, "minimal")
    out.update(
        {k: text for k in ("summary", "description") if k in (schema.get("properties") or {})}
    )
    return json.dumps(out)


_HANDLERS = {
    "ExtractedEntities": _graphiti_entities,
    "ExtractedEdges": _graphiti_edges,
    "KnowledgeGraph": _cognee_graph,
    "SummarizedContent": _cognee_summary,
}


def _extracts(body: dict[str, Any]) -> bool:
    return _schema(body)[0] in _HANDLERS


def _extract(body: dict[str, Any]) -> str:
    name, schema = _schema(body)
    return _HANDLERS[name](body, schema)


def _prompted(body: dict[str, Any]) -> bool:
    fmt = body.get("response_format") or {}
    return fmt.get("type") == "json_object" and not fmt.get("schema") and bool(_schema(body)[1])


def _minimal(body: dict[str, Any]) -> str:
    return json.dumps(instance(_schema(body)[1], "minimal"))


def _memory_tool(body: dict[str, Any]) -> bool:
    return "Memory" in offered_tools(body)


def _memory_args(body: dict[str, Any]) -> dict[str, Any]:
    return {"content": current_text(body)}


def extraction_llm(mode: str = "content", server: Any = None, **options: Any) -> Any:
    """A :class:`~mnemometer.testing.FakeLLMServer` that extracts like a literal model.

    Args:
        mode: ``content`` (one fact per text, see the module docstring) or ``minimal``
            (every extraction empty, every other answer the minimal valid instance).
        server: the server class (default ``FakeLLMServer``; ``AnthropicServer`` answers
            the same rules in Anthropic's protocol).
        options: further ``FakeLLMServer`` options (``log_path``, ``embeddings``, ...).
    """
    if mode not in ("content", "minimal"):
        raise ValueError(f"mode must be 'content' or 'minimal', got {mode!r}")
    rules = list(options.pop("rules", ()))
    tool_rules = list(options.pop("tool_rules", ()))
    if mode == "content":
        rules.append((_extracts, _extract))
        tool_rules.append(ToolRule(_memory_tool, [ToolCall("Memory", _memory_args)]))
    rules.append((_prompted, _minimal))  # a schema in the prompt: the minimal instance
    cls = server or FakeLLMServer
    return cls(rules=rules, tool_rules=tool_rules, mode="minimal", **options)
