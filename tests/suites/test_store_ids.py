"""A store is never given a dataset's ids: each memory gets an opaque id drawn for the run,
and every hit is mapped back before anything is scored (``suites/_store_ids.py``).

Issue 29 §6.1: MemTest's seed files number a cluster's and a chain's memories in a row, so
a store given those ids found a memory's mates by id alone. In the retrieval suite, BM25
with its best hit's id-neighbours (within 5) moved up scored recall@5 0.819 instead of
0.678 on sample_db_4875b98 and 0.733 instead of 0.567 on tianlongbabu_db.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest
from adversaries import AdjacentIdStore, redealt, renamed
from conftest import seed_file

from mnemometer.datasets import load_dataset
from mnemometer.runner import run


class NeighbourBoost(AdjacentIdStore):
    boost: ClassVar[int] = 5


def _figures(res: Any) -> dict[str, float]:
    return {m.key: m.value for m in res.summary.overall if "latency" not in m.name}


@pytest.mark.xfail(strict=True, reason="issue 29 §6.1: the store is given the dataset's ids")
@pytest.mark.parametrize("name", ["sample_db_4875b98.json", "tianlongbabu_db.json"])
def test_id_adjacency_gains_nothing_in_the_retrieval_suite(name: str, tmp_path: Path) -> None:
    ds = load_dataset(seed_file("memtest", name))
    dealt = renamed(ds, redealt(ds).__getitem__)  # the same memories, ids dealt out again
    got = [
        _figures(run("retrieval", NeighbourBoost(), dataset=data, out=tmp_path / label))
        for label, data in (("as-is", ds), ("dealt", dealt))
    ]
    assert got[0] == got[1]
