"""The Store protocol (three methods) and optional capabilities detected at run time."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result."""

    memory_id: str
    """The id the store was given for this memory."""
    score: float = 0.0
    """Store-specific relevance score; higher is better."""
    text: str = ""
    """The stored text, when the store returns it."""

    @classmethod
    def coerce(cls, obj: Any) -> Hit:
        """Accept a :class:`Hit` or a MemTest-style dict (``memory_id``, ``score``, ``content``)."""
        if isinstance(obj, Hit):
            return obj
        if type(obj) is dict or isinstance(obj, Mapping):  # a dict skips the ABC's check
            mid = obj["memory_id"] if "memory_id" in obj else obj.get("id")
            if mid is None:
                raise TypeError(f"search result has no 'memory_id': {dict(obj)!r:.120}")
            text = (obj["text"] if "text" in obj else obj.get("content", "")) or ""
            score = float(obj.get("score", 0.0) or 0.0)
            if not math.isfinite(score):
                raise ValueError(f"search result score is not a finite number: {score!r}")
            return cls(str(mid), score, str(text))
        raise TypeError(f"search result must be a Hit or a dict, got {type(obj).__name__}")


class HitList(list[Hit]):
    """Hits as a suite scores them, with how many the store actually returned."""

    returned: int = 0
    """How many results the call returned (more than asked is a contract breach)."""


def coerce_hits(raw: Any, limit: int) -> HitList:
    """The first ``limit`` results of a ``search`` call as hits, checked.

    Raises:
        TypeError: the call returned something other than a list of hits or dicts.
        ValueError: a score that is not a finite number.
    """
    if raw is None:
        raise TypeError("search returned None; a store returns a list of hits ([] for none)")
    if isinstance(raw, str | bytes | Mapping) or not hasattr(raw, "__iter__"):
        raise TypeError(f"search returned a {type(raw).__name__}, not a list of hits")
    items = list(raw)
    out = HitList(map(Hit.coerce, items[:limit]))
    out.returned = len(items)
    return out


@runtime_checkable
class Store(Protocol):
    """A memory system under test at the retrieval level.

    ``metadata`` carries ``memory_id`` (to be returned in hits) and, when known,
    ``timestamp`` (ISO 8601). It never carries answer-key labels unless a suite opts in
    and the run log records that it did.
    """

    def reset(self) -> None:
        """Forget everything."""
        ...

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        """Remember ``text`` under ``metadata['memory_id']``."""
        ...

    def search(self, query: str, top_k: int) -> Sequence[Hit | Mapping[str, Any]]:
        """Return at most ``top_k`` hits, best first."""
        ...


@runtime_checkable
class BatchStore(Protocol):
    """Capability: store many memories in one call (faster indexing)."""

    def store_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Store every ``(text, metadata)`` pair."""
        ...


@runtime_checkable
class Flushable(Protocol):
    """Capability: finish indexing; the runner calls it after storing and before searching."""

    def flush(self) -> None:
        """Block until everything stored is searchable."""
        ...


@runtime_checkable
class DeletableStore(Protocol):
    """Capability: delete a memory by id."""

    def delete(self, memory_id: str) -> None:
        """Forget one memory."""
        ...


@runtime_checkable
class ListableStore(Protocol):
    """Capability: list what the store keeps (used to verify storage)."""

    def list_ids(self) -> Sequence[str]:
        """Return the ids of every memory the store keeps."""
        ...


@runtime_checkable
class ClockAware(Protocol):
    """Capability: a simulated clock, for time-aware and forgetting stores."""

    def set_time(self, now: datetime) -> None:
        """Set the store's notion of "now"."""
        ...


@runtime_checkable
class Persistent(Protocol):
    """Capability: write the built index to a directory and read it back.

    A suite saves the index once indexing finishes and, on a resumed run, loads it instead
    of storing every memory again. ``load`` must leave the store exactly as it was after
    the indexing that ``save`` captured (same hits, scores and tie order), or return
    ``False`` (the suite then resets the store and indexes again; ``mnemometer
    check-store`` checks the round trip). Files are plain data (JSON, ``.npy``); never
    pickles.
    """

    def save(self, path: Path) -> None:
        """Write the index to the directory ``path`` (created)."""
        ...

    def load(self, path: Path) -> bool:
        """Replace the store's contents with the index at ``path``; ``False`` if unusable."""
        ...


@dataclass(frozen=True, slots=True)
class IngestCost:
    """What ingesting one memory (or one batch of memories) cost a store."""

    memory_ids: tuple[str, ...]
    """The memories this ingest call took (one, or a batch)."""
    seconds: float = 0.0
    """Wall time of the call."""
    llm_calls: int = 0
    """Chat-completion requests the system sent (retries included)."""
    prompt_tokens: int = 0
    """Prompt tokens the endpoint reported."""
    completion_tokens: int = 0
    """Completion tokens the endpoint reported."""
    llm_seconds: float = 0.0
    """Time spent waiting for the LLM."""
    extracted: int | None = None
    """Items the system derived (facts, memories, graph nodes); ``None`` when unknown."""
    error: str | None = None
    """Why the ingest failed (the memories are then not in the store)."""


@runtime_checkable
class IngestCosted(Protocol):
    """Capability: what each ingest cost (LLM calls, tokens, seconds, failures)."""

    def ingest_costs(self) -> Sequence[IngestCost]:
        """One entry per ingest call since the last ``reset``, in order."""
        ...


@runtime_checkable
class RetryCounted(Protocol):
    """Capability: counts the store calls it sent again after a transient failure."""

    def write_retries(self) -> int:
        """Store calls retried since the last ``reset`` (a retried write may be a duplicate)."""
        ...


def uses_structured_query(store: object) -> bool:
    """Whether ``store`` declares ``uses_structured_query = True``.

    Such a store's ``search`` takes a keyword argument ``structured``: the query's
    structured parse (``Query.metadata["structured"]``, field constraints such as
    ``{"person": ..., "location": ...}``) when the dataset has one, as ``build`` writes it.
    """
    return getattr(store, "uses_structured_query", False) is True


class Abstaining(Protocol):
    """Capability: declares that an empty result means "nothing relevant"."""

    abstains: bool


def capabilities(store: object) -> list[str]:
    """Names of the optional capabilities ``store`` implements."""
    checks = {
        "store_many": BatchStore,
        "flush": Flushable,
        "delete": DeletableStore,
        "list_ids": ListableStore,
        "set_time": ClockAware,
        "ingest_costs": IngestCosted,
        "write_retries": RetryCounted,
        "persistent": Persistent,
    }
    caps = [name for name, proto in checks.items() if isinstance(store, proto)]
    if getattr(store, "abstains", False):
        caps.append("abstains")
    if uses_structured_query(store):
        caps.append("structured_query")
    return caps
