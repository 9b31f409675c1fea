"""The ids a store is given: opaque, drawn per run, and mapped back before anything is scored.

A dataset's ids can carry what a store must not know. MemTest's seed files number a
cluster's and a chain's memories contiguously, so a store that returned the id-neighbours
of its best hit scored organisation 81.3-100% on them; LoCoMo's turn ids name the session
and the turn; and the tie rule (``stores/_ties.py``) hashes the id, so a copy of Harry
Potter with its ids respelled broke ties another way (bm25 hit@20 0.715 -> 0.723). So no
suite gives a store a dataset's ids: :func:`store_dataset` gives each memory
``m`` + 16 hex digits of ``blake2b(run seed, timestamp, texts)`` and :func:`timed_search`
maps every hit back. The id is a function of what the store is shown anyway and of the
run's seed only: it says nothing of the dataset's ids, file order or labels, and a renamed
or reordered copy of a dataset gives every store the same ids. Memories with the very same
content (nothing else tells them apart) are numbered in the order of their dataset ids.

The map is written to the run directory (``store-ids.json``) before anything is stored,
and a resumed run reads it back, so a saved index and the items already written keep
meaning what they meant. The run log holds the dataset's ids only; an id a store returns
that it was never given is recorded as ``?<id>`` and names no memory.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from mnemometer.datasets._models import Dataset, Memory
from mnemometer.log._writer import atomic_write
from mnemometer.stores._protocol import Hit, HitList, IngestCost

if TYPE_CHECKING:
    from mnemometer.suites._base import RunContext

IDS_FILE = "store-ids.json"
UNKNOWN = "?"
"""Prefix of an id a store returned without having been given it (it names no memory)."""
_FORMAT = 1


@dataclass
class StoreIds:
    """Each memory's id as its store sees it, and the way back."""

    given: dict[str, str]
    """Dataset id -> the id the store is given."""
    seed: int = 0
    """The run seed the ids were drawn with."""
    _back: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._back = {v: k for k, v in self.given.items()}

    @classmethod
    def draw(cls, memories: Iterable[Memory], seed: int = 0) -> StoreIds:
        """Opaque ids for ``memories``: a seeded hash of each one's timestamp and texts."""
        groups: dict[str, list[str]] = defaultdict(list)
        seen: set[str] = set()
        for m in memories:
            if m.id not in seen:  # a repeated id keeps the id its first memory drew
                seen.add(m.id)
                groups[_digest(m, seed)].append(m.id)
        given: dict[str, str] = {}
        for digest, ids in groups.items():
            if len(ids) == 1:
                given[ids[0]] = f"m{digest}"
            else:  # the same content: only the dataset's ids tell these apart
                given.update({mid: f"m{digest}-{i}" for i, mid in enumerate(sorted(ids), 1)})
        return cls(given, seed)

    def of(self, memory_id: str) -> str:
        """The id the store is given for the dataset's ``memory_id``."""
        return self.given[memory_id]

    def dataset_id(self, store_id: str) -> str:
        """The dataset's id of an id a store returned (``?<id>`` if it was never given)."""
        return self._back.get(store_id) or UNKNOWN + store_id

    def hits(self, hits: HitList) -> HitList:
        """``hits`` with the dataset's ids (scores, texts and ``returned`` kept)."""
        out = HitList(Hit(self.dataset_id(h.memory_id), h.score, h.text) for h in hits)
        out.returned = hits.returned
        return out

    def costs(self, costs: Iterable[IngestCost]) -> Iterator[IngestCost]:
        """A store's ingest costs with the dataset's ids."""
        for c in costs:
            yield replace(c, memory_ids=tuple(map(self.dataset_id, c.memory_ids)))

    def digest(self) -> str:
        """A short hash of the whole map (a saved index is keyed by it)."""
        blob = json.dumps(sorted(self.given.items()), separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def write(self, run_dir: Path) -> None:
        """Record the map in the run directory (whole or not at all)."""
        doc = {"format": _FORMAT, "seed": self.seed, "ids": self.given}
        Path(run_dir).mkdir(parents=True, exist_ok=True)
        atomic_write(Path(run_dir) / IDS_FILE, json.dumps(doc, separators=(",", ":")))

    @classmethod
    def read(cls, run_dir: Path) -> StoreIds | None:
        """The recorded map, or ``None`` when there is none (or it cannot be read)."""
        try:
            doc = json.loads((Path(run_dir) / IDS_FILE).read_text("utf-8"))
            if doc["format"] != _FORMAT:
                return None
            return cls({str(k): str(v) for k, v in doc["ids"].items()}, int(doc["seed"]))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None


def all_memories(dataset: Dataset) -> Iterator[Memory]:
    """Every memory a suite may give a store: the dataset's, then each conversation's turns."""
    yield from dataset.memories
    for conv in dataset.conversations:
        yield from conv.memories()


def run_ids(dataset: Dataset, ctx: RunContext) -> StoreIds:
    """This run's store ids: the ones recorded in its directory, else drawn and recorded.

    A recorded map is used when it was drawn with the run's seed and covers exactly the
    dataset's memories (a resume); anything else draws again from the seed.
    """
    memories = list(all_memories(dataset))
    found = StoreIds.read(ctx.run_dir)
    if (
        found is not None
        and found.seed == ctx.seed
        and set(found.given) == {m.id for m in memories}
    ):
        return found
    drawn = StoreIds.draw(memories, ctx.seed)
    drawn.write(ctx.run_dir)
    return drawn


def _digest(m: Memory, seed: int) -> str:
    h = hashlib.blake2b(f"mnemometer-store-ids/{seed}".encode(), digest_size=8)
    h.update(b"\x1e" + (m.timestamp.isoformat() if m.timestamp else "").encode())
    for _, text in m.texts():
        h.update(b"\x1f" + text.encode())
    return h.hexdigest()
