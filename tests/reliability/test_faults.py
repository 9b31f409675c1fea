"""Faults stay contained: a store or agent that raises, hangs or answers garbage.

The store below raises on 10% of searches, hangs past the timeout on 5% and returns
malformed results on others (None, a string, a list of numbers, a NaN score, ids it was
never given, 10,000 hits for top_k 20). The run completes, every item is in the log with
its error, the exit code says items failed, and every report format renders and states the
failure rate.
"""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path

import pytest
from conftest import invoke_cli
from wrapped import WrappedBM25

from mnemometer._registry import AGENTS, STORES
from mnemometer.datasets.generate import write_generated
from mnemometer.log import read_header, read_items

HANG = threading.Event()

# (share of calls, what happens): the rest answer normally.
FAULTS = [
    (0.10, "raise"),
    (0.05, "hang"),
    (0.03, "none"),
    (0.03, "string"),
    (0.03, "numbers"),
    (0.03, "nan"),
    (0.03, "unknown"),
    (0.03, "flood"),
]


def fault_for(text: str) -> str | None:
    r = random.Random(text).random()
    for share, kind in FAULTS:
        if r < share:
            return kind
        r -= share
    return None


class FaultStore(WrappedBM25):
    """bm25 with faults injected by a seeded draw on the query text."""

    def search(self, query: str, top_k: int):
        kind = fault_for(query)
        hits = self.inner.search(query, top_k)
        if kind == "raise":
            raise RuntimeError("injected fault")
        if kind == "hang":
            HANG.wait(60)  # past the run's timeout; released when the test ends
            return hits
        if kind == "none":
            return None
        if kind == "string":
            return "m1, m2"
        if kind == "numbers":
            return [1, 2, 3]
        if kind == "nan":
            return [{"memory_id": hits[0].memory_id, "score": float("nan")}] if hits else None
        if kind == "unknown":
            return [{"memory_id": "never-stored", "score": 9.0}, *hits][:top_k]
        if kind == "flood":
            return [{"memory_id": f"x{i}", "score": 1.0} for i in range(10_000)]
        return hits


@pytest.fixture
def faulty():
    STORES.register("faulty-test", FaultStore)
    HANG.clear()
    yield
    HANG.set()
    STORES.unregister("faulty-test")


def test_a_faulty_store_is_contained_and_reported(tmp_path: Path, faulty) -> None:
    data = tmp_path / "gen.jsonl"
    write_generated(data, 200, "en", seed=7)
    out = tmp_path / "r"
    args = ["run", "retrieval", "-d", str(data), "-s", "faulty-test", "--timeout", "0.5"]
    res = invoke_cli(*args, "-c", "4", "--out", str(out), "--format", "json")
    assert res.exit_code == 1, res.output  # items failed, recorded and counted
    header, items = read_header(out), read_items(out)
    assert header.status == "finished" and len(items) == header.item_count
    by = {r.item_id: r for r in items}
    kinds = {q: fault_for(by[q].input) for q in by}  # what each item met, from its query text
    for q, r in by.items():
        kind = kinds[q]
        if kind in ("raise", "none", "string", "numbers", "nan"):
            assert r.status == "error" and r.error and r.success is False, (kind, r)
        if kind == "hang":
            assert r.status == "timeout" and "timed out" in (r.error or ""), r
        if kind is None:
            assert r.status == "ok", r
    errors = {kinds[q]: by[q].error for q in by if by[q].status == "error"}
    assert "injected fault" in errors["raise"]
    assert "returned None" in errors["none"]
    assert "not a list of hits" in errors["string"]
    assert "Hit or a dict" in errors["numbers"]
    assert "finite" in errors["nan"]
    unknown = [r for q, r in by.items() if kinds[q] == "unknown" and r.status == "ok"]
    assert unknown and all(r.extra["unknown_ids"] >= 1 for r in unknown)
    # Coercing 10,000 hits can outlast the 0.5 s timeout on a loaded machine: such an item
    # is a recorded timeout; every flood that finished was cut to 20 and noted.
    flood = [r for q, r in by.items() if kinds[q] == "flood"]
    assert all(r.status in ("ok", "timeout") for r in flood)
    done = [r for r in flood if r.status == "ok"]
    assert done and all(r.extra["returned"] == 10_000 and len(r.retrieved) == 20 for r in done)

    failed = sum(r.status != "ok" for r in items)
    rate = f"{failed} of {len(items)} items failed ({100 * failed / len(items):.1f}%)"
    summary = json.loads((out / "summary.json").read_text())
    notes = " ".join(summary["notes"])
    assert rate in notes
    assert "never given" in notes and "more hits than asked" in notes
    for fmt in ("text", "md", "json", "html"):
        rep = invoke_cli("report", str(out), "--format", fmt, "-o", str(tmp_path / f"r.{fmt}"))
        assert rep.exit_code == 0, rep.output
        assert rate in (tmp_path / f"r.{fmt}").read_text(), fmt


class FaultAgent:
    """An agent factory whose agents raise, hang or reply with garbage on some turns."""

    def __init__(self) -> None:
        pass

    def create(self, namespace: str):
        return _Agent()


class _Agent:
    def start_session(self, persona):
        pass

    def send(self, text: str):
        from mnemometer.agents import Reply

        kind = fault_for(text)
        if kind == "raise":
            raise RuntimeError("agent fault")
        if kind == "hang":
            HANG.wait(60)
        if kind == "none":
            return None
        if kind in ("string", "numbers"):
            return Reply(text=12345)  # not a string
        return Reply(text="I do not remember.")

    def close(self):
        pass


def test_a_faulty_agent_is_contained_and_reported(tmp_path: Path) -> None:
    AGENTS.register("faulty-agent-test", FaultAgent)
    HANG.clear()
    out = tmp_path / "r"
    try:
        res = invoke_cli(
            "run",
            "scenarios",
            "--agent",
            "faulty-agent-test",
            "-O",
            "similarity=none",
            "--timeout",
            "0.2",
            "-c",
            "4",
            "--out",
            str(out),
            "--format",
            "text",
        )
    finally:
        HANG.set()
        AGENTS.unregister("faulty-agent-test")
    assert res.exit_code == 1, res.output
    items = read_items(out)
    assert len(items) == read_header(out).item_count == 13
    failed = [r for r in items if r.status != "ok"]
    assert failed and all(r.error for r in failed)
    rate = f"{len(failed)} of 13 items failed"
    assert rate in res.output
    rep = invoke_cli("report", str(out), "--format", "html", "-o", str(tmp_path / "r.html"))
    assert rep.exit_code == 0 and rate in (tmp_path / "r.html").read_text()
