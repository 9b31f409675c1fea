"""``memtest``: MemTest's six dimensions, each measured by what the store does.

Items, in plan order (ids are stable, so a run resumes):

* ``storage/<memory>/<style>``: can this stored version be read back? (a search on its
  content: the text without its names)
* ``query/<query>``: every dataset query (retrieval, reasoning, deep, organisation).
* ``cluster/<memory>``: a cluster member as the query; are its cluster-mates in the top k?
* ``deep/<memory>``: seed-data depth probes (MemTest labels, self-query).
* ``forget/<memory>``: found before and after the access-schedule replay.

The replay runs in :meth:`MemtestSuite.setup` (it must happen before the other probes and
in schedule order); its per-memory outcomes become the ``forget/`` items. The outcomes, and
the memories the store had lost by the horizon, are checkpointed in the run directory
(``memtest-replay.json``), and a persistent store's index is saved there too
(``store-index/``), so a resumed run neither replays nor re-indexes: it loads the index (or
stores the data once) and runs what is left. The other dimensions measure the store as
first given the data, which the fresh index of a resume is, less what it lost by the
horizon (see ``_replay.py``; for a store whose searches change it, results already
depended on search order).
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from mnemometer.datasets._models import Dataset, Query
from mnemometer.errors import MnemometerError
from mnemometer.log._schema import ItemResult, Metric, ScoringRecord
from mnemometer.scoring.memtest import (
    DEFAULT_WEIGHTS,
    DIMENSIONS,
    HEADLINE,
    MemtestSummary,
    chain_metrics,
)
from mnemometer.scoring.retrieval import dedupe, rank_values
from mnemometer.stores._protocol import ClockAware, HitList, ListableStore
from mnemometer.suites._base import TOP_K, BaseSuite, Flag, Item, RunContext, failure
from mnemometer.suites._store_ids import StoreIds, run_ids
from mnemometer.suites.memtest._labels import Plan, Probe, read_plan
from mnemometer.suites.memtest._replay import (
    Search,
    forgotten,
    read_replay,
    replay,
    unread,
    write_replay,
)
from mnemometer.suites.memtest._results import result, searched
from mnemometer.suites.memtest._storage import read_back_plan, storage_sample
from mnemometer.suites.retrieval import index_dataset, store_dataset, timed_search

DEFAULT_KS = (1, 5, 10, 20)
STORAGE_MODES = ("read-back", "none", "auto", "self-query", "list")
"""``read-back``; ``none`` (no read-back); the deprecated names of ``read-back`` (suite
version 1 scored ``list`` by ``list_ids``)."""


class MemtestSuite(BaseSuite):
    """The six MemTest dimensions: storage, retrieval, organisation, forgetting, reasoning, deep.

    Args:
        top_k: hits asked for per query (default 20).
        k: the cut-off for dimension scores (recall@k, cluster recall@k, retention; default 10).
        storage: ``read-back`` (the only procedure: each version is searched by its content,
            its text without names, and must come back in the top 5; ``auto``,
            ``self-query`` and ``list`` are deprecated names for it; a store's ``list_ids``
            is reported as its claim only), or ``none``: no read-back, the storage
            dimension not measured (MemTest's own runner reads nothing back).
        storage_limit: read back the versions of at most this many memories (a seeded
            random sample, reported with its interval; 0 = every memory).
        cluster_probes: at most this many clusters are probed (one member each).
        horizon_days: how far the simulated clock moves past the reference time before the
            forgetting retention probe (time-aware stores only).
        weights: weight of each dimension in the overall score (missing ones keep defaults).
    """

    name: ClassVar[str] = "memtest"
    version: ClassVar[str] = "3"
    flags: ClassVar[tuple[Flag, ...]] = (TOP_K,)
    success_definition: ClassVar[str] = (
        "storage probes succeed when a search for the version's content (its text without "
        "names) returns it in the top 5 (widened by the number of other memories with a "
        "version holding every word of that content); "
        "queries and deep probes when a relevant memory is in the top k (hit@top_k), a "
        "negative query when an abstaining store returned nothing; cluster and forgetting "
        "probes are measured, not passed or failed; errored and timed-out items fail"
    )

    def __init__(
        self,
        top_k: int = 20,
        k: int = 10,
        storage: str = "read-back",
        storage_limit: int = 1000,
        cluster_probes: int = 500,
        horizon_days: int = 90,
        weights: dict[str, float] | None = None,
    ) -> None:
        if int(top_k) < 1 or not 1 <= int(k) <= int(top_k):
            raise MnemometerError(f"need 1 <= k <= top_k, got k={k}, top_k={top_k}")
        if storage not in STORAGE_MODES:
            raise MnemometerError(f"storage must be read-back or none, got {storage!r}")
        if int(storage_limit) < 0 or int(cluster_probes) < 0 or int(horizon_days) < 0:
            raise MnemometerError("storage_limit, cluster_probes and horizon_days must be >= 0")
        w = dict(DEFAULT_WEIGHTS)
        for key, value in (weights or {}).items():
            if key not in DIMENSIONS:
                raise MnemometerError(
                    f"weights: unknown dimension {key!r}; one of {', '.join(DIMENSIONS)}"
                )
            if not isinstance(value, int | float) or value < 0:
                raise MnemometerError(f"weights: {key} must be a number >= 0, got {value!r}")
            w[key] = float(value)
        if not any(w.values()):
            raise MnemometerError("weights: at least one dimension needs a positive weight")
        self.top_k = int(top_k)
        self.k = int(k)
        self.ks = sorted({x for x in DEFAULT_KS if x <= self.top_k} | {self.k, self.top_k})
        # The deprecated names measure the same thing as read-back.
        self.storage = "none" if storage == "none" else "read-back"
        self.storage_limit = int(storage_limit)
        self.cluster_probes = int(cluster_probes)
        self.horizon_days = int(horizon_days)
        self.weights = w
        self._plan: Plan | None = None
        self._abstains = False
        self._listed: set[str] | None = None
        self._outcomes: dict[str, tuple[bool, bool, float]] = {}
        self._gone: set[str] = set()  # memories lost by the horizon (see _replay.py)
        self._ids = StoreIds({})  # the ids the store sees (drawn in setup)

    def options(self) -> dict[str, Any]:
        """Resolved options, including the overall-score weights (recorded in the run log).

        ``storage`` is ``read-back`` or ``none``: the deprecated names measure the same
        thing as ``read-back``.
        """
        return {
            "top_k": self.top_k,
            "k": self.k,
            "storage": self.storage,
            "storage_limit": self.storage_limit,
            "cluster_probes": self.cluster_probes,
            "horizon_days": self.horizon_days,
            "weights": self.weights,
        }

    def cannot_score(self, dataset: Dataset) -> str | None:
        """A dataset without memories: every dimension measures how a store keeps memories.

        A conversation dataset (LoCoMo, LongMemEval) has turns and questions, no memories:
        run on one, memtest scored every question a miss against an empty store.
        """
        if dataset.memories:
            return None
        if dataset.conversations:
            return (
                f"a conversation dataset ({len(dataset.conversations):,} conversations, "
                f"{len(dataset.queries):,} questions) has no memories to store (the `retrieval` "
                "suite searches each conversation's own turns)"
            )
        return "the dataset has no memories to store"

    # ------------------------------------------------------------------ plan
    def plan(self, dataset: Dataset) -> list[Item]:
        """Storage, query, cluster, deep and forgetting items, in that order."""
        p = self._plan = read_plan(dataset, self.cluster_probes)
        items: list[Item] = []

        def add(item_id: str, payload: Any) -> None:
            items.append(Item(item_id, len(items), payload))

        n = len(dataset.memories)
        sample = storage_sample(dataset, self.storage_limit) if self.storage != "none" else []
        for mid, style, probe, twins in read_back_plan(dataset, sample):
            add(f"storage/{mid}/{style}", ("storage", mid, style, probe, n, twins))
        for q in dataset.queries:
            add(f"query/{q.id}", ("query", q))
        for pr in p.clusters:
            add(f"cluster/{pr.memory_id}", ("cluster", pr))
        for pr in p.deep_probes:
            add(f"deep/{pr.memory_id}", ("deep", pr))
        for pr in p.forgetting:
            add(f"forget/{pr.memory_id}", ("forget", pr))
        return items

    # ----------------------------------------------------------------- setup
    def setup(self, system: Any, dataset: Dataset, ctx: RunContext) -> dict[str, float]:
        """Store everything, replay the access schedule, and carry what it lost.

        A store that is time-aware or lost a probed memory in the replay is given the data
        again for the other dimensions, and what it lost by the horizon is gone for them
        (see ``_replay.py``).
        """
        if self._plan is None:
            self._plan = read_plan(dataset, self.cluster_probes)
        self._abstains = bool(getattr(system, "abstains", False))
        self._ids = ids = run_ids(dataset, ctx)
        timings = index_dataset(system, dataset, ctx, ids=ids)
        saved = read_replay(ctx.run_dir) if ctx.pending is not None else None
        if saved is not None:  # a resume: the replay's outcomes were checkpointed
            self._outcomes, self._gone = saved
        elif self._plan.forgetting:
            t0 = time.perf_counter()
            probes, search = self._plan.forgetting, self._search_as(system)
            self._outcomes = replay(system, dataset, probes, self.k, self.horizon_days, search)
            self._gone = forgotten(self._outcomes)
            timings["forgetting_replay"] = time.perf_counter() - t0
            if self._gone or isinstance(system, ClockAware):
                t0 = time.perf_counter()
                missing = unread(dataset, search)  # at the horizon
                timings["horizon_read_back"] = time.perf_counter() - t0
                timings["index_again"] = store_dataset(system, dataset, ids=ids)["index"]
                # A memory the store given the data again cannot read back either is a
                # retrieval miss, not a loss.
                self._gone |= missing - unread(dataset, search, only=missing)
            write_replay(ctx.run_dir, self._outcomes, self._gone)
        # What the store says it keeps: reported beside what it reads back, never scored
        # (so not asked when nothing is read back).
        listable = isinstance(system, ListableStore) and self.storage != "none"
        self._listed = set(map(ids.dataset_id, system.list_ids())) if listable else None
        return timings

    def _search_as(self, system: Any) -> Search:
        """A search of ``system`` that returns the hits alone (the replay's)."""
        return lambda text, top_k: self._search(system, text, top_k)[0]

    def _search(self, system: Any, text: str, top_k: int) -> tuple[HitList, float]:
        """One search, its hits under the dataset's ids."""
        return timed_search(system, text, top_k, ids=self._ids)

    def _ask(self, system: Any, text: str, top_k: int) -> tuple[HitList, float, int]:
        """An item's search, of the store as the horizon left it: without what is gone.

        Returns the hits, the first call's milliseconds and how many gone memories were
        left out. The request widens until ``top_k`` hits remain or the store runs out.
        """
        hits, ms = self._search(system, text, top_k)
        if not self._gone:
            return hits, ms, 0
        n, cap = top_k, top_k + len(self._gone)
        while True:
            kept = HitList(h for h in hits if h.memory_id not in self._gone)
            if len(kept) >= top_k or hits.returned < n or n >= cap:
                break
            n = min(2 * n, cap)
            hits, _ = self._search(system, text, n)
        kept = HitList(kept[:top_k])
        kept.returned = hits.returned
        last = hits.index(kept[-1]) + 1 if kept else len(hits)
        return kept, ms, sum(h.memory_id in self._gone for h in hits[:last])

    # ------------------------------------------------------------------ items
    def run_item(self, system: Any, item: Item) -> dict[str, Any]:
        """Run one probe or query and score it (plain data shaped like an ItemResult).

        Plain data, as in the retrieval suite: the log writer serialises it directly and the
        reader validates it, instead of one model per result and per metric here.
        """
        kind = item.payload[0]
        out: dict[str, Any] = getattr(self, f"_item_{kind}")(system, item)
        success = self._success(kind, out["metrics"])
        if success is not None:
            out["success"] = success
        return out

    def _success(self, kind: str, metrics: list[dict[str, Any]]) -> bool | None:
        """The rule in :attr:`success_definition`."""
        if kind in ("cluster", "forget"):
            return None
        wanted = {"storage": (("kept", 5),)}.get(kind, (("hit", self.top_k), ("abstention", None)))
        by = {(m["name"], m.get("k")): m["value"] for m in metrics}
        for key in wanted:
            if key in by:
                return None if by[key] is None else by[key] >= 1.0
        return None

    def _item_storage(self, system: Any, item: Item) -> dict[str, Any]:
        _, mid, style, text, n_memories, twins = item.payload
        groups = {"dimension": "storage", "style": style}
        # Behaviour only: the version must come back when searched by its content, its text
        # without the names (see _storage.py). Other memories with a version holding every
        # word of it cannot be told apart from it by that search, so the window widens by
        # their number (top 1 + twins, top 5 + twins). A memory gone by the horizon is
        # left out of every search (see _ask), so it is not read back.
        hits, ms, skipped = self._ask(system, text, 5 + twins)
        ranked = dedupe(h.memory_id for h in hits)
        metrics: list[dict[str, Any]] = [
            {"name": "kept", "k": 1, "value": 1.0 if mid in ranked[: 1 + twins] else 0.0},
            {"name": "kept", "k": 5, "value": 1.0 if mid in ranked[: 5 + twins] else 0.0},
        ]
        if self._listed is not None:  # the store's own claim, reported beside it
            metrics.append({"name": "listed", "value": 1.0 if mid in self._listed else 0.0})
        return searched(
            item,
            text,
            hits,
            ms,
            groups=groups,
            expected=[mid],
            metrics=metrics,
            extra={"memories": n_memories, "alike": twins, **self._gone_count()},
            gone=skipped,
        )

    def _gone_count(self) -> dict[str, int]:
        """How many memories were gone by the horizon (recorded only when some were)."""
        return {"gone_at_horizon": len(self._gone)} if self._gone else {}

    def _item_query(self, system: Any, item: Item) -> dict[str, Any]:
        q: Query = item.payload[1]
        hits, ms, skipped = self._ask(system, q.text, self.top_k)
        ranked = dedupe(h.memory_id for h in hits)
        groups = {"dimension": _dimension(q), "type": q.type}
        if q.difficulty:
            groups["difficulty"] = q.difficulty
        if "semantic_distance" in q.metadata:
            groups["distance"] = str(q.metadata["semantic_distance"])
        metrics: list[dict[str, Any]]
        if q.relevant_ids:
            metrics = rank_values(ranked, q.relevant_ids, self.ks)  # type: ignore[assignment]
            r = len(q.relevant_ids)
            if q.type == "composite":
                got = len(set(ranked[:r]) & set(q.relevant_ids))
                metrics.append({"name": "r_precision", "value": got / r})
            if q.type == "chain":
                assert self._plan is not None
                order = self._plan.chain_order.get(q.id)
                metrics += chain_metrics(ranked[: self.top_k], q.relevant_ids, order)
            pool = self._plan.query_pools.get(q.id) if self._plan else None
            if pool is not None:
                base = pool.expected_recall(self.k)
                metrics.append({"name": "baseline_recall", "k": self.k, "value": base})
        else:
            value = (0.0 if ranked else 1.0) if self._abstains else None
            metrics = [{"name": "abstention", "value": value}]
        return searched(
            item,
            q.text,
            hits,
            ms,
            groups=groups,
            expected=q.relevant_ids,
            metrics=metrics,
            gone=skipped,
        )

    def _item_cluster(self, system: Any, item: Item) -> dict[str, Any]:
        p: Probe = item.payload[1]
        hits, ms, skipped = self._ask(system, p.text, self.k + 1)
        ranked = [x for x in dedupe(h.memory_id for h in hits) if x != p.memory_id][: self.k]
        mates = set(p.targets)
        recall = len(mates & set(ranked)) / len(mates)
        # The baseline is a ranking that knows the probe's person but not its topic: the
        # person's other memories first, in random order (see Pool.expected_recall).
        assert p.pool is not None
        metrics = [
            {"name": "cluster_recall", "k": self.k, "value": recall},
            {"name": "baseline_recall", "k": self.k, "value": p.pool.expected_recall(self.k)},
        ]
        return searched(
            item,
            p.text,
            hits,
            ms,
            groups={"dimension": "organisation", "cluster": p.group},
            expected=sorted(mates),
            metrics=metrics,
            gone=skipped,
        )

    def _item_deep(self, system: Any, item: Item) -> dict[str, Any]:
        p: Probe = item.payload[1]
        hits, ms, skipped = self._ask(system, p.text, self.top_k)
        ranked = dedupe(h.memory_id for h in hits)
        return searched(
            item,
            p.text,
            hits,
            ms,
            groups={"dimension": "deep", "type": "deep-probe", "distance": p.group},
            expected=[p.memory_id],
            metrics=rank_values(ranked, [p.memory_id], self.ks),
            gone=skipped,
        )

    def _item_forget(self, system: Any, item: Item) -> dict[str, Any]:
        p: Probe = item.payload[1]
        before, after, ms = self._forget_outcome(p.memory_id)
        metrics = [
            {"name": "found_before", "k": self.k, "value": float(before)},
            {"name": "found_after", "k": self.k, "value": float(after)},
        ]
        return result(
            item,
            p.text,
            ms,
            groups={"dimension": "forgetting", "frequency": p.group},
            expected=[p.memory_id],
            metrics=metrics,
            extra={"accesses": len(p.access_days)},
        )

    def _forget_outcome(self, memory_id: str) -> tuple[bool, bool, float]:
        try:
            return self._outcomes[memory_id]
        except KeyError:
            raise MnemometerError(f"no replay outcome for {memory_id}: setup did not run") from None

    def failed(self, item: Item, error: str, status: str) -> ItemResult:
        """A failed call scores as a failure: 0 on the item's main metrics."""
        kind = item.payload[0]
        dim = {
            "storage": "storage",
            "cluster": "organisation",
            "deep": "deep",
            "forget": "forgetting",
        }.get(kind)
        groups: dict[str, str] = {"dimension": dim or "retrieval"}
        expected: list[str] = []
        metrics: list[Metric]
        if kind == "query":
            q: Query = item.payload[1]
            groups = {"dimension": _dimension(q), "type": q.type}
            expected = q.relevant_ids
            if q.relevant_ids:
                metrics = [
                    Metric(name=n, k=k, value=0.0)
                    for k in self.ks
                    for n in ("precision", "recall", "hit", "mrr", "ndcg")
                ]
            else:
                metrics = [Metric(name="abstention", value=0.0 if self._abstains else None)]
        elif kind == "storage":
            groups["style"] = item.payload[2]
            metrics = [Metric(name="kept", k=1, value=0.0), Metric(name="kept", k=5, value=0.0)]
        elif kind == "cluster":
            pool = item.payload[1].pool
            metrics = [
                Metric(name="cluster_recall", k=self.k, value=0.0),
                Metric(name="baseline_recall", k=self.k, value=pool.expected_recall(self.k)),
            ]
        elif kind == "deep":
            groups["distance"] = item.payload[1].group
            metrics = [Metric(name="recall", k=self.k, value=0.0)]
        else:
            groups["frequency"] = item.payload[1].group
            metrics = [Metric(name="found_before", k=self.k, value=None)]
        return failure(
            item,
            error,
            status,
            success=False if kind not in ("cluster", "forget") else None,
            groups=groups,
            expected=expected,
            metrics=metrics,
        )

    def scoring(self, llm: Any = None) -> ScoringRecord:
        """Scored in the run; summarised by the ``memtest`` summary; headline ``overall``."""
        del llm  # nothing here asks a model
        return ScoringRecord(summary=MemtestSummary(self.k, self.weights).spec(), headline=HEADLINE)


def _dimension(q: Query) -> str:
    if q.type in ("chain",):
        return "reasoning"
    if q.type == "cluster":
        return "organisation"
    if q.type == "deep":
        return "deep"
    return "retrieval"
