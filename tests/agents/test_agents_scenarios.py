"""Agents and the scenarios suite end to end, against the deterministic LLM server over HTTP."""

from __future__ import annotations

import csv
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner

from mnemometer import RunSettings, SystemSpec
from mnemometer.agents import create_agent_factory
from mnemometer.cli.main import cli
from mnemometer.llm import LLMSettings
from mnemometer.log import read_header, read_items
from mnemometer.runner import run
from mnemometer.testing import FakeLLMServer
from mnemometer.testing.llm_server import echo_memories


@pytest.fixture
def llm():
    with FakeLLMServer(default=echo_memories) as srv:
        yield srv


def settings(srv):
    return LLMSettings(srv.base_url, srv.model)


def invoke(*args, env=None):
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def test_rag_session_break_drops_history_but_keeps_memory(llm, tmp_path):
    factory = create_agent_factory("rag", {"store": "bm25"}, llm=settings(llm), workdir=tmp_path)
    agent = factory.create("t1")
    agent.start_session(None)
    agent.send("My name is Darrin Smith and I live in Phoenix.")
    agent.send("I prefer Marriott over Hilton.")
    agent.start_session("Be formal.")
    reply = agent.send("What is my name and city?")
    assert "Darrin Smith" in reply.text and reply.memory_ms is not None and reply.llm_ms > 0
    last = llm.chat_requests()[-1]["messages"]
    # a new session: only the system prompt and this message, no earlier exchanges
    assert [m["role"] for m in last] == ["system", "user"]
    assert last[0]["content"].endswith("Be formal.")
    assert "Darrin" not in json.dumps(last[0])  # recall came from memory, not history
    other = factory.create("t2")  # a second agent never sees the first one's memories
    other.start_session(None)
    assert other.send("What is my name and city?").text == "Noted."


