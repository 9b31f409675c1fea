"""dory-memory as a mnemometer store: its own spreading-activation ranking, offline.

dory-memory (PyPI 1.2.1, github.com/MichaelWMartinII/Dory) keeps memories as nodes of a
graph in one SQLite file. ``DoryMemory.observe`` adds a node and links it (``CO_OCCURS``,
weight 0.5) to up to five nodes that SQLite FTS5 finds for its words; ``DoryMemory.query``
(``dory.session.query``) takes FTS5 hits as seeds, spreads activation from the first 8 over
the links, adds up to 50 more FTS5 hits at their salience, and writes the nodes, ranked by
``(activation, salience)``, into a context string. This store returns that ranking as hits.

No LLM and no embedding model is used: without an ``extract_model`` dory writes only what
``observe`` is given, and its vector search needs Ollama with ``nomic-embed-text`` (a hub
model), so it falls back to FTS5 exactly as it does on a machine without Ollama.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dory import activation as dory_activation
from dory import session as dory_session
from dory import store as dory_store
from dory.memory import DoryMemory
from dory.schema import ZONE_ACTIVE

from mnemometer import Hit

__all__ = ["DoryStore"]

#: ``DoryMemory.observe``'s default type; its nodes are listed in the context's "Context"
#: section in activation order (PREFERENCE/PROCEDURE nodes are listed whatever the query,
#: EVENT nodes by date), so the ranking below is the order dory itself writes them in.
NODE_TYPE = "CONCEPT"

# dory.session.query serialises through a module-level function; searches that swap it
# for the spy below must not overlap.
_QUERY_LOCK = threading.Lock()


class DoryStore:
    """dory-memory's own retrieval: FTS5 seeds, spreading activation, its context order.

    Each memory is one ``DoryMemory.observe(text)`` node (type CONCEPT, auto-linked as dory
    links it); a search is one ``DoryMemory.query(text)``. Hits are the nodes that query
    puts into its context, in its order: activation level, then salience, descending
    (``dory.session._serialize_structured``), at most 90 (its ``max_nodes``). A hit's score
    is its activation level, so equal scores are common: spreading activation caps at 1.0.
    Queries have dory's side effects (activation counts, salience), as in real use, and
    the context string the last query wrote is kept as :attr:`last_context`.

    Args:
        workdir: where the SQLite file goes (a fresh temporary directory by default; the
            runner passes a directory inside the run).
        auto_link: link each new node to the nodes FTS5 finds for it (dory's default);
            ``-S auto_link=false`` stores unlinked nodes, so no activation spreads.
        backdate: set a node's ``created_at``/``last_activated`` to the memory's
            ``timestamp``, as dory's LongMemEval harness does with session dates
            (``benchmarks/longmemeval.py: run_item``); ``-S backdate=false`` keeps "now".
    """

    abstains = True
    """An empty result means FTS5 and dory's substring fallback matched nothing."""

    def __init__(
        self, workdir: str | Path | None = None, auto_link: bool = True, backdate: bool = True
    ) -> None:
        self.workdir = Path(workdir) if workdir is not None else None
        self.auto_link = bool(auto_link)
        self.backdate = bool(backdate)
        self._dir: Path | None = None
        self._mem: DoryMemory | None = None
        self._ids: dict[str, str] = {}
        self.last_context = ""
        """What the last ``search`` got from ``DoryMemory.query``: dory's prompt context."""
        self.reset()

    def resolved_options(self) -> dict[str, Any]:
        """Options as used, for the run log."""
        return {"auto_link": self.auto_link, "backdate": self.backdate, "node_type": NODE_TYPE}

    def _close(self) -> None:
        if self._mem is not None:
            dory_store.close_connection(self._mem.graph.path)
            self._mem.close()
            self._mem = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def reset(self) -> None:
        """Forget everything: a new, empty SQLite graph."""
        self._close()
        if self.workdir is not None:
            self.workdir.mkdir(parents=True, exist_ok=True)
        self._dir = Path(tempfile.mkdtemp(prefix="dory-", dir=self.workdir))
        # No extract_model: dory then makes no LLM call (manual observe() only).
        self._mem = DoryMemory(db_path=self._dir / "dory.db")
        self._ids = {}

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        """Add ``text`` as one dory node, remembered under ``metadata['memory_id']``.

        Raises:
            ValueError: ``metadata`` has no ``memory_id``, or a ``timestamp`` that is not
                ISO 8601.
        """
        if "memory_id" not in metadata:
            raise ValueError("dory store: metadata needs a 'memory_id' (the id hits return)")
        when = _timestamp(metadata.get("timestamp")) if self.backdate else None
        mem = self._mem
        assert mem is not None
        if self.auto_link:
            node_id = mem.observe(text, node_type=NODE_TYPE)
        else:
            node_id = dory_session.observe(
                text, dory_session.NodeType(NODE_TYPE), mem.graph, auto_link=False
            )
            mem.graph.save()
        if when is not None:
            node = mem.graph.get_node(node_id)
            node.created_at = node.last_activated = when
        self._ids[node_id] = str(metadata["memory_id"])

    def store_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Store each pair in order (dory links each node to those stored before it)."""
        for text, metadata in items:
            self.store(text, metadata)

    def flush(self) -> None:
        """Write the graph (salience recomputed) to its SQLite file."""
        assert self._mem is not None
        self._mem.graph._dirty = True  # backdating changed nodes behind dory's back
        self._mem.graph.save()

    def search(self, query: str, top_k: int) -> list[Hit]:
        """The nodes ``DoryMemory.query(query)`` puts into its context, in its order."""
        mem = self._mem
        assert mem is not None
        if top_k <= 0:
            return []
        seen: dict[str, Any] = {}
        original = dory_session._serialize_structured

        def spy(activated: dict[str, float], graph: Any, max_nodes: int = 50, **kw: Any) -> str:
            seen.update(activated=dict(activated), max_nodes=max_nodes)
            return original(activated, graph, max_nodes=max_nodes, **kw)

        with _QUERY_LOCK:
            dory_session._serialize_structured = spy
            try:
                self.last_context = mem.query(query)
            finally:
                dory_session._serialize_structured = original
        return self._ranked(seen.get("activated") or {}, seen.get("max_nodes", 0))[:top_k]

    def _ranked(self, activated: dict[str, float], max_nodes: int) -> list[Hit]:
        # The order _serialize_structured (dory 1.2.1, session.py) writes CONCEPT nodes in:
        # sort by (activation, salience) descending, keep max_nodes, drop nodes that are not
        # active or were activated before and fell under the salience floor.
        graph = self._mem.graph  # type: ignore[union-attr]

        def salience(nid: str) -> float:
            node = graph.get_node(nid)
            return node.salience if node else 0

        ranked = sorted(activated.items(), key=lambda kv: (kv[1], salience(kv[0])), reverse=True)
        hits: list[Hit] = []
        given: set[str] = set()
        for nid, level in ranked[:max_nodes]:
            node = graph.get_node(nid)
            if node is None or node.zone != ZONE_ACTIVE or nid not in self._ids:
                continue
            if node.activation_count > 0 and node.salience < dory_activation.SALIENCE_FLOOR:
                continue
            # One hit per memory: versions stored under one id are separate nodes here.
            if self._ids[nid] not in given:
                given.add(self._ids[nid])
                hits.append(Hit(self._ids[nid], float(level), node.content))
        return hits

    def list_ids(self) -> list[str]:
        """Ids of every stored memory."""
        return list(self._ids.values())

    def __del__(self) -> None:
        try:
            self._close()
        except Exception:  # interpreter shutdown: nothing left to clean
            pass


def _timestamp(value: Any) -> str | None:
    """``value`` (ISO 8601) as dory's UTC ISO timestamp, or None when absent."""
    if value in (None, ""):
        return None
    try:
        dt = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"dory store: timestamp {value!r} is not ISO 8601; pass one like "
            "'2023-05-08T13:56:00', or -S backdate=false to ignore timestamps"
        ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).isoformat()
