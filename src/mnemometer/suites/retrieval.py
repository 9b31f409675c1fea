"""``retrieval``: store every memory, ask every query, score the ranking."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, ClassVar

from mnemometer import outage
from mnemometer._gc import paused
from mnemometer.datasets._models import Dataset, Query
from mnemometer.errors import MnemometerError
from mnemometer.log._schema import HeadlineSpec, ItemResult, ScoringRecord
from mnemometer.scoring.retrieval import (
    Ranking,
    cutoff_tie,
    dedupe,
    duplicate_count,
    failed_metrics,
    hit_success,
    rank_values,
)
from mnemometer.scoring.summaries import INGEST_FILE, RetrievalSummary
from mnemometer.stores._protocol import (
    BatchStore,
    ClockAware,
    Flushable,
    HitList,
    coerce_hits,
    uses_structured_query,
)
from mnemometer.suites._base import TOP_K, BaseSuite, Flag, Item, RunContext, failure
from mnemometer.suites._index_file import index_key, load_index, save_index
from mnemometer.suites._ingest import IngestTally, fill_each
from mnemometer.suites._store_ids import StoreIds, run_ids
from mnemometer.systems import close

DEFAULT_KS = (1, 5, 10, 20)


def _set_reference_time(store: Any, dataset: Dataset) -> None:
    """Tell a time-aware store the dataset's "now" (its reference time), when it has one."""
    if isinstance(store, ClockAware) and dataset.info.reference_time is not None:
        store.set_time(dataset.info.reference_time)