def test_prompts_never_contain_expected_answers(llm, tmp_path):
    run(
        "scenarios",
        SystemSpec.agent("rag").options_with_store("bm25", None),
        out=tmp_path / "r",
        suite_options={
            "similarity": "none",
            "scenarios": ["task_continuity", "conditional_memory_updates"],
        },
        settings=RunSettings(llm=settings(llm)),
    )
    from mnemometer.agents import SYSTEM_PROMPT

    sent = json.dumps(llm.chat_requests())
    for phrase in ("Select Pilot Full", "Gold Bronze", "Darrin Phoenix"):  # the seed's leaks
        assert phrase not in sent
    for body in llm.chat_requests():
        assert body["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}


def test_run_all_thirteen_writes_log_csv_and_records_options(llm, tmp_path):
    out = tmp_path / "run"
    r = run(
        "scenarios",
        SystemSpec.agent("rag").options_with_store("bm25", None),
        out=out,
        suite_options={"similarity": "none", "rescue_threshold": 0.7},
        settings=RunSettings(concurrency=4, llm=settings(llm)),
    )
    h = read_header(out)
    assert h.system.kind == "agent" and h.system.name == "rag"
    assert h.suite_options["rescue_threshold"] == 0.7
    assert h.system.options["resolved"]["llm"]["model"] == "fake-llm"
    items = read_items(out)
    assert len(items) == 13 and all(i.status == "ok" for i in items)
    assert r.summary.counts["graded_turns"] == 22
    # the echo reader recalls across the session break: keywords present, but verbose
    csr = next(i for i in items if i.item_id == "cross_session_recall")
    assert csr.extra["turns"][-1]["grade"]["score"] == 0.5
    # isolation under concurrency: no scenario's prompts mention another's facts
    for i in items:
        if i.item_id != "memory_scalability":
            assert not any("john@example.com" in (t.get("reply") or "") for t in i.extra["turns"])
    rows = list(csv.reader(open(out / "scenarios.csv")))
    assert rows[0] == ["backend", "scenario", "mean_latency_ms", "accuracy", "mean_similarity"]
    assert len(rows) == 15 and rows[-1][:2] == ["rag:bm25", "AVERAGE"]
    keys = {m.key for m in r.summary.overall}
    assert {"memory_latency.p95", "llm_latency.p50", "tokens_per_turn"} <= keys


def test_noise_is_seeded_recorded_and_epochs_give_ci(llm, tmp_path):
    def inputs(out, **opts):
        run(
            "scenarios",
            SystemSpec.agent("rag").options_with_store("bm25", None),
            out=out,
            suite_options={
                "similarity": "none",
                "scenarios": ["temporal_conflict_resolution"],
                **opts,
            },
            settings=RunSettings(llm=settings(llm)),
        )
        return {i.item_id: [t["input"] for t in i.extra["turns"]] for i in read_items(out)}

    a = inputs(tmp_path / "a", noise=[0.0, 0.5], epochs=2)
    b = inputs(tmp_path / "b", noise=[0.0, 0.5], epochs=2)
    assert a == b and len(a) == 4
    clean = a["temporal_conflict_resolution@noise=0#0"]
    noisy = a["temporal_conflict_resolution@noise=0.5#0"]
    assert clean[0] == "I work at Microsoft." and noisy != clean
    assert a["temporal_conflict_resolution@noise=0.5#1"] != noisy  # each epoch its own noise
    h = read_header(tmp_path / "a")
    assert h.suite_options["noise"] == [0.0, 0.5] and h.suite_options["epochs"] == 2
    from mnemometer.runner import summarize

    s = summarize(tmp_path / "a")
    assert [r["noise"] for r in s.table("accuracy_vs_noise").data] == [0.0, 0.5]
    row = s.table("scenarios").data[0]
    assert row["n"] == 2 and row["ci_low"] is not None


class Boom:
    """An agent factory whose agents raise on the third message."""

    def __init__(self, llm=None, workdir=None):
        pass

    def create(self, namespace):
        return BoomAgent()

    def close(self):
        pass


class BoomAgent:
    def __init__(self):
        self.n = 0

    def start_session(self, system=None):
        pass

    def send(self, message):
        from mnemometer.agents import Reply

        self.n += 1
        if self.n == 3:
            raise ConnectionError("agent went away")
        return Reply("Amazon")

    def close(self):
        pass


def test_agent_raising_mid_scenario_is_a_counted_failure(tmp_path):
    from mnemometer._registry import AGENTS

    AGENTS.register("boom", Boom)
    try:
        res = invoke(
            "run",
            "scenarios",
            "--agent",
            "boom",
            "--out",
            str(tmp_path / "r"),
            "-O",
            "similarity=none",
            "--scenario",
            "memory_editing_governance",
            "--scenario",
            "temporal_conflict_resolution",
            "--format",
            "none",
        )
    finally:
        AGENTS.unregister("boom")
    assert res.exit_code == 1
    items = {i.item_id: i for i in read_items(tmp_path / "r")}
    gov = items["memory_editing_governance"]
    assert gov.status == "error" and "agent went away" in gov.error
    assert gov.extra["turns"][-1]["grade"]["reason"] == "error"
    assert next(m.value for m in gov.metrics if m.name == "accuracy") == 0.0
    temporal = items["temporal_conflict_resolution"]  # the 4th turn still ran and was graded
    assert temporal.status == "error" and temporal.extra["turns"][-1]["grade"]["score"] == 1.0


def test_cli_end_to_end_and_resume(llm, tmp_path):
    out = tmp_path / "cli"
    res = invoke(
        "run",
        "scenarios",
        "--agent",
        "rag",
        "--store",
        "bm25",
        "--llm-base-url",
        llm.base_url,
        "--llm-model",
        llm.model,
        "--noise",
        "0.25",
        "--repeat",
        "1",
        "-O",
        "similarity=none",
        "--scenario",
        "degradation_resilience",
        "--llm-timeout",
        "7",
        "--out",
        str(out),
        "--format",
        "none",
    )
    assert res.exit_code == 0, res.output
    h = read_header(out)
    assert "'timeout': 7.0" in repr(h.system)  # the LLM's per-request timeout, recorded
    assert h.suite_options["noise"] == [0.25] and h.system.options["store"] == "bm25"
    assert (out / "scenarios.csv").is_file()
    md = invoke("report", str(out), "--format", "md").output
    assert "### Accuracy by scenario" in md and "| degradation_resilience | 0.25 | 1 |" in md
    assert "### Accuracy against noise" in md
    res = invoke(
        "run",
        "--resume",
        str(out),
        "--llm-base-url",
        llm.base_url,
        "--llm-model",
        llm.model,
        "--format",
        "none",
    )
    assert res.exit_code == 0, res.output
    assert read_header(out).resumes == 1 and len(read_items(out)) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m"], "cannot reach the LLM"),
        (["--llm-model", "gpt-9"], "is not served by"),
        (["--llm-api-key", "wrong"], "API key was rejected"),
        (["--agent-option", "topk=3"], "no option 'topk'"),
        (["--store", "bm26"], "unknown store 'bm26'"),
        (["--scenario", "nope"], "unknown scenario 'nope'"),
        (["--noise", "2"], "--noise must be in"),
    ],
)
def test_cli_bad_input_exits_2_before_the_run(tmp_path, args, message, monkeypatch):
    monkeypatch.setenv("MNEMOMETER_LLM_STARTUP_WAIT", "0")  # no server is starting up
    with FakeLLMServer(api_key="sk-right") as srv:
        base = ["run", "scenarios", "--agent", "rag", "--store", "bm25"]
        base += ["--llm-base-url", srv.base_url, "--llm-model", srv.model]
        base += ["--llm-api-key", "sk-right", "--out", str(tmp_path / "r")]
        res = CliRunner().invoke(cli, [*base, *args, "-O", "similarity=none"])
    from mnemometer.errors import MnemometerError

    assert isinstance(res.exception, MnemometerError), res.output
    assert message in str(res.exception)
    assert not srv.chat_requests()  # nothing ran


