"""Reader for every MemTest JSON variant the seed shipped.

Variants: the procedural generator (three stylistic versions, nested time/person/location/
event), the "AI-native" hand-written set, the Harry Potter sets (``content`` + string labels),
the Four Novels set (``query`` instead of ``query_text``, ``text`` beside ``content``) and
天龙八部. Quirks are mapped, never crashed on; every change is written to ``info.notes``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from mnemometer.datasets._models import Dataset, DatasetInfo, Memory, MemoryVersion, Query
from mnemometer.datasets._readers import Reader, head_keys, head_starts_with, read_json
from mnemometer.errors import DatasetError
from mnemometer.text import detect_language

_TYPE_MAP = {
    "人物检索": "person",
    "地点检索": "location",
    "事件检索": "event",
    "时间检索": "time",
    "组合检索": "composite",
    "多维检索": "composite",
    "聚类检索": "cluster",
    "负样本": "negative",
    "person retrieval": "person",
    "person": "person",
    "location": "location",
    "location retrieval": "location",
    "event description": "event",
    "event retrieval": "event",
    "time retrieval": "time",
    "complex multi-hop": "composite",
}
_DIFFICULTY = {"简单": "easy", "中等": "medium", "困难": "hard"}
_TIME_FORMATS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d", "%d %B %Y", "%B %d, %Y", "%Y")
# Four Novels appends "[人物:X 地点:Y 时间:Z 朝代:W 事件:E]" (sometimes cut short) to its text.
_LABEL_TAIL = re.compile(r"\s*\[人物:[^\[]*$")
_MEMORY_OWN_KEYS = {"memory_id", "versions", "content", "text"}
_QUERY_OWN_KEYS = {
    "query_id",
    "query_text",
    "query",
    "query_type",
    "expected_memory_ids",
    "expected_answer",
    "expected_answer_text",
    "difficulty",
    "is_negative",
}


def _sniff(path: Path, head: bytes) -> bool:
    keys = head_keys(head)
    return (
        head_starts_with(head, "{")
        and bool({"memory_id", "memories"} & keys)
        and "info" not in keys
    )


def _read(path: Path) -> Dataset:
    raw = read_json(path)
    if not isinstance(raw, dict) or not isinstance(raw.get("memories"), list):
        raise DatasetError(
            f"{path}: not a dataset: expected a JSON object with 'info' and 'memories' "
            "(native) or 'memories' and 'queries' (MemTest)"
        )
    if "info" in raw:
        raise DatasetError(
            f"{path}: has 'info' and 'memories': a native dataset whose 'info' is not near "
            "the start; load it with format='native-json'"
        )
    return from_memtest(raw, path)


MEMTEST = Reader(
    name="memtest",
    description="MemTest JSON (every variant its seed shipped: procedural, novels, 天龙八部)",
    sniff=_sniff,
    read=_read,
    order=20,
)


def from_memtest(raw: dict[str, Any], path: Path) -> Dataset:
    """Map a MemTest database onto the native model, excluding what cannot be scored."""
    notes: list[str] = []
    memories = _memories(raw["memories"], path, notes)
    known = {m.id for m in memories}
    queries = _queries(_typed(raw, "queries", list, path) or [], known, path, notes)
    head = _typed(raw, "database_info", dict, path) or _typed(raw, "metadata", dict, path) or {}
    texts = (m.text for m in memories)
    lang = _language(raw.get("lang") or head.get("lang") or head.get("language")) or (
        detect_language(texts)
    )
    info = DatasetInfo(
        name=str(head.get("name") or raw.get("source") or path.stem),
        version=str(head.get("version") or "1"),
        language=lang,
        reference_time=_parse_time(head.get("created_at")),
        source=f"MemTest JSON: {path.name}",
        notes=notes,
    )
    return Dataset(info=info, memories=memories, queries=queries)


def _memories(raw: list[Any], path: Path, notes: list[str]) -> list[Memory]:
    out: list[Memory] = []
    seen: set[str] = set()
    dup = empty = stripped = 0
    used_text_field = False
    for i, m in enumerate(raw):
        if not isinstance(m, dict) or not m.get("memory_id"):
            raise DatasetError(f"{path}: memories.{i}: expected an object with 'memory_id'")
        mid = str(m["memory_id"])
        if mid in seen:
            dup += 1
            continue
        versions = [
            MemoryVersion(
                style=str(v.get("style") or v.get("version_id") or f"v{j + 1}"),
                text=str(v["content"]),
            )
            for j, v in enumerate(_typed(m, "versions", list, path, f"memories.{i}") or [])
            if isinstance(v, dict) and v.get("content")
        ]
        # Four Novels appends a label string to `content`; `text` is the fragment alone,
        # so prefer it: the label would leak the answer key into what the store sees.
        text = versions[0].text if versions else str(m.get("text") or m.get("content") or "")
        used_text_field |= bool(m.get("text")) and not versions
        if not versions and "[人物:" in text and _LABEL_TAIL.search(text):  # `in`: no regex scan
            text = _LABEL_TAIL.sub("", text)
            stripped += 1
        if not text.strip():
            empty += 1
            continue
        seen.add(mid)
        meta = {k: v for k, v in m.items() if k not in _MEMORY_OWN_KEYS}
        out.append(
            Memory(id=mid, text=text, versions=versions, timestamp=_memory_time(m), metadata=meta)
        )
    if dup:
        notes.append(f"{dup} memories with a repeated memory_id dropped (first kept)")
    if empty:
        notes.append(f"{empty} memories with no text dropped")
    if stripped:
        notes.append(f"{stripped} appended label strings ('[人物:...]') removed from memory text")
    if used_text_field:
        notes.append("memory text taken from 'text' (the fragment without appended labels)")
    return out


def _queries(raw: list[Any], known: set[str], path: Path, notes: list[str]) -> list[Query]:
    out: list[Query] = []
    ids: set[str] = set()
    unlabelled = dangling_ids = dangling_queries = renamed = 0
    for i, q in enumerate(raw):
        if not isinstance(q, dict):
            raise DatasetError(f"{path}: queries.{i}: expected an object")
        text = q.get("query_text") or q.get("query")
        if not text:
            raise DatasetError(f"{path}: queries.{i}: no 'query_text' or 'query'")
        listed = _typed(q, "expected_memory_ids", list, path, f"queries.{i}") or []
        expected = [str(x) for x in listed]
        negative = bool(q.get("is_negative")) or (q.get("query_type") == "负样本")
        if not expected and not negative:
            unlabelled += 1
            continue
        kept = [x for x in dict.fromkeys(expected) if x in known]
        if len(kept) < len(set(expected)):
            dangling_ids += len(set(expected)) - len(kept)
            if not kept:
                dangling_queries += 1
                continue
        qid = str(q.get("query_id") or f"Q{i + 1:04d}")
        if qid in ids:
            renamed += 1
            qid = f"{qid}-{i + 1}"
        ids.add(qid)
        raw_type = str(q.get("query_type") or "unspecified")
        qtype = "negative" if negative else _TYPE_MAP.get(raw_type.lower(), _chain_type(raw_type))
        answer = q.get("expected_answer_text") or q.get("expected_answer")
        meta = {k: v for k, v in q.items() if k not in _QUERY_OWN_KEYS}
        meta["source_type"] = raw_type
        if isinstance(answer, dict):
            meta["expected_answer"] = answer
            answer = None
        diff = q.get("difficulty")
        out.append(
            Query(
                id=qid,
                text=str(text),
                type=qtype,
                relevant_ids=kept,
                answer=str(answer) if answer else None,
                difficulty=_DIFFICULTY.get(str(diff), str(diff).lower()) if diff else None,
                metadata=meta,
            )
        )
    if unlabelled:
        notes.append(f"{unlabelled} queries without expected ids (and not negative) excluded")
    if dangling_ids:
        notes.append(
            f"{dangling_ids} expected ids point to no memory and were removed; "
            f"{dangling_queries} queries left with none were excluded"
        )
    if renamed:
        notes.append(f"{renamed} repeated query ids made unique with their position")
    return out


def _typed(obj: dict[str, Any], key: str, kind: type, path: Path, where: str = "") -> Any:
    """``obj[key]`` when it is missing, null or a ``kind``; anything else is refused."""
    value = obj.get(key)
    if value is not None and not isinstance(value, kind):
        at = f"{where}.{key}" if where else key
        name = "a list" if kind is list else "an object"
        raise DatasetError(f"{path}: {at}: expected {name}, got {type(value).__name__}")
    return value


def _chain_type(raw: str) -> str:
    if raw.endswith("推理链") or raw.endswith("推理"):
        return "chain"
    return raw.lower().replace(" ", "-")


def _memory_time(m: dict[str, Any]) -> datetime | None:
    t = m.get("time")
    if isinstance(t, dict):
        return _parse_time(t.get("absolute")) or _from_unix(t.get("timestamp"))
    return _parse_time(t)


def _from_unix(v: Any) -> datetime | None:
    try:
        # UTC, so the same file reads the same on every machine.
        return datetime.fromtimestamp(int(v), tz=UTC).replace(tzinfo=None)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def _parse_time(v: Any) -> datetime | None:
    if not isinstance(v, str):
        return None
    m = _ISO_SHAPE.fullmatch(v.strip())
    if m is not None:  # the generator's "YYYY-MM-DD HH:MM:SS": what strptime would give
        try:
            return datetime(*(int(g) for g in m.groups() if g is not None))
        except ValueError:
            return None
    return _parse_other(v.strip())


# Zero-padded "%Y-%m-%d %H:%M:%S" or "%Y-%m-%d", the first two of _TIME_FORMATS.
_ISO_SHAPE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})(?: ([0-9]{2}):([0-9]{2}):([0-9]{2}))?")


@lru_cache(maxsize=4096)
def _parse_other(v: str) -> datetime | None:
    # Novel sets repeat a few hundred labels ("1991-1998", "Winter 1993") that match no
    # format: each is tried once, not once per memory.
    for fmt in _TIME_FORMATS:
        try:
            return datetime.strptime(v, fmt)
        except ValueError:
            continue
    return None


def _language(v: Any) -> str | None:
    if not isinstance(v, str) or not v:
        return None
    if v.lower().startswith("zh") or "汉语" in v or "中文" in v:
        return "zh"
    if v.lower().startswith("en"):
        return "en"
    return None
