"""What storing cost, per memory: seconds for every store, LLM calls and tokens where metered.

A suite that stores a dataset calls :meth:`IngestTally.add` once per store it filled (the
run's store and each conversation's own), with the memories whose store call failed (the
suite catches those and goes on, see :func:`mnemometer.suites.retrieval.store_dataset`).
Stores with the ``ingest_costs`` capability (:class:`~mnemometer.stores.IngestCosted`:
Graphiti, cognee, LangMem) report every ingest call's LLM calls, tokens, seconds, what it
extracted and whether it failed; stores with ``write_retries``
(:class:`~mnemometer.stores.RetryCounted`: ``http``) count the store calls they sent again;
for the others the tally knows the wall time and the number of memories. It records
counts, notes that say which memories failed and which queries need them, and one row of
figures in ``ingest.json``; the summary (:class:`mnemometer.scoring.summaries.RetrievalSummary`)
shows them as a table.

:func:`fill_each` fills the stores of several conversations at once (``--concurrency``).
Each store meters its own calls (its own LLM relay; cognee's in the worker process that
runs it), so the figures per memory stay exact when fills overlap; their seconds are
each store's own (what a memory waited), and the run's ``index`` timing the wall time.
"""

from __future__ import annotations

import contextvars
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from mnemometer.scoring.summaries import ingest_figures
from mnemometer.stores._protocol import IngestCost, IngestCosted, RetryCounted

if TYPE_CHECKING:
    from mnemometer.suites._store_ids import StoreIds

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class IngestTally:
    """Ingest costs of every store a suite filled in one run."""

    ids: StoreIds | None = None
    """The run's store ids: costs are recorded under the dataset's ids."""
    memories: int = 0
    seconds: float = 0.0
    metered: bool = False
    costs: list[IngestCost] = field(default_factory=list)
    unstored: dict[str, str] = field(default_factory=dict)
    """Memory id -> why its store call failed (caught by the suite; the run went on)."""
    retries: int | None = None
    """Store calls sent again after a transient failure (``None``: no store counts them)."""
    affected: list[str] = field(default_factory=list)
    """Queries that need a memory that failed (they are asked all the same)."""

    def add(
        self, store: Any, memories: int, seconds: float, failures: dict[str, str] | None = None
    ) -> None:
        """Record one filled store: its memories, how long it took, the ones that failed."""
        self.memories += memories
        self.seconds += seconds
        self.unstored.update(failures or {})
        if isinstance(store, IngestCosted):
            self.metered = True
            costs = store.ingest_costs()
            self.costs.extend(self.ids.costs(costs) if self.ids is not None else costs)
        if isinstance(store, RetryCounted):
            self.retries = (self.retries or 0) + store.write_retries()

    def record(self, path: Path) -> None:
        """What storing cost, for the summary (``ingest.json``: counts, notes, one row).

        ``unstored`` is kept too: a resume that loads a saved index reads it back.
        """
        doc = {
            "counts": self.counts(),
            "notes": self.notes(),
            "row": self.row(),
            "unstored": self.failed_ids(),
        }
        path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")

    @staticmethod
    def recorded_failures(path: Path) -> dict[str, str]:
        """The ``unstored`` memories an earlier ``ingest.json`` recorded ({} without one)."""
        try:
            doc = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        unstored = doc.get("unstored") if isinstance(doc, dict) else None
        return {str(k): str(v) for k, v in unstored.items()} if isinstance(unstored, dict) else {}

    def write(self, path: Path) -> None:
        """One JSON line per ingest call (``ingest.jsonl``), for a closer look."""
        with path.open("w", encoding="utf-8") as f:
            for c in self.costs:
                f.write(json.dumps(asdict(c), ensure_ascii=False) + "\n")

    def failed_ids(self) -> dict[str, str]:
        """Memory id -> why its ingest failed (a store's own report, or its call's error)."""
        out = {m: c.error for c in self.costs if c.error is not None for m in c.memory_ids}
        return {**out, **self.unstored}

    @property
    def failed(self) -> int:
        """Memories whose ingest failed."""
        return len(self.failed_ids())

    @property
    def counted(self) -> bool:
        """Whether failures are known here (a metered store, a failure, counted retries)."""
        return self.metered or bool(self.unstored) or self.retries is not None

    def row(self) -> dict[str, Any]:
        """The raw values of the ``ingest`` table's one row."""
        failed = self.failed if self.counted else None
        if not self.metered:
            return ingest_figures(self.memories, self.seconds, failed=failed, retries=self.retries)
        each = [c.seconds / max(len(c.memory_ids), 1) for c in self.costs for _ in c.memory_ids]
        llm = (
            sum(c.llm_calls for c in self.costs),
            sum(c.prompt_tokens for c in self.costs),
            sum(c.completion_tokens for c in self.costs),
            sum(c.llm_seconds for c in self.costs),
        )
        known = [c.extracted for c in self.costs if c.extracted is not None]
        extracted = sum(known) if known else None
        return ingest_figures(
            self.memories,
            self.seconds,
            each,
            llm,
            failed=failed,
            retries=self.retries,
            extracted=extracted,
        )

    def counts(self) -> dict[str, int]:
        """``memories_stored`` (those that did not fail), and what is known of the rest.

        ``ingest_failures`` when failures are known here, ``ingest_retries`` when a store
        counts them, ``queries_affected`` when a query needs a memory that failed.
        """
        out = {"memories_stored": self.memories - self.failed}
        if self.counted:
            out["ingest_failures"] = self.failed
        if self.retries is not None:
            out["ingest_retries"] = self.retries
        if self.affected:
            out["queries_affected"] = len(self.affected)
        return out

    def notes(self) -> list[str]:
        """Failed memories and the queries that need them, retried writes, extraction.

        The last is a warning when the store extracted nothing from the whole dataset.
        """
        out: list[str] = []
        failed = self.failed_ids()
        if failed:
            first = list(failed.items())[:3]
            out.append(
                f"{len(failed)} of {self.memories} memories failed to ingest and are not in "
                f"the store (first: {', '.join(m for m, _ in first)}: {first[0][1]})"
            )
        if self.affected:
            shown = ", ".join(self.affected[:5]) + (", ..." if len(self.affected) > 5 else "")
            out.append(
                f"{len(self.affected)} queries need a memory that failed to store ({shown}): "
                "they were asked and scored as usual; each item names them in extra.unstored"
            )
        if self.retries:
            out.append(
                f"{self.retries} store calls were sent again after a transient failure, each "
                "under the idempotency key of its write: a service that honours the key (or "
                "stores by memory id) applied each write once"
            )
        extracted = [c.extracted for c in self.costs if c.error is None]
        if self.metered and extracted and all(e == 0 for e in extracted):
            out.append(
                f"warning: the store extracted nothing from the whole dataset "
                f"({len(extracted)} ingest calls, 0 items): its searches can only come back "
                "empty; check the LLM it was given"
            )
        return out