def test_main_prints_one_line_and_exit_2(tmp_path):
    import subprocess
    import sys

    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "x.jsonl").write_text(
        '{"scenario": "x"}\n{"role": "user", "content": "hi", '
        '"grade": {"expected": "a", "max_words": 0}}\n'
    )
    from pathlib import Path

    exe = str(Path(sys.executable).parent / "mnemometer")
    args = ["run", "scenarios", "--agent", "rag", "-O", f"path={bad}"]
    args += ["--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m"]
    p = subprocess.run(
        [exe, *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2
    assert re.search(r"^error: .*x\.jsonl:2: invalid turn: grade\.max_words", p.stderr, re.M)
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty scenario file"),
        ("{bad json\n", "x.jsonl:1:2: malformed JSON"),
        ('{"scenario": "Bad Id"}\n', "x.jsonl:1: invalid header: scenario"),
        ('{"scenario": "x"}\n{"role": "user", "content": "hi"}\n', "has no graded turn"),
        ('{"scenario": "x"}\n{"role": "bot", "content": "hi"}\n', "x.jsonl:2: invalid turn: role"),
        ('{"scenario": "x"}\n{"session": "old"}\n', "x.jsonl:2: invalid turn: session"),
        (
            '{"scenario": "x"}\n{"role": "user", "content": "q", "grade": {"expected": "a", '
            '"requird": ["a"]}}\n',
            "x.jsonl:2: invalid turn: grade.requird",
        ),
    ],
)
def test_malformed_scenario_files(tmp_path, text, message):
    from mnemometer.suites.scenarios import ScenarioError, load_scenario

    f = tmp_path / "x.jsonl"
    f.write_text(text)
    with pytest.raises(ScenarioError, match=re.escape(message)):
        load_scenario(f)


class MemoryService(BaseHTTPRequestHandler):
    """A tiny real agent service: remembers per user, answers with what it remembers."""

    store: dict = {}

    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path == "/sessions":
            out = {"session_id": f"s-{len(self.store)}"}
        else:
            facts = self.store.setdefault(body["user_id"], [])
            hits = [
                f for f in facts if set(f.lower().split()) & set(body["message"].lower().split())
            ]
            facts.append(body["message"])
            out = {
                "reply": " ".join(hits) or "ok",
                "usage": {"prompt_tokens": 3, "completion_tokens": 1},
            }
        data = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_http_agent(tmp_path):
    srv = ThreadingHTTPServer(("127.0.0.1", 0), MemoryService)
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    cfg = tmp_path / "agent.toml"
    cfg.write_text(f'[agent]\nbase_url = "http://127.0.0.1:{srv.server_address[1]}"\n')
    try:
        res = invoke(
            "run",
            "scenarios",
            "--agent",
            "http",
            "--config",
            str(cfg),
            "-O",
            "similarity=none",
            "--scenario",
            "temporal_conflict_resolution_office",
            "--out",
            str(tmp_path / "r"),
            "--format",
            "none",
        )
    finally:
        srv.shutdown()
    assert res.exit_code == 0, res.output
    (item,) = read_items(tmp_path / "r")
    assert item.tokens == {"prompt": 9, "completion": 3}  # three user turns
    assert "Austin" in item.extra["turns"][-1]["reply"]
    bad = tmp_path / "bad.toml"
    bad.write_text('[agent]\nbase_url = "http://x"\nmessage = "SEND /x"\n')
    res = CliRunner().invoke(cli, ["run", "scenarios", "--agent", "http", "--config", str(bad)])
    assert "bad.toml: [agent] message" in str(res.exception)


def test_list_agents():
    out = invoke("list", "agents").output
    assert [ln.split()[0] for ln in out.splitlines()] == ["http", "letta", "mem0", "rag"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["run", "retrieval", "-d", "demo-en", "--letta-url", "http://x"],
            "--letta-url needs --agent",
        ),
        (
            ["run", "retrieval", "-d", "demo-en", "-s", "bm25", "--noise", "0.5"],
            "--noise applies to scenarios; 'retrieval' is not one",
        ),
        (
            [
                "run",
                "retrieval",
                "--agent",
                "rag",
                "--llm-base-url",
                "http://127.0.0.1:9/v1",
                "--llm-model",
                "m",
            ],
            "drives stores: pass --store NAME, not --agent",
        ),
        (
            [
                "run",
                "scenarios",
                "--agent",
                "mem0",
                "--store",
                "bm25",
                "--llm-base-url",
                "http://127.0.0.1:9/v1",
                "--llm-model",
                "m",
            ],
            "has its own memory",
        ),
        (["run", "scenarios", "--agent", "rag"], "no LLM endpoint: pass --llm-base-url"),
        (["run", "scenarios", "--agent", "nope"], "unknown agent 'nope'"),
    ],
)
def test_agent_flags_bad_input(args, message, tmp_path):
    from mnemometer.errors import MnemometerError

    unset = {"MNEMOMETER_LLM_BASE_URL": None, "MNEMOMETER_LLM_MODEL": None}
    res = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "r")], env=unset)
    assert isinstance(res.exception, MnemometerError), res.output
    assert message in str(res.exception)
