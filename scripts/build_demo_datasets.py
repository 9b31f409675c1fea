"""Write the built-in demo datasets (``demo-en``, ``demo-zh``) from structured facts.

The facts live in ``scripts/demo_datasets.json``: each memory carries labels (person,
place, topic), and each query a ``where`` over those labels, so its relevant set is every
memory whose labels all match, by construction; a query without ``where`` (the negatives)
has none. Run from the repository root: ``python scripts/build_demo_datasets.py``.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from mnemometer.datasets import Dataset, DatasetInfo, Memory, Query, save_dataset

FACTS = Path(__file__).with_name("demo_datasets.json")
OUT = Path("src/mnemometer/datasets/builtin")
NOW = datetime(2026, 6, 1, 9, 0)
LABELS = ("person", "place", "topic")


def build(name: str, spec: dict[str, Any]) -> Dataset:
    """One demo dataset from its labelled facts and its queries' label filters."""
    facts = spec["memories"]
    memories = [
        Memory(
            id=f["id"],
            text=f["text"],
            timestamp=datetime.fromisoformat(f["date"]),
            metadata={k: f[k] for k in LABELS},
        )
        for f in facts
    ]
    queries = [
        Query(
            id=q["id"],
            text=q["text"],
            type=q["type"],
            difficulty=q["difficulty"],
            relevant_ids=[
                f["id"]
                for f in facts
                if "where" in q and all(f[k] == v for k, v in q["where"].items())
            ],
        )
        for q in spec["queries"]
    ]
    info = DatasetInfo(
        name=name,
        version="1",
        language=spec["language"],
        reference_time=NOW,
        source="mnemometer built-in demo (scripts/build_demo_datasets.py)",
        licence="MIT",
    )
    return Dataset(info=info, memories=memories, queries=queries)


if __name__ == "__main__":
    for name, spec in json.loads(FACTS.read_text(encoding="utf-8")).items():
        path = OUT / f"{name.replace('-', '_')}.json"
        save_dataset(build(name, spec), path)
        print("wrote", path)
