"""The benchmark suites on the runner's contracts (--limit, deadlines, progress by phase,
reports from summary.json alone) and the properties their numbers rest on: LoCoMo's
category codes, intervals clustered by conversation, readers that know nothing."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import threading
from collections import Counter

import numpy as np
import pytest
from benchmark_helpers import MINI, metric, run_longmemeval
from conftest import seed_file

import mnemometer
from mnemometer.datasets import LOCOMO_CATEGORIES
from mnemometer.llm import resolve_settings
from mnemometer.log import read_header, read_items
from mnemometer.report import report
from mnemometer.runner import RunSettings
from mnemometer.scoring import qa
from mnemometer.scoring.benchmark import Answer
from mnemometer.scoring.intervals import interval
from mnemometer.suites.benchmarks.locomo import LocomoSuite
from mnemometer.testing import FakeLLMServer
from mnemometer.testing._bench import benchmark_reply, is_judge_request


def _locomo_path() -> str:
    return str(seed_file("locomo", "locomo10.json"))


def test_locomo_questions_carry_the_official_category_of_their_raw_code():
    raw = [q for s in json.loads(open(_locomo_path()).read()) for q in s["qa"]]
    suite = LocomoSuite(dataset=_locomo_path())
    qs = suite.dataset().queries
    assert len(qs) == len(raw) == 1986
    for r, q in zip(raw, qs, strict=True):
        assert q.text == r["question"]
        assert q.metadata["category"] == r["category"]
        assert q.type == LOCOMO_CATEGORIES[r["category"]]
    # Selection by word and by code is the same set; the table lists them in code order.
    by_word = LocomoSuite(dataset=_locomo_path(), categories=["temporal"])
    by_code = LocomoSuite(dataset=_locomo_path(), categories=["2"])
    temporal = [q.id for q in by_word.selected(by_word.dataset())]
    assert temporal == [q.id for q in by_code.selected(by_code.dataset())]
    assert len(temporal) == Counter(r["category"] for r in raw)[2] == 321
    shuffled = ["single-hop", "adversarial", "temporal", "multi-hop", "open-domain"]
    order = suite.summary_scorer().order(shuffled)
    assert order == [LOCOMO_CATEGORIES[c] for c in (1, 2, 3, 4, 5)]


def test_each_benchmark_suite_is_named_after_its_file_format():
    # A file of another benchmark's format is refused naming the suite to run: the format's.
    from mnemometer._registry import SUITES
    from mnemometer.suites.benchmarks import BenchmarkSuite
    from mnemometer.suites.benchmarks._suite import _BENCHMARK_FORMATS

    suites = [SUITES.load(n) for n in SUITES.names()]
    suites = [s for s in suites if isinstance(s, type) and issubclass(s, BenchmarkSuite)]
    assert {s.reader_format for s in suites} == _BENCHMARK_FORMATS
    assert all(s.name == s.reader_format for s in suites)


def test_each_category_is_scored_by_its_own_official_rule():
    suite = LocomoSuite(dataset=_locomo_path())
    qs = suite.dataset().queries
    answer = Answer("locomo")  # the scorer the suite names, on a question's record

    def first(code, pred=lambda q: True):
        return next(q for q in qs if q.metadata["category"] == code and pred(q))

    def scores(q, hypothesis):
        facts = suite.facts(q)
        return answer.score({"output": hypothesis, "extra": {"gold": q.answer, **facts}})

    def f1(q, hypothesis):
        return next(m["value"] for m in scores(q, hypothesis) if m["name"] == "f1")

    # Category 3: the gold answer up to its first ';'.
    open_domain = first(3, lambda q: ";" in q.answer)
    head = open_domain.answer.split(";")[0]
    assert f1(open_domain, head) == 1.0
    # Category 1: each comma-separated gold piece takes its best predicted piece.
    multi = first(1, lambda q: "," in q.answer)
    pieces = [p.strip() for p in multi.answer.split(",")]
    assert f1(multi, ", ".join(reversed(pieces))) == 1.0
    assert f1(multi, pieces[0]) == pytest.approx(qa.locomo_f1(pieces[0], multi.answer, 1))
    # Category 5: no F1, the 'not mentioned' rule.
    adversarial = first(5)
    assert scores(adversarial, "Not mentioned in the conversation.") == [
        {"name": "adversarial", "value": 1.0}
    ]
    # Categories 2 and 4: plain token F1 of the whole answer.
    for code in (2, 4):
        q = first(code)
        assert f1(q, q.answer) == 1.0 and f1(q, "banana") == 0.0


def test_intervals_widen_when_questions_cluster_in_conversations():
    # Ten conversations of 20 questions each, wholly right or wholly wrong: 200 questions
    # that carry the information of 10. The clustered interval must say so.
    values = [float(c % 2) for c in range(10) for _ in range(20)]
    clustered = interval(values, [f"c{c}" for c in range(10) for _ in range(20)], binary=True)
    naive = interval(values, [f"q{i}" for i in range(200)], binary=True)
    assert clustered.method == "cluster-robust" and naive.method == "wilson"
    assert (clustered.high - clustered.low) > 3 * (naive.high - naive.low)
    # Independent questions within conversations: close to the naive interval.
    mixed = [float(i % 2) for i in range(200)]
    iid = interval(mixed, [f"c{i // 20}" for i in range(200)], binary=True)
    assert (iid.high - iid.low) < 1.5 * (naive.high - naive.low)


def test_a_summary_interval_claims_exactly_what_compare_claims():
    """Below five clusters ``compare`` makes no claim; neither may a summary's interval."""
    from mnemometer.stats import MIN_CLUSTERS, cluster_robust_test

    rng = np.random.default_rng(3)
    for g in (2, MIN_CLUSTERS - 1, MIN_CLUSTERS, 9):
        labels = [f"c{c}" for c in range(g) for _ in range(3 + c)]
        values = [float(v) for v in rng.integers(0, 2, size=len(labels))]
        iv = interval(values, labels, binary=True)
        if g < MIN_CLUSTERS:
            assert (iv.low, iv.high, iv.method) == (0.0, 1.0, "cluster-robust")
        else:  # the CR2 interval compare uses, clipped to [0, 1]
            cr2 = cluster_robust_test(values, labels, bounds=(0.0, 1.0)).interval
            assert (iv.low, iv.high) == pytest.approx((cr2.low, cr2.high))


