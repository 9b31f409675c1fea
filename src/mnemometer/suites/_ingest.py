"""What storing cost, per memory: seconds for every store, LLM calls and tokens where metered.

A suite that stores a dataset calls :meth:`IngestTally.add` once per store it filled (the
run's store and each conversation's own). Stores with the ``ingest_costs`` capability
(:class:`~mnemometer.stores.IngestCosted`: Graphiti, cognee, LangMem) report every ingest
call's LLM calls, tokens, seconds, what it extracted and whether it failed; for the others
the tally knows the wall time and the number of memories. It records counts, notes that say
when memories failed or nothing was extracted, and one row of figures in ``ingest.json``;
the summary (:class:`mnemometer.scoring.summaries.RetrievalSummary`) shows them as a table.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mnemometer.stores._protocol import IngestCost, IngestCosted


@dataclass
class IngestTally:
    """Ingest costs of every store a suite filled in one run."""

    memories: int = 0
    seconds: float = 0.0
    metered: bool = False
    costs: list[IngestCost] = field(default_factory=list)

    def add(self, store: Any, memories: int, seconds: float) -> None:
        """Record one filled store: how many memories it was given and how long it took."""
        self.memories += memories
        self.seconds += seconds
        if isinstance(store, IngestCosted):
            self.metered = True
            self.costs.extend(store.ingest_costs())

    def record(self, path: Path) -> None:
        """What storing cost, for the summary (``ingest.json``: counts, notes, one row)."""
        doc = {"counts": self.counts(), "notes": self.notes(), "row": self.row()}
        path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")

    def write(self, path: Path) -> None:
        """One JSON line per ingest call (``ingest.jsonl``), for a closer look."""
        with path.open("w", encoding="utf-8") as f:
            for c in self.costs:
                f.write(json.dumps(asdict(c), ensure_ascii=False) + "\n")

    @property
    def failed(self) -> int:
        """Memories whose ingest failed."""
        return sum(len(c.memory_ids) for c in self.costs if c.error is not None)

    def row(self) -> dict[str, Any]:
        """The raw values of the ``ingest`` table's one row."""
        n = max(self.memories, 1)
        out: dict[str, Any] = {
            "memories": self.memories,
            "failed": self.failed if self.metered else None,
            "seconds_per_memory": self.seconds / n,
            "seconds_p50": None,
            "seconds_p95": None,
            "llm_calls_per_memory": None,
            "tokens_per_memory": None,
            "llm_seconds_per_memory": None,
            "extracted": None,
        }
        if not self.metered:
            return out
        per = [c.seconds / max(len(c.memory_ids), 1) for c in self.costs for _ in c.memory_ids]
        if per:
            import numpy as np  # here: only a store that reports its costs needs it

            out["seconds_p50"] = float(np.percentile(per, 50))
            out["seconds_p95"] = float(np.percentile(per, 95))
        out["llm_calls_per_memory"] = sum(c.llm_calls for c in self.costs) / n
        tokens = sum(c.prompt_tokens + c.completion_tokens for c in self.costs)
        out["tokens_per_memory"] = tokens / n
        out["llm_seconds_per_memory"] = sum(c.llm_seconds for c in self.costs) / n
        known = [c.extracted for c in self.costs if c.extracted is not None]
        out["extracted"] = sum(known) if known else None
        return out

    def counts(self) -> dict[str, int]:
        """``memories_stored`` and, where metered, ``ingest_failures``."""
        out = {"memories_stored": self.memories}
        if self.metered:
            out["ingest_failures"] = self.failed
        return out

    def notes(self) -> list[str]:
        """Failed memories, and a warning when the store extracted nothing at all."""
        out: list[str] = []
        failed = [c for c in self.costs if c.error is not None]
        if failed:
            first = failed[0]
            out.append(
                f"{self.failed} of {self.memories} memories failed to ingest and are not in "
                f"the store (first: {', '.join(first.memory_ids[:3])}: {first.error})"
            )
        extracted = [c.extracted for c in self.costs if c.error is None]
        if self.metered and extracted and all(e == 0 for e in extracted):
            out.append(
                f"warning: the store extracted nothing from the whole dataset "
                f"({len(extracted)} ingest calls, 0 items): its searches can only come back "
                "empty; check the LLM it was given"
            )
        return out