def fill_each(
    fill: Callable[[T], R],
    conversations: Sequence[T],
    concurrency: int,
    on_done: Callable[[int], None] | None = None,
) -> list[R]:
    """``fill`` for each conversation, at most ``concurrency`` at once; results in order.

    Each conversation has a store of its own, so their fills share no state and may
    overlap: a store that waits on an LLM while it stores (Graphiti, LangMem) waits for
    several conversations at once. With ``concurrency`` 1 (or one conversation) they run
    one after another in this thread, as before. Otherwise each runs in a worker thread,
    in a copy of this thread's context (the run's watch on its endpoints sees every
    attempt). The first fill that raises stops the rest from starting and is raised here
    once the running ones end; Ctrl-C raises at once (the workers are daemons: a fill
    left running dies with the process, and a resume fills every conversation again).
    ``on_done`` gets the number of fills finished so far, after each.
    """
    items = list(conversations)
    if concurrency <= 1 or len(items) <= 1:
        out = []
        for n, conv in enumerate(items, 1):
            out.append(fill(conv))
            if on_done is not None:
                on_done(n)
        return out
    results: list[Any] = [None] * len(items)
    errors: list[BaseException] = []
    lock = threading.Lock()
    state = {"next": 0, "done": 0}

    def work() -> None:
        while True:
            with lock:
                i = state["next"]
                if errors or i >= len(items):
                    return
                state["next"] = i + 1
            try:
                results[i] = fill(items[i])
            except BaseException as e:  # noqa: BLE001 - raised in the calling thread
                with lock:
                    errors.append(e)
                return
            with lock:
                state["done"] += 1
                if on_done is not None:
                    on_done(state["done"])

    workers = [
        threading.Thread(
            target=contextvars.copy_context().run,
            args=(work,),
            daemon=True,
            name=f"mnemometer-ingest-{n}",
        )
        for n in range(min(concurrency, len(items)))
    ]
    for w in workers:
        w.start()
    try:
        for w in workers:
            w.join()
    except BaseException:
        with lock:  # Ctrl-C: take no new conversation; the running ones are abandoned
            state["next"] = len(items)
        raise
    if errors:
        raise errors[0]
    return results
