"""Scoring as a stage: every suite declares its headline once, the summary names it, and the
summary is built from the run directory alone by the scorers the header records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchmark_helpers import MINI
from conftest import REPO, invoke_cli, seed_file

import mnemometer
from mnemometer._registry import SUITES
from mnemometer.llm import resolve_settings
from mnemometer.log import read_header, read_items, read_log
from mnemometer.log._schema import HeadlineSpec, ItemResult, Metric
from mnemometer.runner import RunSettings, resummarize
from mnemometer.scoring import item_value, scorer_names
from mnemometer.testing import FakeLLMServer
from mnemometer.testing._bench import benchmark_reply, is_judge_request


def _overall(summary, name, k=None):
    return next(m for m in summary.overall if m.name == name and m.k == k)


@pytest.fixture(scope="module")
def server():
    with FakeLLMServer(rules=[(is_judge_request, benchmark_reply)], default=benchmark_reply) as s:
        yield s


def test_retrieval_names_hit_at_top_k_over_queries_with_ground_truth(tmp_path: Path):
    r = mnemometer.run("retrieval", "bm25", dataset="demo-en", out=tmp_path / "r")
    h = r.summary.headline
    assert (h.metric, h.k, h.label) == ("hit", 20, "hit@20")
    assert h.value == _overall(r.summary, "hit", 20).value
    assert h.n == r.summary.counts["with_ground_truth"] < r.summary.counts["items"]
    assert h.interval.method == "wilson"
    on_disk = json.loads((r.path / "summary.json").read_text())
    assert on_disk["headline"]["label"] == "hit@20" and on_disk["headline"]["value"] == h.value
    header = read_header(r.path)
    assert header.scoring.headline.metric == "hit"
    assert [s.name for s in header.scoring.scorers] == ["ranking"]
    assert header.scoring.summary.name == "retrieval" and len(header.scoring.summary.sha256) == 64


def test_memtest_headline_is_its_composite_overall(tmp_path: Path):
    data = seed_file("memtest", "sample_db_100.json")
    r = mnemometer.run("memtest", "bm25", dataset=str(data), out=tmp_path / "m")
    h = r.summary.headline
    assert h.composite and h.metric == "overall"
    assert h.value == _overall(r.summary, "overall").value


def test_scenarios_headline_is_accuracy_clustered_by_scenario(tmp_path: Path, server):
    settings = RunSettings(llm=resolve_settings(server.base_url, server.model))
    r = mnemometer.run(
        "scenarios",
        mnemometer.SystemSpec.agent("rag", store="bm25"),
        suite_options={"similarity": "none", "scenarios": ["cross_session_recall"], "epochs": 3},
        out=tmp_path / "s",
        settings=settings,
    )
    h = r.summary.headline
    assert (h.metric, h.cluster) == ("accuracy", "scenario")
    assert h.value == pytest.approx(_overall(r.summary, "accuracy").value)
    # Three epochs of one scenario are one cluster: the interval says nothing is known.
    assert h.clusters == 1 and h.interval.method == "cluster-robust"


def test_a_benchmark_headline_is_its_first_judge_over_its_questions(tmp_path: Path, server):
    settings = RunSettings(llm=resolve_settings(server.base_url, server.model))
    r = mnemometer.run(
        "longmemeval",
        "bm25",
        suite_options={"dataset": str(MINI), "judges": ["longmemeval", "strict"]},
        out=tmp_path / "l",
        settings=settings,
    )
    h = r.summary.headline
    assert h.metric == "judge:longmemeval" and h.binary
    assert h.value == _overall(r.summary, "accuracy:longmemeval").value
    assert h.interval == _overall(r.summary, "accuracy:longmemeval").interval
    judges = [s for s in read_header(r.path).scoring.scorers if s.name == "judge"]
    assert [j.args["judge"] for j in judges] == ["longmemeval", "strict"]
    assert {j.args["model"] for j in judges} == {server.model}  # where each judge asks
    assert {j.args["base_url"] for j in judges} == {server.base_url}


def test_locomo_headline_leaves_category_5_out(tmp_path: Path, server):
    data = seed_file("locomo", "locomo10.json")
    settings = RunSettings(llm=resolve_settings(server.base_url, server.model))
    r = mnemometer.run(
        "locomo",
        "bm25",
        suite_options={"dataset": str(data), "questions": 60, "categories": ["2", "5"]},
        out=tmp_path / "lc",
        settings=settings,
    )
    h = r.summary.headline
    assert h.metric == "f1" and h.exclude == {"category": ["adversarial"]}
    items = read_items(r.path)
    adversarial = sum(i.groups["category"] == "adversarial" for i in items)
    assert adversarial > 0 and h.n == len(items) - adversarial
    assert h.value == pytest.approx(_overall(r.summary, "f1").value)


def _item(**kw) -> ItemResult:
    return ItemResult(item_id="q", index=0, **kw)


def test_an_items_headline_value_counts_failures_and_skips_what_is_out_of_scope():
    spec = HeadlineSpec(
        metric="judge:strict", label="acc", exclude={"category": ["adversarial"]}, binary=True
    )
    judged = [Metric(name="judge:strict", value=1.0)]
    assert item_value(_item(metrics=judged), spec) == 1.0
    assert item_value(_item(status="error"), spec) == 0.0  # a failure counts, as 0
    assert item_value(_item(metrics=judged, groups={"category": "adversarial"}), spec) is None
    unread = [Metric(name="judge:strict", value=None)]
    asked = {"judges": {"strict": {"correct": None, "raw": "??"}}}
    # The judge failed, not the system: left out (counted apart, asked again on resume).
    assert item_value(_item(metrics=unread, extra=asked), spec) is None
    assert item_value(_item(metrics=unread), spec) is None  # never asked


def test_a_summary_is_rebuilt_from_the_run_directory_without_its_suite(tmp_path: Path):
    r = mnemometer.run("retrieval", "keyword", dataset="demo-en", out=tmp_path / "r")
    before = (r.path / "summary.json").read_text()
    (r.path / "summary.json").unlink()
    SUITES._extra["retrieval"] = _broken  # the suite cannot even be built now
    try:
        assert resummarize(r.path).headline == r.summary.headline
    finally:
        del SUITES._extra["retrieval"]
    assert json.loads((r.path / "summary.json").read_text()) == json.loads(before)


def _broken(**kw):
    raise AssertionError("the summary needs no suite")


def test_every_scorer_is_registered_and_listed():
    names = scorer_names()
    for name in ("ranking", "answer", "judge", "retrieval", "memtest", "scenarios", "items"):
        assert name in names
    r = invoke_cli("list", "scorers")
    assert r.exit_code == 0 and "judge" in r.output and "benchmark" in r.output


def test_a_run_from_before_headlines_reads_with_its_success_and_says_so(tmp_path: Path):
    v1 = REPO / "tests" / "data" / "runlogs" / "v1" / "retrieval-bm25"
    log = read_log(v1)
    assert log.header.scoring is None
    from mnemometer.scoring.headline import spec_of

    assert spec_of(log.header).metric == "success"