def store_dataset(
    store: Any,
    dataset: Dataset,
    versions: str = "all",
    progress: Any = None,
    failures: dict[str, str] | None = None,
    *,
    ids: StoreIds,
) -> dict[str, float]:
    """Reset ``store`` and give it every memory; return ``{"index": seconds}``.

    The store sees text, ``memory_id`` and ``timestamp`` only: never the answer-key labels,
    and never the dataset's ids (``memory_id`` is the opaque id ``ids`` gives the memory;
    see :mod:`mnemometer.suites._store_ids`). Time-aware stores first learn the dataset's
    reference time. With ``failures``, a store call that raises is recorded there (the
    dataset's memory id -> error) and storing goes on, one call per text; without, it
    raises. A store that takes batches (``store_many``) reports its own failures
    (``ingest_costs``) or raises. A failure after the run found an endpoint down is
    raised: the run stops (:mod:`mnemometer.outage`).
    """
    t0 = time.perf_counter()
    store.reset()
    _set_reference_time(store, dataset)
    batch: list[tuple[str, dict[str, Any]]] = []
    with paused():  # a pair and a dict per text, none in a cycle
        for m in dataset.memories:
            meta: dict[str, Any] = {"memory_id": ids.of(m.id)}
            if m.timestamp is not None:
                meta["timestamp"] = m.timestamp.isoformat()
            texts = m.texts() if versions == "all" else m.texts()[:1]
            batch.extend((text, dict(meta)) for _, text in texts)
    total = len(batch)
    if isinstance(store, BatchStore):
        store.store_many(batch)
    else:
        step = max(1, total // 100)
        for n, (text, meta) in enumerate(batch, 1):
            try:
                store.store(text, meta)
            except Exception as e:
                watch = outage.current()
                if failures is None or (watch is not None and watch.first is not None):
                    raise
                failures.setdefault(ids.dataset_id(meta["memory_id"]), f"{type(e).__name__}: {e}")
            if progress is not None and (n % step == 0 or n == total):
                progress("index", n, total)
    if progress is not None:
        progress("index", total, total)
    if isinstance(store, Flushable):
        store.flush()
    return {"index": time.perf_counter() - t0}


SAVE_INDEX_AFTER = 0.5
"""Seconds of indexing below which the index is not saved: a resume indexes again in less
time than saving would cost every run (5 ms of Harry Potter's 0.4 s, files written and
deleted)."""


def index_dataset(
    store: Any,
    dataset: Dataset,
    ctx: RunContext,
    versions: str = "all",
    failures: dict[str, str] | None = None,
    *,
    ids: StoreIds,
) -> dict[str, float]:
    """:func:`store_dataset`, saving the index of a ``Persistent`` store in the run directory.

    A resumed run loads that index instead when it was built from the same dataset, store
    and options (``{"index_load": seconds}``; see :mod:`mnemometer.suites._index_file`).
    An index built in under :data:`SAVE_INDEX_AFTER` seconds is not saved. ``failures`` is
    :func:`store_dataset`'s.
    """
    t0 = time.perf_counter()
    key = index_key(store, dataset, ctx.system, versions, ids.digest())
    given = {ids.of(m.id) for m in dataset.memories}
    if ctx.pending is not None and load_index(store, given, ctx.run_dir, key):
        _set_reference_time(store, dataset)
        return {"index_load": time.perf_counter() - t0}
    timings = store_dataset(store, dataset, versions, ctx.report, failures, ids=ids)
    if key is not None and timings["index"] >= SAVE_INDEX_AFTER:
        t1 = time.perf_counter()
        save_index(store, ctx.run_dir, key)
        timings["index_save"] = time.perf_counter() - t1
    return timings


def timed_search(
    store: Any,
    text: str,
    top_k: int,
    structured: dict[str, Any] | None = None,
    *,
    ids: StoreIds,
) -> tuple[HitList, float]:
    """Search and return the hits (checked, at most ``top_k``) and the call's milliseconds.

    A store that declares ``uses_structured_query`` gets the query's ``structured`` parse
    too, when there is one. A result that is not a list of hits raises (the item is
    recorded as an error); the returned list's ``returned`` says how many results the store
    gave. Hits carry the dataset's ids (``ids`` maps the store's back).
    """
    t0 = time.perf_counter()
    if structured and uses_structured_query(store):
        raw = store.search(text, top_k, structured=structured)
    else:
        raw = store.search(text, top_k)
    ms = (time.perf_counter() - t0) * 1000.0
    return ids.hits(coerce_hits(raw, top_k)), ms


class RetrievalSuite(BaseSuite):
    """Retrieval quality: precision, recall, hit, MRR and nDCG at k, by type and difficulty.

    Args:
        top_k: how many hits to ask for (default: the largest k).
        ks: cut-offs for the metrics.
        versions: ``all`` stores every stylistic version of a memory, ``first`` only one.
        relevance: ``ids`` (the default) counts a hit when its id is one of the query's
            relevant ids. ``entity`` is MemTest's published rule, opt-in: a hit counts when
            the query's ``target_entity`` (from its metadata) appears in the memory's text,
            and recall divides by min(memories naming the entity, k). Queries without a
            target entity keep the ids rule.
    """

    name: ClassVar[str] = "retrieval"
    version: ClassVar[str] = "1"
    flags: ClassVar[tuple[Flag, ...]] = (TOP_K,)
    success_definition: ClassVar[str] = (
        "a query succeeds when a relevant memory is in the top k (hit@top_k = 1); a "
        "negative query when the store abstained (returned nothing), for stores that "
        "declare abstains; errored and timed-out queries fail"
    )
    independent_items: ClassVar[bool] = True
    """Setup stores the dataset; each item only searches it."""

    def __init__(
        self,
        top_k: int | None = None,
        ks: Sequence[int] = DEFAULT_KS,
        versions: str = "all",
        relevance: str = "ids",
    ) -> None:
        ks = sorted({int(k) for k in ks})
        if not ks or ks[0] < 1:
            raise MnemometerError("ks must be positive integers")
        if top_k is not None:
            if int(top_k) < 1:
                raise MnemometerError(f"--top-k must be at least 1, got {top_k}")
            ks = sorted({k for k in ks if k <= int(top_k)} | {int(top_k)})
        if versions not in ("all", "first"):
            raise MnemometerError(f"versions must be 'all' or 'first', got {versions!r}")
        if relevance not in ("ids", "entity"):
            raise MnemometerError(f"relevance must be 'ids' or 'entity', got {relevance!r}")
        self.relevance = relevance
        self._entity: dict[str, tuple[str, list[str]]] = {}  # query id -> entity, memories
        self.ks = ks
        self.top_k = int(top_k) if top_k is not None else ks[-1]
        self.versions = versions
        self._abstains = False
        self._stores: dict[str, Any] = {}  # conversation id -> its own store
        self._known: set[str] = set()  # memory ids the store was given
        self._unstored: set[str] = set()  # memory ids whose store call failed
        self._ids = StoreIds({})  # the ids the stores see (drawn in setup)
        self._ranking = Ranking(self.ks, self.top_k)

    def options(self) -> dict[str, Any]:
        """Resolved options."""
        opts: dict[str, Any] = {"top_k": self.top_k, "ks": self.ks, "versions": self.versions}
        if self.relevance != "ids":  # recorded only when opted in: old runs stay comparable
            opts["relevance"] = self.relevance
        return opts

    def cannot_score(self, dataset: Dataset) -> str | None:
        """A dataset without queries: nothing would be searched, yet the run said exit 0."""
        if dataset.queries:
            return None
        return "the dataset has no queries to search (memories alone measure nothing)"

    def plan(self, dataset: Dataset) -> list[Item]:
        """One item per query."""
        if self.relevance == "entity":
            self._entity = entity_relevance(dataset)
        return [Item(q.id, i, q) for i, q in enumerate(dataset.queries)]

    def setup(self, system: Any, dataset: Dataset, ctx: RunContext) -> dict[str, float]:
        """Store every memory; each conversation's turns go to a store of its own.

        A conversation dataset (LoCoMo, LongMemEval) asks each question against its own
        conversation only: one isolated store per conversation, built from the run's system
        spec, so no conversation's turns can answer another's questions; ``--concurrency``
        conversations are filled at once (:func:`~mnemometer.suites._ingest.fill_each`).
        A memory whose store call fails is recorded and the run goes on; the queries that
        need it are asked all the same, and say so (``extra.unstored``, the ingest notes).
        """
        self._abstains = bool(getattr(system, "abstains", False))
        self._ranking = Ranking(self.ks, self.top_k, ["abstains"] if self._abstains else [])
        self._known = {m.id for m in dataset.memories}
        self._ids = ids = run_ids(dataset, ctx)
        tally = IngestTally(ids)
        # A conversation's turns go to its own store only: a turn-memory view
        # (``Dataset.with_turn_memories``) also lists them as memories, and storing them in
        # the run's store too stored every turn twice (and, across conversations, in one).
        conv_ids = {c.id for c in dataset.conversations}
        own = [m for m in dataset.memories if m.metadata.get("conversation") not in conv_ids]
        main = (
            dataset
            if len(own) == len(dataset.memories)
            else dataset.model_copy(update={"memories": own})
        )
        failed: dict[str, str] = {}
        timings = index_dataset(system, main, ctx, self.versions, failed, ids=ids)
        if "index" not in timings:  # a resume loaded the saved index, and its failures
            failed.update(IngestTally.recorded_failures(ctx.run_dir / INGEST_FILE))
        if main.memories or not dataset.conversations:
            tally.add(system, len(main.memories), timings.get("index", 0.0), failed)
        convs = dataset.conversations
        for conv in convs:  # made in this thread, in order: no two race to load a model
            self._stores[conv.id] = ctx.isolated(_namespace(conv.id), lang=dataset.info.language)

        def fill(conv: Any) -> tuple[Dataset, float, dict[str, str]]:
            # The turns as memories (what ``with_turn_memories`` lists), without the deep
            # copies of the conversation and its questions that view makes.
            turns = dataset.model_copy(update={"memories": conv.memories()})
            lost: dict[str, str] = {}
            store = self._stores[conv.id]
            secs = store_dataset(store, turns, self.versions, failures=lost, ids=ids)
            return turns, secs["index"], lost

        t_fill = time.perf_counter()
        ctx.report("ingest", 0, len(convs))
        filled = fill_each(
            fill, convs, ctx.concurrency, lambda n: ctx.report("ingest", n, len(convs))
        )
        for conv, (turns, secs, lost) in zip(convs, filled, strict=True):  # in file order
            self._known.update(m.id for m in turns.memories)
            tally.add(self._stores[conv.id], len(turns.memories), secs, lost)
            failed.update(lost)
        if convs:  # wall time: conversations filled at once overlap
            timings["index"] = timings.get("index", 0.0) + time.perf_counter() - t_fill
        self._unstored = set(tally.failed_ids())
        tally.affected = [
            q.id for q in dataset.queries if any(m in self._unstored for m in q.relevant_ids)
        ]
        if tally.metered:
            tally.write(ctx.run_dir / "ingest.jsonl")
        if "index" in timings or not (ctx.run_dir / INGEST_FILE).exists():
            tally.record(ctx.run_dir / INGEST_FILE)  # a resume that loaded the index keeps it
        return timings

    def teardown(self) -> None:
        """Close the per-conversation stores."""
        stores, self._stores = list(self._stores.values()), {}
        for store in stores:
            close(store)

    def run_item(self, system: Any, item: Item) -> dict[str, Any]:
        """Search once and score the ranking (plain data shaped like an ItemResult)."""
        q: Query = item.payload
        store = self._stores.get(q.conversation_id, system) if q.conversation_id else system
        # One hit past the cut-off shows whether the cut falls inside a tie; only the first
        # top_k hits are scored and recorded.
        structured = q.metadata.get("structured")
        more, ms = timed_search(
            store,
            q.text,
            self.top_k + 1,
            structured if isinstance(structured, dict) else None,
            ids=self._ids,
        )
        hits = more[: self.top_k]
        ranked = dedupe(h.memory_id for h in hits)
        extra: dict[str, Any] = {"duplicates_dropped": duplicate_count([h.memory_id for h in hits])}
        if self._unstored and (lost := [m for m in q.relevant_ids if m in self._unstored]):
            extra["unstored"] = lost  # charged here: a memory it needs failed to store
        if len(more) > self.top_k:
            extra["next_hit"] = {"id": more[-1].memory_id, "score": more[-1].score}
        # Contract breaches are recorded and noted, never silently scored away.
        if more.returned > self.top_k + 1:
            extra["returned"] = more.returned  # asked for top_k + 1
        if unknown := sum(h.memory_id not in self._known for h in hits):
            extra["unknown_ids"] = unknown
        record: dict[str, Any] = {
            "item_id": item.id,
            "index": item.index,
            "input": q.text,
            "groups": _groups(q),
            "expected": q.relevant_ids,
            "retrieved": [{"id": h.memory_id, "score": h.score} for h in hits],
            "latency_ms": ms,
            "extra": extra,
        }
        entity = self._entity.get(q.id)
        if entity is not None:  # MemTest's rule needs the memories' text: scored here
            extra.update(relevance="entity", entity=entity[0], entity_memories=len(entity[1]))
            metrics: list[dict[str, Any]] = entity_values(ranked, entity[1], self.ks)
            metrics.append(cutoff_tie([h.score for h in more], self.top_k))
        else:
            metrics = self._ranking.score(record)
        record["metrics"] = metrics
        # Plain data: the log writer serialises it directly and the reader validates it.
        record["success"] = hit_success(record, self.top_k)
        return record

    def failed(self, item: Item, error: str, status: str) -> ItemResult:
        """A failed search scores 0 on every metric."""
        q: Query = item.payload
        metrics = self._ranking.score({"status": status, "expected": q.relevant_ids})
        return failure(
            item,
            error,
            status,
            input=q.text,
            groups=_groups(q),
            expected=q.relevant_ids,
            metrics=metrics,
        )

    def scoring(self, llm: Any = None) -> ScoringRecord:
        """The ``ranking`` scorer, the ``retrieval`` summary, headline hit@top_k."""
        del llm  # nothing here asks a model
        scorers = [Ranking(self.ks, self.top_k).spec()] if self.relevance == "ids" else []
        return ScoringRecord(
            scorers=scorers,
            summary=RetrievalSummary(self.top_k).spec(),
            headline=headline(self.top_k),
        )


def headline(top_k: int) -> HeadlineSpec:
    """The retrieval headline: hit@top_k over queries with ground truth."""
    return HeadlineSpec(
        metric="hit",
        k=top_k,
        label=f"hit@{top_k}",
        scope="queries with ground truth; negative queries are scored apart",
        needs_expected=True,
        binary=True,
        cluster="conversation",
    )


def entity_relevance(dataset: Dataset) -> dict[str, tuple[str, list[str]]]:
    """Query id -> (target entity, ids of memories whose text names it), MemTest's rule.

    Only queries with a ``target_entity`` in their metadata get an entry; the match is a
    case-insensitive substring of any stored version of a memory.
    """
    texts = [(m.id, " ".join(t for _, t in m.texts()).casefold()) for m in dataset.memories]
    out: dict[str, tuple[str, list[str]]] = {}
    for q in dataset.queries:
        entity = str(q.metadata.get("target_entity") or "").strip()
        if entity:
            needle = entity.casefold()
            out[q.id] = (entity, [mid for mid, text in texts if needle in text])
    return out


def entity_values(ranked: Sequence[str], relevant: Sequence[str], ks: Sequence[int]) -> list:
    """Rank metrics under the entity rule: recall divides by min(relevant, k), as the seed did.

    With no memory naming the entity every metric is 0 (the seed's script skipped nothing).
    """
    if not relevant:
        return [m.model_dump(exclude_none=True) for m in failed_metrics(ks)]
    values = rank_values(ranked, relevant, ks)
    for v in values:
        if v["name"] == "recall":
            k = int(v["k"])
            v["value"] = float(v["value"]) * len(relevant) / min(len(relevant), k)
    return values


def _groups(q: Query) -> dict[str, str]:
    # Short scalar metadata (novel, book, source_type, ...) so a report can break results
    # down by any of it (``report --group-by``); long values such as answers stay out.
    g = {
        k: str(v)
        for k, v in q.metadata.items()
        if isinstance(v, str | int) and not isinstance(v, bool) and len(str(v)) <= 60
    }
    g["type"] = q.type
    if q.difficulty:
        g["difficulty"] = q.difficulty
    if q.conversation_id:  # a comparison clusters the questions of one conversation
        g["conversation"] = q.conversation_id
    return g


def _namespace(conversation_id: str) -> str:
    """A directory-safe, collision-free name for a conversation's store."""
    import hashlib
    import re

    digest = hashlib.sha1(conversation_id.encode()).hexdigest()[:8]
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", conversation_id)[:40] + "-" + digest
