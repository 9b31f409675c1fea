"""Dataset schema: memories, conversations, queries and dataset info (the native format).

A dataset holds memories (standalone stored units), conversations (speakers talking in dated
sessions of turns, as in LoCoMo and LongMemEval) or both, plus queries with ground truth.
A query about a conversation names it (``conversation_id``) and its ``relevant_ids`` are
turn ids of that conversation (the benchmark's evidence); any other query's ``relevant_ids``
are memory ids.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, PrivateAttr

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


class Turn(StrictModel):
    """One utterance in a session."""

    id: str = Field(min_length=1)
    """Turn id, unique in the whole dataset (it becomes a memory id); evidence names it."""
    speaker: str
    """Who speaks (a name, or a role such as ``user`` / ``assistant``)."""
    text: str
    """What was said."""
    caption: str | None = None
    """Description of an image shared with the turn (LoCoMo's BLIP caption), if any."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Other source fields (image URLs, the image search query, ...). Never shown to a store."""

    def memory_text(self) -> str:
        """The turn as one memory: ``Speaker: text``, plus ``[shares caption]`` for an image.

        The image convention is LoCoMo's own (its evaluation code renders a shared image
        as ``[shares <caption>]``).
        """
        text = f"{self.speaker}: {self.text}"
        return f"{text} [shares {self.caption}]" if self.caption else text


class Session(StrictModel):
    """One sitting of a conversation: turns in the order they were said."""

    id: str = Field(min_length=1)
    """Session id, unique within its conversation."""
    date: datetime | None = None
    """When the session took place, if known (every turn in it gets this timestamp)."""
    turns: list[Turn] = Field(default_factory=list)
    """The turns, in order; the order is part of the content."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Other source fields (a date string that could not be parsed, ...)."""


class Conversation(StrictModel):
    """Speakers talking over dated sessions; questions about it name its id."""

    id: str = Field(min_length=1)
    """Conversation id, unique in the dataset."""
    speakers: list[str] = Field(default_factory=list)
    """Everyone who speaks; when given, every turn's speaker must be one of them."""
    sessions: list[Session] = Field(default_factory=list)
    """The sessions, in the order a system is given them."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Other source fields. Never shown to a store."""

    def turns(self) -> list[tuple[Session, Turn]]:
        """Every turn with its session, in order."""
        return [(s, t) for s in self.sessions for t in s.turns]

    def memories(self) -> list[Memory]:
        """One memory per turn: id = turn id, text = ``Speaker: text``, time = session date.

        Each memory's metadata records ``conversation`` and ``session`` so a runner can
        give every conversation its own store.
        """
        return [
            Memory(
                id=t.id,
                text=t.memory_text(),
                timestamp=s.date,
                metadata={"conversation": self.id, "session": s.id},
            )
            for s, t in self.turns()
        ]


class Query(StrictModel):
    """A query with its complete ground truth."""

    id: str = Field(min_length=1)
    """Stable query id."""
    text: str
    """The query as a user would ask it."""
    type: str = "unspecified"
    """Query type (person, location, event, time, composite, negative, chain, cluster, ...).

    For a benchmark question it is the benchmark's category as a word (LoCoMo ``multi-hop``,
    ``temporal``, ``open-domain``, ``single-hop``, ``adversarial``; LongMemEval's
    ``question_type``); the source's own code stays in ``metadata``."""
    conversation_id: str | None = None
    """The conversation this question is about; None for a query over ``memories``."""
    relevant_ids: list[str] = Field(default_factory=list)
    """Every memory id relevant to this query; empty for a negative query.

    For a question about a conversation: the ids of the turns that hold the answer (the
    benchmark's evidence)."""
    answer: str | None = None
    """Optional expected answer text."""
    adversarial_answer: str | None = None
    """A tempting wrong answer the question is built to elicit (LoCoMo category 5)."""
    asked_at: datetime | None = None
    """When the question is asked (its "now"); None means the dataset's reference time."""
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
    """SHA-256 of the canonical memories, queries and conversations; computed on first read."""
    notes: list[str] = Field(default_factory=list)
    """What a reader changed on the way in (dropped queries, dangling ids, ...)."""

    _hash_of: Callable[[], str] | None = PrivateAttr(default=None)
    """Computes ``content_hash`` on its first read (see :meth:`Dataset.with_lazy_hash`)."""

    def __getattribute__(self, name: str) -> Any:
        # Hashing re-serialises the whole dataset (about 2x the cost of parsing it), so a
        # loaded dataset defers it until something (a run header, resume) reads the hash.
        if name == "content_hash":
            private = object.__getattribute__(self, "__pydantic_private__")
            fill = private.get("_hash_of") if private else None
            if fill is not None:
                private["_hash_of"] = None
                object.__getattribute__(self, "__dict__")["content_hash"] = fill()
        return super().__getattribute__(name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "content_hash":
            self._hash_of = None  # an explicit value (or None: recompute) wins
        super().__setattr__(name, value)

    def resolve_hash(self) -> DatasetInfo:
        """Compute a deferred content hash now, so serialising or copying this info keeps it."""
        self.__getattribute__("content_hash")
        return self

    def __copy__(self) -> DatasetInfo:
        return super(DatasetInfo, self.resolve_hash()).__copy__()

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> DatasetInfo:
        return super(DatasetInfo, self.resolve_hash()).__deepcopy__(memo)

    def __getstate__(self) -> dict[Any, Any]:
        return super(DatasetInfo, self.resolve_hash()).__getstate__()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DatasetInfo):
            other.resolve_hash()
        return super(DatasetInfo, self.resolve_hash()).__eq__(other)


class Dataset(StrictModel):
    """Memories and/or conversations, plus queries with ground truth."""

    info: DatasetInfo
    """Name, language, reference time, provenance."""
    memories: list[Memory] = Field(default_factory=list)
    """The memories to store."""
    conversations: list[Conversation] = Field(default_factory=list)
    """Conversations (sessions of turns) that questions are asked about."""
    queries: list[Query] = Field(default_factory=list)
    """The queries to ask, with complete relevant sets."""

    def compute_hash(self) -> str:
        """Return the SHA-256 of the canonical JSON of memories, queries and conversations.

        Order is part of the content where it is meaningful: memories (the order a store is
        given them), sessions within a conversation and turns within a session, and
        questions within one conversation. It is not where it is not: conversations are
        hashed sorted by id and queries grouped (stably) by conversation, because each
        conversation is an independent unit. A dataset without conversations hashes exactly
        as it did before conversations existed.
        """
        h = hashlib.sha256()
        for m in self.memories:
            h.update(_canonical(m).encode())
            h.update(b"\n")
        h.update(b"--queries--\n")
        for q in sorted(
            self.queries, key=lambda q: (q.conversation_id is not None, q.conversation_id or "")
        ):
            h.update(_canonical(q, _QUERY_ADDED).encode())
            h.update(b"\n")
        if self.conversations:
            h.update(b"--conversations--\n")
            for c in sorted(self.conversations, key=lambda c: c.id):
                h.update(_canonical(c).encode())
                h.update(b"\n")
        return h.hexdigest()

    def conversation(self, conversation_id: str) -> Conversation:
        """The conversation with this id.

        Raises:
            KeyError: no such conversation.
        """
        for c in self.conversations:
            if c.id == conversation_id:
                return c
        raise KeyError(conversation_id)

    def with_turn_memories(self, conversation_id: str | None = None) -> Dataset:
        """This dataset with one memory per conversation turn, for retrieval suites.

        Each turn becomes a memory (id = turn id, text = ``Speaker: text`` plus any image
        caption, timestamp = session date); question evidence already names turn ids, so
        ``relevant_ids`` score as they are. Memories and queries record ``conversation`` in
        their metadata so a runner can give each conversation its own store.

        Args:
            conversation_id: keep only this conversation, its turns and its questions.

        Returns:
            A new dataset (existing memories first, then the turns) whose ``info`` is the
            source's, content hash included (computed if missing): the memories are derived
            from the source, so runs over the view record the source's identity.

        Raises:
            KeyError: no such conversation.
        """
        convs = (
            [self.conversation(conversation_id)]
            if conversation_id is not None
            else self.conversations
        )
        keep = {c.id for c in convs}
        memories = [] if conversation_id is not None else [m.model_copy() for m in self.memories]
        for c in convs:
            memories.extend(c.memories())
        queries = []
        for q in self.queries:
            if conversation_id is not None and q.conversation_id not in keep:
                continue
            q = q.model_copy(deep=True)
            if q.conversation_id is not None:
                q.metadata["conversation"] = q.conversation_id
            queries.append(q)
        info = self.info.model_copy(deep=True)
        info.content_hash = self.info.content_hash or self.compute_hash()
        return Dataset(
            info=info,
            memories=memories,
            conversations=[c.model_copy(deep=True) for c in convs],
            queries=queries,
        )

    def with_hash(self) -> Dataset:
        """Return this dataset with ``info.content_hash`` filled in."""
        self.info.content_hash = self.compute_hash()
        return self

    def with_lazy_hash(self) -> Dataset:
        """Return this dataset with ``info.content_hash`` computed when first read.

        The value is exactly :meth:`compute_hash`'s, of the content as it is at that first
        read; any stored value is replaced. Loading uses this: parsing a file costs about
        half of hashing it, and only a run (or resume) needs the hash.
        """
        self.info.content_hash = None
        self.info._hash_of = self.compute_hash
        return self


_QUERY_ADDED = frozenset({"conversation_id", "adversarial_answer", "asked_at"})
"""Query fields added after the first release: left out of the hash while unset, so the
hashes of existing datasets (and the run logs that record them) stay valid."""


_CANONICAL_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode
"""``json.dumps(x, sort_keys=True, ensure_ascii=False)`` without building an encoder per call."""


def _canonical(model: BaseModel, omit_unset: frozenset[str] = frozenset()) -> str:
    data = model.model_dump(mode="json")
    for key in omit_unset:
        if data.get(key) is None:
            data.pop(key, None)
    return _CANONICAL_JSON(data)