@pytest.fixture
def idk_server():
    """A reader that answers "I don't know." to everything; the deterministic judges."""
    with FakeLLMServer(rules=[(is_judge_request, benchmark_reply)], default="I don't know.") as s:
        yield s


def _settings(srv, **kw) -> RunSettings:
    return RunSettings(llm=resolve_settings(srv.base_url, srv.model), **kw)


def test_a_reader_that_knows_nothing_scores_nothing(idk_server, tmp_path):
    res = mnemometer.run(
        "locomo",
        "bm25",
        suite_options={
            "dataset": _locomo_path(),
            "questions": 199,
            "judges": ["lenient", "strict", "longmemeval"],
        },
        out=tmp_path / "r",
        settings=_settings(idk_server),
    )
    s = res.summary
    assert metric(s, "f1") == 0.0 and metric(s, "bleu1") == 0.0
    for judge in ("lenient", "strict", "longmemeval"):
        assert metric(s, f"accuracy:{judge}") == 0.0
    assert s.sections["f1"]["categories_1_4"]["value"] == 0.0
    # bm25 still found the evidence: the reader, not the memory, is what failed.
    assert metric(s, "evidence_recall") > 0.3
    # LongMemEval: "I don't know" is right only on the abstention question (1 of 4).
    lme = run_longmemeval(_settings(idk_server), tmp_path / "l")
    assert metric(lme.summary, "accuracy:longmemeval") == 0.25
    (ok,) = [r for r in read_items(lme.path) if r.success]
    assert ok.step.endswith("_abs")


def test_limit_counts_conversations_and_progress_goes_by_phase(tmp_path):
    calls: list[tuple[str, int, int | None]] = []
    with FakeLLMServer(default=benchmark_reply) as srv:
        res = mnemometer.run(
            "locomo",
            "bm25",
            suite_options={"dataset": _locomo_path(), "categories": ["temporal"]},
            out=tmp_path / "r",
            settings=_settings(srv, progress=lambda *a: calls.append(a)),
            limit=2,
        )
    rows = read_items(res.path)
    assert read_header(res.path).limit == 2
    assert [it for it in dict.fromkeys(r.item_id for r in rows)] == ["conv-26", "conv-30"]
    last = {phase: (done, total) for phase, done, total in calls}
    assert last["ingest"] == (2, 2) and last["items"] == (2, 2)
    assert last["questions"] == (len(rows), len(rows)) and len(rows) > 10
    assert [d for p, d, _ in calls if p == "questions"] == list(range(len(rows) + 1))
    assert res.summary.counts["questions"] == len(rows)


