"""Storing survives a faulty memory service, and counts what it wrote (issue 30 §3); a
memory service that dies stops the run, and a resume finishes it (§7).

The service below is a naive one: every store call appends a record (it assigns its own
ids, as many services do), so a retried write that had been applied is a duplicate unless
the call carries an ``Idempotency-Key`` it has seen. ``FaultProxy`` stands between it and
the run and fails 10% of requests: answered 503 before or after forwarding them, or the
connection dropped before or after.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import invoke_cli
from faultproxy import FaultProxy

from mnemometer.datasets import load_dataset
from mnemometer.datasets.generate import write_generated
from mnemometer.log import read_header, read_items
from mnemometer.suites._store_ids import StoreIds

FAULTS = ("status", "applied-status", "reset", "applied-reset")


class MemoryService:
    """Append-only storage honouring ``Idempotency-Key``; word-overlap search."""

    def __init__(self) -> None:
        self.writes: list[tuple[str, str]] = []
        """Every write applied: (memory id, text), duplicates included."""
        self.keys: set[str] = set()
        self.searches = 0
        self.after_search: Any = None
        """Called with the number of searches so far, after each one."""
        self.lock = threading.Lock()
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
                reply = service.answer(self.path, body, self.headers.get("Idempotency-Key"))
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def answer(self, path: str, body: dict[str, Any], key: str | None) -> Any:
        with self.lock:
            if path == "/reset":
                self.writes, self.keys = [], set()
                return {}
            if path == "/memories":
                if key is None or key not in self.keys:  # a key seen: applied already
                    self.writes.append((body["id"], body["text"]))
                    self.keys.add(key or "")
                return {"ok": True}
            self.searches += 1
            n = self.searches
            words = set(re.findall(r"\w+", body["query"].lower()))
            scored = sorted(
                ((len(words & set(re.findall(r"\w+", t.lower()))), mid) for mid, t in self.writes),
                key=lambda x: (-x[0], x[1]),
            )
        if self.after_search is not None:
            self.after_search(n)
        hits = [{"memory_id": m, "score": s} for s, m in scored if s > 0]
        return {"results": hits[: int(body["limit"])]}

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def service():
    svc = MemoryService()
    yield svc
    svc.close()


def _config(path: Path, url: str, retries: int) -> Path:
    path.write_text(f"""
base_url = "{url}"
timeout = 5
retries = {retries}
backoff = 0

[reset]
path = "/reset"

[store]
path = "/memories"
body = {{ text = "{{text}}", id = "{{memory_id}}" }}

[search]
path = "/search"
body = {{ query = "{{query}}", limit = "{{top_k}}" }}
results = "results"
id = "memory_id"
score = "score"
""")
    return path


def _run(data: Path, config: Path, out: Path) -> Any:
    args = ["run", "retrieval", "-d", data, "-s", "http", "-S", f"config={config}"]
    return invoke_cli(*args, "--out", out, "--format", "none")


def _faulty_run(service: MemoryService, data: Path, tmp_path: Path, retries: int) -> Any:
    """The run through a proxy failing 10% of requests: its result, the proxy, its counts."""
    with FaultProxy(service.url, share=0.1, faults=FAULTS, seed=5) as proxy:
        r = _run(data, _config(tmp_path / "svc.toml", proxy.url, retries), tmp_path / "r")
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    return r, proxy, summary["counts"]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "gen.jsonl"
    write_generated(path, 200, "en", seed=7)
    return path


def test_a_faulty_service_fails_memories_not_the_run_and_the_queries_that_need_them_say_so(
    service: MemoryService, data: Path, tmp_path: Path
) -> None:
    r, proxy, counts = _faulty_run(service, data, tmp_path, retries=0)
    assert r.exit_code == 1, r.output  # memories and searches failed; the run went on
    out = tmp_path / "r"
    header, items = read_header(out), read_items(out)
    assert header.status == "finished" and len(items) == header.item_count
    # Every store call that met a fault failed its memory (retries are off): recorded.
    # The service saw the run's opaque ids (store-ids.json maps them back).
    ids = StoreIds.read(out)
    assert ids is not None
    failed = {
        ids.dataset_id(q.json()["id"]) for q in proxy.requests if q.path == "/memories" and q.kind
    }
    ds = load_dataset(data)
    assert failed and counts["ingest_failures"] == len(failed)
    assert counts["memories_stored"] == len(ds.memories) - len(failed)
    assert counts["ingest_retries"] == 0
    # ... and charged to the queries that need them, which were asked all the same.
    need = {q.id: sorted(set(q.relevant_ids) & failed) for q in ds.queries}
    affected = {q for q, lost in need.items() if lost}
    assert affected and counts["queries_affected"] == len(affected)
    for item in items:
        if item.status == "ok":
            assert sorted(item.extra.get("unstored", [])) == need[item.item_id]
    notes = " ".join(json.loads((out / "summary.json").read_text())["notes"])
    assert f"{len(failed)} of {len(ds.memories)} memories failed to ingest" in notes
    assert f"{len(affected)} queries need a memory that failed to store" in notes
    assert f"{len(failed)} memories failed to store" in r.output


def test_retried_writes_are_counted_and_applied_once(
    service: MemoryService, data: Path, tmp_path: Path
) -> None:
    r, proxy, counts = _faulty_run(service, data, tmp_path, retries=3)
    assert r.exit_code == 0, r.output
    stores = [q for q in proxy.requests if q.path == "/memories"]
    writes = {q.headers["Idempotency-Key"] for q in stores}
    retried = len(stores) - len(writes)
    assert retried > 0  # some writes were sent more than once ...
    assert len(service.writes) == len(writes) == len(set(service.writes))  # ... applied once
    assert counts["ingest_retries"] == retried and counts["ingest_failures"] == 0
    assert counts["memories_stored"] == len(load_dataset(data).memories)


def test_a_memory_service_that_dies_mid_run_stops_it_and_a_resume_finishes_it(
    service: MemoryService, data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "r"
    with FaultProxy(service.url) as proxy:
        service.after_search = lambda n: setattr(proxy, "down", proxy.down or n == 50)
        cfg = _config(tmp_path / "svc.toml", proxy.url, retries=0)
        r = _run(data, cfg, out)
        assert r.exit_code == 75, r.output
        assert proxy.counts["down"] == 5  # five searches met the dead service, no more
        items = read_items(out)
        assert len(items) == 50 and all(i.status == "ok" for i in items)
        summary = json.loads((out / "summary.json").read_text())
        left = read_header(out).item_count - 50
        assert summary["counts"]["not_attempted"] == left and summary["counts"]["errors"] == 0
        service.after_search, proxy.down = None, False  # it is back
        again = invoke_cli("run", "--resume", out, "--format", "none")
        assert again.exit_code == 0, again.output
    header, items = read_header(out), read_items(out)
    assert header.status == "finished" and len(items) == header.item_count
    assert all(i.status == "ok" for i in items)
