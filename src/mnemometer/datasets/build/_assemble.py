"""From extracted facts to memories: labels, three versions, timestamps, provenance, chains."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any

from mnemometer.datasets._models import Memory, MemoryVersion
from mnemometer.datasets.build._schema import ChunkRecord, Fact

_SPLIT_PERSONS = re.compile(r"\s*(?:,|，|、|;|；|\band\b|&)\s*")
_DATE_FORMATS = (
    "%Y-%m-%d",
    "%Y/%m/%d",
    "%d %B %Y",
    "%B %d, %Y",
    "%B %d %Y",
    "%d %b %Y",
    "%b %d, %Y",
    "%Y年%m月%d日",
    "%B %Y",
    "%Y年%m月",
)
_YEAR = re.compile(r"^(?:in\s+)?(\d{4})(?:年)?$", re.IGNORECASE)
MAX_PERSON_CHAIN = 6
"""Facts per person-timeline chain (MemTest's limit)."""


@dataclass(frozen=True, slots=True)
class Row:
    """A fact with where it came from, before it becomes a memory."""

    fact: Fact
    file: str
    chunk: int
    category: str


def rows_from(records: Iterable[ChunkRecord]) -> list[Row]:
    """Facts in corpus order (file, then chunk, then the order the model gave)."""
    ordered = sorted(records, key=lambda r: (r.file, r.index))
    return [
        Row(f, r.file, r.index, r.category) for r in ordered if r.status == "ok" for f in r.facts
    ]


def apply_labels(rows: list[Row], labels: dict[str, str]) -> tuple[list[Row], dict[str, int]]:
    """Move era-like locations into ``era`` and drop concept "locations"."""
    moved = {"era": 0, "concept": 0}
    out: list[Row] = []
    for row in rows:
        f = row.fact
        kind = labels.get(f.location)
        if kind == "era":
            f = f.model_copy(update={"era": f.era or f.location, "location": ""})
            moved["era"] += 1
        elif kind == "concept":
            f = f.model_copy(update={"location": ""})
            moved["concept"] += 1
        out.append(Row(f, row.file, row.chunk, row.category))
    return out, moved


def persons_of(fact: Fact) -> list[str]:
    """The persons a fact names, subject first (``person`` may list several)."""
    return [p for p in _SPLIT_PERSONS.split(fact.person) if p]


def parse_time(value: str) -> tuple[datetime | None, str | None]:
    """A timestamp and its precision (``day``, ``month``, ``year``) from a time string."""
    v = value.strip().rstrip(".")
    if not v:
        return None, None
    m = _YEAR.match(v)
    if m:
        return datetime(int(m.group(1)), 1, 1), "year"
    for fmt in _DATE_FORMATS:
        try:
            ts = datetime.strptime(v, fmt)
        except ValueError:
            continue
        return ts, "month" if "%d" not in fmt else "day"
    return None, None


def build_memories(
    rows: list[Row], lang: str, start: int = 1, known_texts: set[str] | None = None
) -> tuple[list[Memory], int]:
    """Memories (ids ``M000001``... from ``start``) and the count of repeated facts skipped."""
    seen = set(known_texts or ())
    memories: list[Memory] = []
    repeated = 0
    for row in rows:
        f = row.fact
        key = " ".join(f.content.lower().split())
        if key in seen:
            repeated += 1
            continue
        seen.add(key)
        persons = persons_of(f)
        ts, precision = parse_time(f.time)
        meta: dict[str, Any] = {
            "person": persons[0] if persons else "",
            "persons": persons,
            "location": f.location,
            "time": f.time,
            "era": f.era,
            "event_type": f.event_type.lower(),
            "category": row.category,
            "source_file": row.file,
            "chunk": row.chunk,
        }
        if precision:
            meta["time_precision"] = precision
        if f.chain:
            meta["chain_label"] = f.chain
        mid = f"M{start + len(memories):06d}"
        memories.append(
            Memory(
                id=mid,
                text=f.content,
                versions=_versions(f, row, persons, lang),
                timestamp=ts,
                metadata=meta,
            )
        )
    return memories, repeated


def _versions(f: Fact, row: Row, persons: list[str], lang: str) -> list[MemoryVersion]:
    title = PurePosixPath(row.file).stem
    person = persons[0] if persons else ""
    if lang == "zh":
        when = f"{f.time}（{f.era}）" if f.time and f.era else f.time or f.era
        where = f"在{f.location}" if f.location else ""
        head = "".join(x for x in (when + "，" if when else "", person, where) if x)
        detailed = f"{head}：{f.content}" if head else f.content
        reported = f"据《{title}》记载，{f.content}"
    else:
        when = f"{f.time} ({f.era})" if f.time and f.era else f.time or f.era
        parts = [p for p in (when, person, f"at {f.location}" if f.location else "") if p]
        detailed = f"{', '.join(parts)}: {f.content}" if parts else f.content
        reported = f"According to {title}: {f.content}"
    return [
        MemoryVersion(style="terse", text=f.content),
        MemoryVersion(style="detailed", text=detailed),
        MemoryVersion(style="reported", text=reported),
    ]


def link_chains(memories: list[Memory], first_chain: int = 1) -> int:
    """Link chains in place; return how many were made.

    A chain is (1) the facts of one file sharing a ``chain`` label from the model, in text
    order (relation ``sequence``), then (2) the remaining facts of one person in one file,
    three or more, in runs of up to six (relation ``person-timeline``).
    """
    by_label: dict[tuple[str, str], list[Memory]] = defaultdict(list)
    for m in memories:
        label = str(m.metadata.get("chain_label") or "").strip().lower()
        if label and "chain" not in m.metadata:
            by_label[(m.metadata["source_file"], label)].append(m)
    n = first_chain
    for members in by_label.values():
        if len(members) >= 2:
            _link(members, f"C{n:04d}", "sequence")
            n += 1
    by_person: dict[tuple[str, str], list[Memory]] = defaultdict(list)
    for m in memories:
        if "chain" not in m.metadata and m.metadata.get("person"):
            by_person[(m.metadata["source_file"], m.metadata["person"].lower())].append(m)
    for members in by_person.values():
        for i in range(0, len(members), MAX_PERSON_CHAIN):
            run = members[i : i + MAX_PERSON_CHAIN]
            if len(run) >= 3:
                _link(run, f"C{n:04d}", "person-timeline")
                n += 1
    return n - first_chain


def _link(members: list[Memory], chain_id: str, relation: str) -> None:
    for pos, m in enumerate(members):
        m.metadata.update(
            {
                "chain": chain_id,
                "chain_relation": relation,
                "chain_position": pos + 1,
                "chain_length": len(members),
                "chain_prev": members[pos - 1].id if pos else "",
                "chain_next": members[pos + 1].id if pos + 1 < len(members) else "",
            }
        )