def _join_workers() -> None:
    from mnemometer.runner._pool import _Worker

    for t in threading.enumerate():
        if isinstance(t, _Worker):
            t.join(timeout=30)


def test_a_conversation_out_of_time_stops_and_fails_each_question(tmp_path):
    release = threading.Event()

    def slow_reader(body):
        release.wait(0.5)  # longer than the item's whole budget
        return "Caroline."

    with FakeLLMServer(default=slow_reader) as srv:
        res = mnemometer.run(
            "locomo",
            "bm25",
            suite_options={"dataset": _locomo_path(), "questions": 6},
            out=tmp_path / "r",
            # 0.03 s per call x (6 questions + 1) = 0.21 s for the conversation
            settings=_settings(srv, timeout=0.03),
        )
        _join_workers()
        asked = len(srv.chat_requests())
    (row,) = read_items(res.path)
    assert row.status == "timeout" and len(row.extra["questions"]) == 6
    assert res.summary.counts["questions"] == 6  # never a lost question
    assert metric(res.summary, "f1") == 0.0
    # Without deadlines the abandoned conversation went on asking all 6 questions.
    assert asked <= 2, f"{asked} reader calls after the conversation timed out"


def test_a_report_needs_only_the_run_directory(tmp_path):
    data = tmp_path / "mini.json"
    shutil.copy(MINI, data)
    with FakeLLMServer(default=benchmark_reply) as srv:
        res = mnemometer.run(
            "longmemeval",
            "bm25",
            suite_options={"dataset": str(data), "judges": ["longmemeval", "lenient"]},
            out=tmp_path / "r",
            settings=_settings(srv),
        )
    data.unlink()  # the benchmark file is gone; the run directory is all there is
    text = report(res.path, "text")
    doc = json.loads(report(res.path, "json"))
    assert "Judge agreement" in text and "Accuracy under each judge" in text
    names = {t["name"] for t in doc["summary"]["tables"]}
    assert {"categories", "judge_agreement", "judge_sensitivity"} <= names
    (by_type,) = [t for t in doc["summary"]["tables"] if t["name"] == "categories"]
    assert by_type["columns"][0] == "type" and len(by_type["rows"]) == 3


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_test_server_command_judges_by_its_rules_not_its_schema_mode():
    import httpx

    port = _free_port()
    cmd = [sys.executable, "-m", "mnemometer.testing", "--port", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        assert "serving" in proc.stdout.readline()
        schema = {
            "type": "object",
            "properties": {"label": {"type": "string", "enum": ["CORRECT", "WRONG"]}},
            "required": ["label"],
        }
        prompt = "Question: Q?\nGold answer: {}\nGenerated answer: {}\nBe generous."

        def verdict(gold, answer):
            body = {
                "model": "fake-llm",
                "messages": [{"role": "user", "content": prompt.format(gold, answer)}],
                "response_format": {"type": "json_schema", "json_schema": {"schema": schema}},
            }
            url = f"http://127.0.0.1:{port}/v1/chat/completions"
            reply = httpx.post(url, json=body, timeout=120).json()  # first call imports NLTK
            return json.loads(reply["choices"][0]["message"]["content"])["label"]

        assert verdict("Paris", "I don't know") == "WRONG"
        assert verdict("Paris", "It was Paris") == "CORRECT"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_compare_pairs_two_systems_by_question_and_clusters_by_conversation(tmp_path):
    from mnemometer.comparison import compare

    opts = {"dataset": _locomo_path(), "categories": ["single-hop"], "judges": ["lenient"]}
    with FakeLLMServer(default=benchmark_reply) as srv:
        runs = [
            mnemometer.run(
                "locomo",
                system,
                suite_options=opts,
                out=tmp_path / name,
                settings=_settings(srv),
                limit=3,
            )
            for name, system in (("none", "none"), ("bm25", "bm25"))
        ]
    c = compare([runs[0].path], [runs[1].path])
    questions = len(read_items(runs[1].path))
    assert c.pairs == questions and c.clusters == 3
    acc = next(m for m in c.metrics if m.name == "judge:lenient")
    assert acc.pairs == questions and acc.mean_delta > 0.3  # memory beats no memory
