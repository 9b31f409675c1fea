"""The long-conversation benchmarks end to end: real bm25, the real test LLM server on
127.0.0.1 as reader and judge, LoCoMo from the seed data, kill and resume, adversaries, bad
input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from benchmark_helpers import MINI, llm_flags, locomo_argv, metric, run_longmemeval
from conftest import MNEMOMETER, invoke_cli, seed_file

import mnemometer
from mnemometer.errors import MnemometerError
from mnemometer.llm import resolve_settings
from mnemometer.log import read_log
from mnemometer.runner import RunSettings
from mnemometer.testing import FakeLLMServer
from mnemometer.testing._bench import benchmark_reply


@pytest.fixture
def server():
    with FakeLLMServer(default=benchmark_reply) as srv:
        yield srv


def _settings(srv, **kw) -> RunSettings:
    return RunSettings(llm=resolve_settings(srv.base_url, srv.model, **kw))


def _judge_requests(srv) -> list[dict]:
    return [b for b in srv.chat_requests() if b.get("response_format")]


def _locomo(srv, out, system="bm25", **options):
    opts = {"dataset": str(seed_file("locomo", "locomo10.json")), **options}
    return mnemometer.run("locomo", system, suite_options=opts, out=out, settings=_settings(srv))


def test_locomo_end_to_end_pins_judges_and_keeps_every_question(server, tmp_path):
    res = _locomo(server, tmp_path / "r", judges=["lenient", "strict"], questions=40)
    log = read_log(res.path)
    h = log.header
    judges = {j["name"]: j["prompt_sha256"] for j in h.suite_options["judges"]}
    from mnemometer.scoring.judges import builtin_judges

    assert judges == {n: builtin_judges()[n].prompt_hash for n in ("lenient", "strict")}
    assert h.suite_options["reader_sha256"] == mnemometer.suites.benchmarks.READER_SHA256
    pins = json.loads((res.path / "pins.json").read_text())
    assert (
        pins["judges"][0]["model"] == "fake-llm"
        and "generous" in pins["judges"][0]["prompts"]["default"]
    )
    assert pins["reader"]["prompt"] == mnemometer.suites.benchmarks.READER_PROMPT
    rows = log.items
    assert len(rows) == 40 and all(r.item_id == "conv-26" and r.step for r in rows)
    assert [r.step for r in rows] == [f"conv-26/q{n:03d}" for n in range(1, 41)]
    for r in rows:
        assert r.groups["conversation"] == "conv-26" and r.output
        if r.groups["category"] != "adversarial":
            raw = r.extra["judges"]["lenient"]["raw"]
            assert json.loads(raw)["label"] in ("CORRECT", "WRONG")
    s = res.summary
    keys = {m.name for m in s.overall}
    assert {"accuracy:lenient", "accuracy:strict", "f1", "bleu1", "evidence_recall"} <= keys
    f1 = s.sections["f1"]
    assert f1["categories_1_4"]["n"] + (f1["category_5"] or {"n": 0})["n"] == 40
    assert {t.name for t in s.tables} >= {"categories", "judge_agreement", "judge_sensitivity"}
    assert s.counts["questions"] == 40
    rec = next(m for m in s.overall if m.name == "recall_any" and m.k == 10)
    assert 0.3 < rec.value <= 1.0  # bm25 finds evidence on LoCoMo


def test_cluster_robust_intervals_over_conversations(server, tmp_path):
    res = _locomo(server, tmp_path / "r", questions=260)  # conv-26 (199) and part of conv-30
    f1 = next(m for m in res.summary.overall if m.name == "f1")
    assert f1.interval is not None and f1.interval.method == "cluster-robust"
    assert {r.item_id for r in read_log(res.path).items} == {"conv-26", "conv-30"}


def _wait_for(path: Path, pred, timeout=60.0) -> None:
    t0 = time.time()
    while time.time() - t0 < timeout:
        if path.exists() and pred(path.read_text()):
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {path}")


@pytest.mark.slow
def test_kill_and_resume_redoes_nothing_and_matches_an_uninterrupted_run(tmp_path):
    def slow_judge(body):
        if body.get("response_format"):
            time.sleep(0.01)  # so the kill lands while the second conversation runs
        return benchmark_reply(body)

    with FakeLLMServer(default=slow_judge) as srv:
        args = [MNEMOMETER, *locomo_argv(srv, 260, "strict", "--format", "none")]
        killed = tmp_path / "killed"
        proc = subprocess.Popen([*args, "--out", str(killed)], stderr=subprocess.DEVNULL)
        _wait_for(killed / "items.jsonl", lambda t: t.count("\n") >= 199)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert json.loads((killed / "header.json").read_text())["status"] == "running"
        done = {
            json.loads(line)["step"] for line in (killed / "items.jsonl").read_text().splitlines()
        }
        assert len(done) == 199  # conv-26 finished; conv-30 was in flight
        before = len(srv.chat_requests())
        r = subprocess.run(
            [MNEMOMETER, "run", "--resume", str(killed), *llm_flags(srv), "--format", "none"],
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, r.stderr
        after = srv.chat_requests()[before:]
        asked = "\n".join(m["content"] for b in after for m in b["messages"])
        finished_questions = [
            json.loads(x)["input"] for x in (killed / "items.jsonl").read_text().splitlines()[:199]
        ]
        judged_again = [q for q in finished_questions if f"Question: {q}\n" in asked]
        assert not judged_again  # no judge (nor reader) call for a finished conversation
        earlier = {json.dumps(b, sort_keys=True) for b in srv.chat_requests()[:before]}
        repeated = [b for b in after if json.dumps(b, sort_keys=True) in earlier]
        assert len(repeated) <= 1  # at most the call in flight at the kill: the rest cached
        # the cache under the run directory answered conv-30's repeated calls too
        whole = tmp_path / "whole"
        subprocess.run([*args, "--out", str(whole)], check=True, capture_output=True)
    a, b = read_log(killed), read_log(whole)

    def key(log):
        return [
            (
                r.step,
                r.output,
                r.success,
                [(m.key, m.value) for m in r.metrics if "latency" not in m.name],
            )
            for r in log.items
        ]

    assert key(a) == key(b) and len(a.items) == 260
    assert a.header.resumes == 1


class NothingStore:
    """An adversary: keeps nothing."""

    def reset(self):
        pass

    def store(self, text, metadata):
        pass

    def search(self, query, top_k):
        return []


class _Agent:
    def __init__(self, mode):
        self.mode, self.seen = mode, []

    def start_session(self, system=None):
        pass

    def observe(self, text, metadata):
        self.seen.append(text.split("] ", 1)[1])

    def send(self, message):
        from mnemometer.agents._protocol import Reply

        if self.mode == "negate":
            return Reply("Not mentioned in the conversation.")
        return Reply("; ".join(self.seen))  # every candidate it ever saw

    def close(self):
        pass


class AdversaryAgents:
    """An agent factory whose agents list every candidate, or deny everything."""

    def __init__(self, mode):
        self.mode = mode

    def create(self, namespace):
        return _Agent(self.mode)

    def close(self):
        pass


def test_adversaries_cannot_score_high(server, tmp_path):
    opts = {"judges": ["strict", "lenient"], "questions": 199}
    empty = _locomo(server, tmp_path / "empty", NothingStore(), **opts).summary
    assert metric(empty, "f1") < 0.05 and metric(empty, "accuracy:strict") < 0.05
    assert metric(empty, "evidence_recall") == 0.0
    lister = _locomo(server, tmp_path / "lister", AdversaryAgents("list"), **opts).summary
    assert metric(lister, "f1") < 0.05 and metric(lister, "accuracy:strict") < 0.05
    # A list of every candidate once gamed the lenient ("same topic") judge (accuracy 0.5+);
    # the reader's cap now cuts the list, and the run says so.
    assert metric(lister, "answers_cut") > 0.9 and metric(lister, "accuracy:lenient") < 0.1
    assert any(n.startswith("VERBOSE ANSWERS") for n in lister.notes)
    denier = _locomo(server, tmp_path / "denier", AdversaryAgents("negate"), **opts).summary
    assert metric(denier, "adversarial") == 1.0  # category 5's rule is gamed ...
    assert (
        metric(denier, "f1") < 0.02 and metric(denier, "accuracy:strict") == 0.0
    )  # ... not the headline
    assert denier.sections["f1"]["categories_1_4"]["value"] < 0.02


def test_baselines_full_context_oracle_and_no_memory(server, tmp_path):
    res = {
        b: _locomo(
            server, tmp_path / b, "none", baseline=b, questions=30, reader_budget=2000
        ).summary
        for b in ("oracle", "no-memory", "full-context")
    }
    assert metric(res["oracle"], "evidence_recall") == 1.0
    assert metric(res["no-memory"], "evidence_recall") == 0.0
    assert metric(res["no-memory"], "f1") < 0.05 < metric(res["oracle"], "f1")
    ctx = metric(res["full-context"], "context_tokens")
    assert 1500 < ctx <= 2000  # the whole conversation cut to the stated budget


def test_bad_input_is_a_clear_message_or_a_counted_failure(server, tmp_path):
    with pytest.raises(
        MnemometerError,
        match=r"longmemeval_mini.json: a longmemeval file, not locomo; run `mnemometer run longmemeval",
    ):
        mnemometer.run(
            "locomo",
            "bm25",
            suite_options={"dataset": str(MINI)},
            out=tmp_path / "x",
            settings=_settings(server),
        )
    broken = tmp_path / "broken.json"
    sample = json.loads(seed_file("locomo", "locomo10.json").read_text())[0]
    del sample["sample_id"]
    broken.write_text(json.dumps([sample]))
    with pytest.raises(MnemometerError, match=r"broken.json: \[0\].sample_id: missing"):
        _locomo(server, tmp_path / "y", dataset=str(broken))
    # A judge reply that is not JSON, and a reader that times out: recorded, counted, kept.
    server.add_rule(
        lambda b: bool(b.get("response_format")) and "Melanie" in json.dumps(b), "CORRECT!!"
    )
    res = _locomo(server, tmp_path / "z", judges=["strict"], questions=12)
    rows = read_log(res.path).items
    bad = [
        r
        for r in rows
        if r.extra.get("judges", {}).get("strict", {}).get("correct") is None
        and r.groups["category"] != "adversarial"
    ]
    assert bad and all("not valid JSON" in r.extra["judges"]["strict"]["error"] for r in bad)
    assert all(
        r.extra["judges"]["strict"]["raw"] == "CORRECT!!" and r.success is False for r in bad
    )
    # The judge failed, not the system: left out of its accuracy, counted as an error (exit
    # 1), and asked again on resume once it answers.
    assert res.summary.counts["judge_errors"] == len(bad) and res.failed_items == len(bad)
    assert all(r.unscored == ["judge:strict"] for r in bad)
    judged = [r for r in rows if r.groups["category"] != "adversarial"]
    acc = next(m for m in res.summary.overall if m.name == "accuracy:strict")
    assert acc.n == len(judged) - len(bad)
    server.rules.clear()
    again = mnemometer.resume(res.path, settings=_settings(server))
    assert again.summary.counts["judge_errors"] == 0 and again.failed_items == 0
    fixed = {(r.item_id, r.step): r for r in read_log(res.path).items}
    for r in bad:
        verdict = fixed[(r.item_id, r.step)].extra["judges"]["strict"]
        assert verdict["correct"] is not None and verdict["attempt"] == 1
        assert fixed[(r.item_id, r.step)].unscored == []
    server.fail_next(1, kind="slow", delay=1.5)
    settings = _settings(server, timeout=0.5, max_retries=0)
    opts = {"dataset": str(seed_file("locomo", "locomo10.json")), "questions": 3}
    res = mnemometer.run(
        "locomo", "bm25", suite_options=opts, out=tmp_path / "t", settings=settings
    )
    rows = read_log(res.path).items
    assert len(rows) == 3 and rows[0].status == "timeout" and "timed out" in rows[0].error.lower()
    assert res.summary.counts["timeouts"] == 1


def test_cli_runs_locomo_and_exports_hypotheses(server, tmp_path):
    more = ("--category", "single-hop", "--out", tmp_path / "run", "--format", "json")
    r = invoke_cli(*locomo_argv(server, 8, "lenient", *more))
    assert r.exit_code == 0, r.output
    out = tmp_path / "h.jsonl"
    r = invoke_cli("export", tmp_path / "run", "--format", "hypotheses", "-o", out)
    assert r.exit_code == 0, r.output
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 8 and all(x["category"] == "single-hop" for x in rows)
    assert set(rows[0]) == {"question_id", "question", "hypothesis", "category"}


def test_longmemeval_file_runs_retrieval_and_qa_and_exports(server, tmp_path):
    res = run_longmemeval(_settings(server), tmp_path / "lme")
    log = read_log(res.path)
    assert [r.step for r in log.items] == ["mini_0001", "mini_0002", "mini_0003", "mini_0004_abs"]
    names = {m.name for m in res.summary.overall}
    assert {"recall_any", "session_recall_any", "ndcg_any", "accuracy:longmemeval"} <= names
    abs_row = log.items[-1]
    assert abs_row.expected == [] and not any(m.name == "recall_any" for m in abs_row.metrics)
    assert (
        "unanswerable"
        in [b for b in server.chat_requests() if "mini" in json.dumps(b) or True][-1]["messages"][
            0
        ]["content"]
    )
    out = tmp_path / "hyp.jsonl"
    assert mnemometer.report.export_run(res.path, out) == 4
    first = json.loads(out.read_text().splitlines()[0])
    assert first["question_id"] == "mini_0001" and "category" not in first and first["hypothesis"]


@pytest.mark.parametrize("which", ["core_memory_read.jsonl", "core_memory_update.jsonl"])
def test_letta_core_memory_sets_run(server, tmp_path, which):
    data = seed_file("letta-core-memory", which)
    judges = ["letta-rubric"] if "update" in which else []
    res = mnemometer.run(
        "letta-core-memory",
        "bm25",
        suite_options={"dataset": str(data), "judges": judges, "questions": 15},
        out=tmp_path / "l",
        settings=_settings(server),
    )
    rows = read_log(res.path).items
    assert len(rows) == 15 and all(r.status == "ok" for r in rows)
    if judges:
        pins = json.loads((res.path / "pins.json").read_text())
        assert "Gold target" in pins["judges"][0]["prompts"]["default"]
        assert all(r.extra["judges"]["letta-rubric"]["correct"] is not None for r in rows)
        # the update turn is the evidence; bm25 finds it among 11 facts
        assert metric(res.summary, "evidence_recall") > 0.5
    else:
        assert metric(res.summary, "contains") > 0.5


def test_an_agent_is_told_the_conversation_and_answers_for_itself(server, tmp_path):
    from mnemometer.systems import SystemSpec

    spec = SystemSpec.agent("rag", store="bm25")
    opts = {
        "dataset": str(seed_file("locomo", "locomo10.json")),
        "questions": 3,
        "judges": ["strict"],
    }
    res = mnemometer.run(
        "locomo", spec, suite_options=opts, out=tmp_path / "a", settings=_settings(server)
    )
    rows = read_log(res.path).items
    assert len(rows) == 3 and all(r.status == "ok" and r.output for r in rows)
    assert not any(m.name == "recall_any" for r in rows for m in r.metrics)  # a black box
    told = [b for b in server.chat_requests() if "My message: [" in json.dumps(b)]
    assert len(told) > 300  # each turn went in as a message, in a session per session
    assert rows[0].extra["ingest_ms"] > 0 and rows[0].extra["answer_ms"] > 0
