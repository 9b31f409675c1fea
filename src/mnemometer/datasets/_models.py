"""Dataset schema: memories, queries and dataset info (the native on-disk format)."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from mnemometer.config import StrictModel

SCHEMA_VERSION = 1


class MemoryVersion(StrictModel):
    """One stylistic rendering of a memory; all versions share the memory's id."""

    style: str
    """Style label, e.g. ``terse``, ``detailed``, ``colloquial``."""
    text: str
    """The rendered text."""


class Memory(StrictModel):
    """One stored unit."""

    id: str = Field(min_length=1)
    """Stable memory id; stores must return it in hits."""
    text: str
    """Canonical text (the first version when versions exist)."""
    versions: list[MemoryVersion] = Field(default_factory=list)
    """Stylistic versions of the same fact; empty means ``text`` only."""
    timestamp: datetime | None = None
    """When the remembered event happened, if known."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Labels for scoring (person, cluster, chain, ...). Never shown to a store."""

    def texts(self) -> list[tuple[str, str]]:
        """Return ``(style, text)`` pairs: every version, or the canonical text alone."""
        if self.versions:
            return [(v.style, v.text) for v in self.versions]
        return [("text", self.text)]


class Query(StrictModel):
    """A query with its complete ground truth."""

    id: str = Field(min_length=1)
    """Stable query id."""
    text: str
    """The query as a user would ask it."""
    type: str = "unspecified"
    """Query type (person, location, event, time, composite, negative, chain, cluster, ...)."""
    relevant_ids: list[str] = Field(default_factory=list)
    """Every memory id relevant to this query; empty for a negative query."""
    answer: str | None = None
    """Optional expected answer text."""
    difficulty: str | None = None
    """Optional difficulty label (easy, medium, hard)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Extra labels (source type, constraints, chain order, ...)."""

    @property
    def is_negative(self) -> bool:
        """True when nothing in the dataset is relevant."""
        return not self.relevant_ids


class DatasetInfo(StrictModel):
    """Name, language, reference time and provenance of a dataset."""

    schema_version: int = SCHEMA_VERSION
    """Native dataset schema version."""
    name: str
    """Dataset name."""
    version: str = "1"
    """Dataset version; bump when content changes."""
    language: str = "en"
    """Main language code (``en``, ``zh``)."""
    reference_time: datetime | None = None
    """The dataset's "now": relative times in queries refer to it."""
    source: str | None = None
    """Where the data came from (a file, a generator with its arguments, a corpus)."""
    licence: str | None = None
    """Licence of the content."""
    content_hash: str | None = None
    """SHA-256 of the canonical memories and queries; computed on load."""
    notes: list[str] = Field(default_factory=list)
    """What a reader changed on the way in (dropped queries, dangling ids, ...)."""


class Dataset(StrictModel):
    """Memories plus queries with ground truth."""

    info: DatasetInfo
    """Name, language, reference time, provenance."""
    memories: list[Memory] = Field(default_factory=list)
    """The memories to store."""
    queries: list[Query] = Field(default_factory=list)
    """The queries to ask, with complete relevant sets."""

    def compute_hash(self) -> str:
        """Return the SHA-256 of the canonical JSON of memories and queries."""
        h = hashlib.sha256()
        for m in self.memories:
            h.update(_canonical(m).encode())
            h.update(b"\n")
        h.update(b"--queries--\n")
        for q in self.queries:
            h.update(_canonical(q).encode())
            h.update(b"\n")
        return h.hexdigest()

    def with_hash(self) -> Dataset:
        """Return this dataset with ``info.content_hash`` filled in."""
        self.info.content_hash = self.compute_hash()
        return self


def _canonical(model: BaseModel) -> str:
    return json.dumps(model.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
