"""JSON instances that validate against a JSON Schema, for structured-output requests.

Two modes:

- ``minimal``: the smallest valid instance. Only required properties, empty arrays unless
  ``minItems`` asks for more, ``null`` wherever a union allows it, ``""``, ``0``, ``false``.
  A pipeline fed this must survive extractions that found nothing.
- ``content``: every property, strings and arrays filled from the text of the request's
  last user message: entities (runs of capitalised words) for fields named like ``name``,
  ``entity``, ``source`` or ``id`` (``target`` gets the next entity, so edges link
  nodes); the message's sentences (its "facts") for ``relation``, ``fact``, ``summary``
  and the rest; one array item per entity or fact.

The generator covers the schema keywords structured-output APIs use: ``type`` (also as a
list), ``properties``/``required``, ``items``/``minItems``/``maxItems``/``uniqueItems``,
``enum``, ``const``, ``anyOf``/``oneOf``/``allOf``, ``$ref`` into ``$defs``/``definitions``,
``minimum``/``exclusiveMinimum``, ``minLength``/``maxLength`` and the common ``format``
values. ``pattern`` is not solved: a schema that demands one needs a scripted reply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

Mode = Literal["minimal", "content"]

_STOP = frozenset(
    """
    a an and are at by do does for from had has have he her his how i i'm in is it its me my
    of on or our she so that the their them they this to was we were what when where which
    who whom whose why with you your please remember also now actually yes no hi hello ok
    okay can could would will should did be been
    """.split()
)
_ENTITY_HINTS = ("name", "entit", "subject", "source", "label", "title", "node", "person")
_TARGET_HINTS = ("target", "object", "destination", "dest")
_FACT_HINTS = ("relation", "fact", "description", "summary", "content", "text", "statement")
_FORMATS = {
    "date-time": "2026-01-01T00:00:00Z",
    "date": "2026-01-01",
    "time": "00:00:00",
    "email": "user@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
}


def stop_words() -> frozenset[str]:
    """Words that never count as content (question words, pronouns, articles)."""
    return _STOP


def entities(text: str) -> list[str]:
    """Runs of capitalised words that are not stop words, in order, without repeats.

    >>> entities("My name is Darrin Smith and I live in Phoenix.")
    ['Darrin Smith', 'Phoenix']
    """
    out: list[str] = []
    for sentence in facts(text):
        for m in re.finditer(r"[A-Z][\w'@-]*(?:\.\w[\w'@-]*)*(?:\s+[A-Z][\w'@-]*)*", sentence):
            words = m.group(0).split()
            while words and words[0].lower() in _STOP:
                words.pop(0)
            while words and words[-1].lower() in _STOP:
                words.pop()
            name = " ".join(words)
            if name and name not in out:
                out.append(name)
    return out


def facts(text: str) -> list[str]:
    """The sentences of ``text`` (split after ``.``, ``!``, ``?`` and their CJK forms)."""
    parts = re.split(r"(?<=[.!?。！？])\s*", text.strip())
    return [p.strip() for p in parts if p.strip()]


@dataclass
class _Source:
    entities: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)

    def entity(self, i: int) -> str:
        if self.entities:
            return self.entities[i % len(self.entities)]
        return self.fact(i).split(" ")[0] if self.facts else "entity"

    def fact(self, i: int) -> str:
        return self.facts[i % len(self.facts)] if self.facts else "fact"


def instance(schema: dict[str, Any] | bool, mode: Mode = "minimal", text: str = "") -> Any:
    """An instance valid against ``schema``.

    Args:
        schema: a JSON Schema (draft 2020-12 or 7 as structured-output APIs use them).
        mode: ``minimal`` or ``content`` (see the module docstring).
        text: where ``content`` mode takes entities and facts from.
    """
    if mode not in ("minimal", "content"):
        raise ValueError(f"mode must be 'minimal' or 'content', got {mode!r}")
    src = _Source(entities(text), facts(text))
    root = schema if isinstance(schema, dict) else {}
    return _gen(schema, root, mode, src, hint="", index=0, depth=0)


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    seen = 0
    while isinstance(schema, dict) and "$ref" in schema and seen < 32:
        ref = str(schema["$ref"])
        if not ref.startswith("#"):
            raise ValueError(f"only local $ref is supported, got {ref!r}")
        target: Any = root
        for part in [p for p in ref[1:].split("/") if p]:
            target = target[part.replace("~1", "/").replace("~0", "~")]
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**target, **rest}
        seen += 1
    return schema


def _merge_all_of(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    merged = {k: v for k, v in schema.items() if k != "allOf"}
    for sub in schema["allOf"]:
        sub = _resolve(sub, root) if isinstance(sub, dict) else {}
        if "allOf" in sub:
            sub = _merge_all_of(sub, root)
        for key, value in sub.items():
            if key == "properties":
                merged["properties"] = {**merged.get("properties", {}), **value}
            elif key == "required":
                merged["required"] = sorted({*merged.get("required", []), *value})
            else:
                merged.setdefault(key, value)
    return merged


def _gen(
    schema: Any, root: dict[str, Any], mode: Mode, src: _Source, hint: str, index: int, depth: int
) -> Any:
    if schema is True or schema == {} or not isinstance(schema, dict):
        return None if mode == "minimal" else src.fact(index)
    if depth > 24:
        return None
    schema = _resolve(schema, root)
    if "allOf" in schema:
        schema = _merge_all_of(schema, root)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [_resolve(o, root) if isinstance(o, dict) else o for o in schema[key]]
            nullable = [o for o in options if isinstance(o, dict) and o.get("type") == "null"]
            other = [o for o in options if o not in nullable]
            if mode == "minimal" and nullable:
                return None
            pick = other[0] if other else options[0]
            return _gen(pick, root, mode, src, hint, index, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        if mode == "minimal" and "null" in kind:
            return None
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else None
    if kind == "object":
        return _object(schema, root, mode, src, index, depth)
    if kind == "array":
        return _array(schema, root, mode, src, hint, depth)
    if kind == "string":
        return _string(schema, mode, src, hint, index)
    if kind in ("integer", "number"):
        return _number(schema, kind)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return None if mode == "minimal" else src.fact(index)


def _object(
    schema: dict[str, Any], root: dict[str, Any], mode: Mode, src: _Source, index: int, depth: int
) -> dict[str, Any]:
    props: dict[str, Any] = schema.get("properties") or {}
    required = list(schema.get("required") or [])
    names = required if mode == "minimal" else list(props)
    names += [n for n in required if n not in names]
    out: dict[str, Any] = {}
    for name in names:
        sub = props.get(name, {})
        out[name] = _gen(sub, root, mode, src, name.lower(), index, depth + 1)
    return out


def _array(
    schema: dict[str, Any], root: dict[str, Any], mode: Mode, src: _Source, hint: str, depth: int
) -> list[Any]:
    low = int(schema.get("minItems", 0))
    high = schema.get("maxItems")
    if mode == "minimal":
        n = low
    elif any(h in hint for h in _ENTITY_HINTS):
        n = max(low, len(src.entities) or 1)
    else:
        n = max(low, len(src.facts) or 1)
    if high is not None:
        n = min(n, int(high))
    item_schema = schema.get("items", {})
    items = [_gen(item_schema, root, mode, src, hint, i, depth + 1) for i in range(n)]
    if schema.get("uniqueItems"):
        items = _distinct(items)
    return items


def _distinct(items: list[Any]) -> list[Any]:
    seen: list[Any] = []
    for i, item in enumerate(items):
        if item in seen and isinstance(item, str):
            item = f"{item} ({i + 1})"
        if item in seen:
            continue
        seen.append(item)
    return seen


def _string(schema: dict[str, Any], mode: Mode, src: _Source, hint: str, index: int) -> str:
    fmt = schema.get("format")
    if fmt in _FORMATS:
        return _FORMATS[fmt]
    if mode == "minimal":
        value = ""
    elif any(h in hint for h in _FACT_HINTS):
        value = src.fact(index)
    elif any(h in hint for h in _TARGET_HINTS):
        value = src.entity(index + 1)
    elif any(h in hint for h in _ENTITY_HINTS) or hint == "id" or hint.endswith("_id"):
        value = src.entity(index)
    else:
        value = src.fact(index)
    low = int(schema.get("minLength", 0))
    if len(value) < low:
        value += "x" * (low - len(value))
    high = schema.get("maxLength")
    return value[: int(high)] if high is not None else value


def _number(schema: dict[str, Any], kind: str) -> int | float:
    value = schema.get("minimum", 0)
    if "exclusiveMinimum" in schema:
        value = max(value, schema["exclusiveMinimum"] + 1)
    if "maximum" in schema:
        value = min(value, schema["maximum"])
    return int(value) if kind == "integer" else float(value)
