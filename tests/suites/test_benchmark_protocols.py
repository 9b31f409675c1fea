"""``--protocol`` end to end: real bm25, the test LLM server as reader and judge, LoCoMo's seed.

What a run records (the protocol's name and hash among the suite options, the protocol in
full in pins.json, the reader hash it implies) and what the reader is really asked (read
back from the server's request log): the protocol's prompt text, its top-k, its layout and
decoding. LoCoMo's and Zep's prompts are not shipped (their licences): they come from the
stand-in checkouts of tests/test_protocols.py, written in our own words.
"""

from __future__ import annotations

import json
import re

import pytest
from benchmark_helpers import MINI
from conftest import invoke_cli, seed_file
from test_protocols import locomo_checkout, zep_checkout

import mnemometer
from mnemometer.datasets import load_dataset
from mnemometer.errors import MnemometerError
from mnemometer.llm import resolve_settings
from mnemometer.log import read_log
from mnemometer.protocols import get_protocol
from mnemometer.runner import RunSettings
from mnemometer.suites.benchmarks import READER_SHA256, LocomoSuite
from mnemometer.suites.benchmarks import _layouts as L
from mnemometer.suites.benchmarks import _pipeline as P
from mnemometer.testing import FakeLLMServer
from mnemometer.testing._bench import benchmark_reply

MODELS = ("fake-llm", "gpt-4o-mini", "gpt-4o-2024-08-06")
"""The test reader, and the judge models the protocols were published with."""


@pytest.fixture
def server():
    with FakeLLMServer(default=benchmark_reply, models=MODELS) as srv:
        yield srv


def _run(srv, out, *flags, dataset=None):
    data = dataset or seed_file("locomo", "locomo10.json")
    suite = "longmemeval" if str(data).endswith("longmemeval_mini.json") else "locomo"
    args = ["run", suite, "--dataset", data, "--store", "bm25", "--out", out, "--format", "none"]
    args += ["--llm-base-url", srv.base_url, "--llm-model", srv.model, *flags]
    return invoke_cli(*args)


def _readers(srv) -> list[dict]:
    return [b for b in srv.chat_requests() if not b.get("response_format")]


def _judges(srv) -> list[dict]:
    return [b for b in srv.chat_requests() if b.get("response_format")]


def test_mem0_protocol_is_recorded_and_asks_with_mem0s_prompt_and_top_k(server, tmp_path):
    res = _run(server, tmp_path / "r", "--protocol", "mem0", "--questions", "4")
    assert res.exit_code == 0, res.output
    h = read_log(tmp_path / "r").header
    proto = get_protocol("mem0")
    assert h.suite_options["protocol"] == {"name": "mem0", "sha256": proto.sha256, "verbatim": True}
    assert h.suite_options["reader_sha256"] == proto.reader_sha256 != READER_SHA256
    assert h.suite_options["top_k"] == 30 and h.suite_options["reader_budget"] is None
    assert [j["name"] for j in h.suite_options["judges"]] == ["lenient"]
    assert h.suite_options["judge_model"] == "gpt-4o-mini"
    pins = json.loads((tmp_path / "r" / "pins.json").read_text())
    assert pins["protocol"]["sha256"] == proto.sha256
    assert pins["protocol"]["texts"]["prompt"]["text"] == proto.text("prompt")
    assert pins["reader"]["prompt_sha256"] == proto.reader_sha256

    readers = _readers(server)
    assert len(readers) == 4
    for body in readers:
        # mem0's ANSWER_PROMPT, rendered, as the only (system) message; no token cap.
        (msg,) = body["messages"]
        assert msg["role"] == "system" and "max_tokens" not in body
        head = proto.text("prompt").split("{{speaker_1_user_id}}")[0]
        assert msg["content"].startswith(head)
        assert "Memories for user Caroline:" in msg["content"]
        assert "Memories for user Melanie:" in msg["content"]
        lists = re.findall(r"\n    (\[.*?\n\])", msg["content"], re.S)
        per_speaker = [json.loads(x) for x in lists]
        assert len(per_speaker) == 2 and max(map(len, per_speaker)) == 30
        assert all(len(m) <= 30 for m in per_speaker)
        assert all(re.match(r"\d+:\d\d [ap]m on \d+ \w+, \d{4}: ", m) for m in per_speaker[0])
    judges = _judges(server)
    assert judges and {b["model"] for b in judges} == {"gpt-4o-mini"}
    assert all("generous" in b["messages"][-1]["content"] for b in judges)


def test_mem0_prompt_renders_as_jinja_would(tmp_path):
    jinja2 = pytest.importorskip("jinja2")
    ds = load_dataset(seed_file("locomo", "locomo10.json"), format="locomo")
    conv = ds.conversations[0]
    turns = P.turn_index(conv)
    q = next(q for q in ds.queries if q.conversation_id == conv.id)
    context = list(turns.values())[:12]
    proto = get_protocol("mem0")
    call = L.render(proto, q, context, conv)
    values = L.mem0_fields(proto, q, context, conv)
    assert values["speaker_1_user_id"] == "Caroline" and values["speaker_1_memories"].startswith(
        '[\n    "1:56 pm on 8 May, 2023: Caroline: '
    )
    expected = jinja2.Template(proto.text("prompt")).render(**values)
    assert call.messages == [{"role": "system", "content": expected}]


def test_locomo_official_reads_its_prompts_from_the_checkout_and_asks_with_them(server, tmp_path):
    checkout = locomo_checkout(tmp_path / "LoCoMo")
    read = get_protocol("locomo-official").resolve([checkout])
    assert read.sha256 != get_protocol("locomo-official").sha256  # not LoCoMo's own text
    # A category-5 choice is answered "(a)": LoCoMo reads that back as option (a).
    server.add_rule(lambda body: "STAND-IN CHOICE" in json.dumps(body), "(a)")
    for category in ("temporal", "adversarial"):
        out = tmp_path / category
        flags = ["--protocol", "locomo-official", "--protocol-source", checkout]
        res = _run(server, out, *flags, "--category", category, "--questions", "4")
        assert res.exit_code == 0, res.output
        assert "prompt, prompt_cat5, suffix_cat2, choice_cat5 differ from the text pinned" in (
            res.output
        )
        log = read_log(out)
        h = log.header
        assert h.suite_options["protocol"] == {
            "name": "locomo-official",
            "sha256": read.sha256,
            "verbatim": False,
        }
        assert h.suite_options["reader_sha256"] == read.reader_sha256
        assert h.suite_options["top_k"] == 5 and h.suite_options["judges"] == []
        assert h.suite_inputs["protocol_source"] == str(checkout)
        readers = _readers(server)[-4:]
        for body, r in zip(readers, log.items, strict=True):
            (msg,) = body["messages"]
            assert msg["role"] == "system" and body["max_tokens"] == 32
            context, prompt = msg["content"].split("\n\n\n", 1)
            lines = context.splitlines()
            assert len(lines) == 5  # top-k 5
            said = r"\d+:\d\d [ap]m on \d+ \w+, \d{4}: \w+ said, \""
            assert all(re.match(said, ln) for ln in lines)
            if category == "temporal":
                assert prompt.startswith("STAND-IN QA PROMPT. Question: " + r.input)
                assert prompt.endswith(" STAND-IN DATE HINT. Short answer:\n")
            else:
                assert prompt.startswith("STAND-IN CATEGORY-5 PROMPT. Question: " + r.input)
                picked = re.search(r"STAND-IN CHOICE: \(a\) (.*?) \(b\)", prompt)
                assert picked is not None and r.output == picked.group(1)
                official = next(m.value for m in r.metrics if m.name == "locomo_score")
                assert official == (1.0 if "Not mentioned" in r.output else 0.0)
        # LoCoMo's own score over every category, category 5 too: the headline.
        s = log.summary
        assert s is not None and s.headline is not None
        assert s.headline.metric == "locomo_score" and s.headline.n == 4


def test_explicit_flags_override_the_protocol_and_the_header_says_what_ran(server, tmp_path):
    res = _run(
        server,
        tmp_path / "r",
        "--protocol",
        "mem0",
        "--top-k",
        "4",
        "--judge",
        "strict",
        "--judge-model",
        "fake-llm",
        "--reader-budget",
        "500",
        "--questions",
        "2",
    )
    assert res.exit_code == 0, res.output
    opts = read_log(tmp_path / "r").header.suite_options
    assert opts["protocol"]["name"] == "mem0"
    assert opts["top_k"] == 4 and opts["reader_budget"] == 500
    assert [j["name"] for j in opts["judges"]] == ["strict"] and opts["judge_model"] == "fake-llm"
    for body in _readers(server):
        lists = re.findall(r"\n    (\[.*?\n\])", body["messages"][0]["content"], re.S)
        assert all(len(json.loads(x)) <= 4 for x in lists)
    assert {b["model"] for b in _judges(server)} == {"fake-llm"}


def test_the_default_protocol_is_recorded_too(server, tmp_path):
    res = _run(server, tmp_path / "r", "--questions", "2")
    assert res.exit_code == 0, res.output
    opts = read_log(tmp_path / "r").header.suite_options
    assert opts["protocol"] == {
        "name": "mnemometer",
        "sha256": get_protocol("mnemometer").sha256,
        "verbatim": True,
    }
    assert opts["reader_sha256"] == READER_SHA256 and opts["top_k"] == 10
    body = _readers(server)[0]
    assert body["messages"][0]["content"].startswith("Answer the question using the excerpts")
    assert body["max_tokens"] == 64


def test_zep_protocol_asks_with_zeps_prompts_and_grader(server, tmp_path):
    checkout = zep_checkout(tmp_path / "zep-papers")
    res = _run(
        server,
        tmp_path / "r",
        "--protocol",
        "zep",
        "--protocol-source",
        checkout,
        "--questions",
        "3",
    )
    assert res.exit_code == 0, res.output
    opts = read_log(tmp_path / "r").header.suite_options
    assert opts["protocol"]["sha256"] == get_protocol("zep").resolve([checkout]).sha256
    assert opts["top_k"] == 20 and [j["name"] for j in opts["judges"]] == ["zep"]
    for body in _readers(server):
        system, user = body["messages"]
        assert system["content"].strip() == "STAND-IN ZEP SYSTEM PROMPT."
        assert "STAND-IN FACTS:" in user["content"]
        facts = re.findall(
            r"^  - .*\(event_time: \d{4}-\d\d-\d\dT\d\d:\d\d:00\+00:00\)$", user["content"], re.M
        )
        assert len(facts) == 20
    for body in _judges(server):
        assert body["model"] == "gpt-4o-mini"
        assert body["messages"][0] == {
            "role": "system",
            "content": "\n        STAND-IN GRADER SYSTEM PROMPT.\n        ",
        }
        assert "STAND-IN GRADER. Question:" in body["messages"][1]["content"]
        assert "is_correct" in body["response_format"]["schema"]["properties"]
    # The grader's file is recorded as the judge's rubric: re-scoring needs no flag.
    settings = RunSettings(llm=resolve_settings(server.base_url, server.model))
    again = mnemometer.score(tmp_path / "r", out=tmp_path / "s", settings=settings)
    assert again.summary.headline.metric == "judge:zep"


def test_longmemeval_con_reads_rounds_as_json_under_its_prompt(server, tmp_path):
    res = _run(server, tmp_path / "r", "--protocol", "longmemeval-con", dataset=MINI)
    assert res.exit_code == 0, res.output
    opts = read_log(tmp_path / "r").header.suite_options
    assert opts["protocol"]["name"] == "longmemeval-con" and opts["top_k"] == 50
    assert opts["judge_model"] == "gpt-4o-2024-08-06"
    proto = get_protocol("longmemeval-con")
    shown = 0
    for body in _readers(server):
        (msg,) = body["messages"]
        assert msg["role"] == "user" and body["max_tokens"] == 800
        assert msg["content"].startswith(proto.text("prompt").split("{}")[0])
        assert msg["content"].endswith("\nAnswer (step by step):")
        day = r"Session Date: (\d{4}/\d\d/\d\d \(\w{3}\) \d\d:\d\d)"
        dates = re.findall(day, msg["content"])
        assert dates == sorted(dates)  # rounds in date order
        rounds = re.findall(r"Session Content:\n\n(\[.*\])\n", msg["content"])
        assert len(rounds) == len(dates)
        assert all({"role", "content"} == set(json.loads(r)[0]) for r in rounds)
        shown += bool(rounds)  # bm25 finds nothing for the abstention question's "car"
    assert shown == 3
    assert {b["model"] for b in _judges(server)} == {"gpt-4o-2024-08-06"}


def test_a_protocol_of_another_benchmark_is_refused(server, tmp_path):
    res = _run(server, tmp_path / "r", "--protocol", "mem0", dataset=MINI)
    assert res.exit_code == 2
    assert "protocol 'mem0' is locomo's; for longmemeval: mnemometer, longmemeval" in res.output
    res = _run(server, tmp_path / "s", "--protocol", "locomo-official")
    assert res.exit_code == 2 and "task_eval/gpt_utils.py at commit 3eb6f2c" in res.output


def test_a_resumed_run_keeps_its_protocol_and_refuses_a_changed_one(server, tmp_path):
    res = _run(server, tmp_path / "r", "--protocol", "mem0", "--questions", "2")
    assert res.exit_code == 0, res.output
    h = read_log(tmp_path / "r").header
    suite = LocomoSuite(**{**h.suite_options, **h.suite_inputs})
    assert suite.options() == h.suite_options
    changed = {**h.suite_options["protocol"], "sha256": "0" * 64}
    with pytest.raises(MnemometerError, match="protocol 'mem0' changed since this run started"):
        LocomoSuite(**{**h.suite_options, **h.suite_inputs, "protocol": changed})
    with pytest.raises(MnemometerError, match="reader prompt changed"):
        LocomoSuite(**{**h.suite_options, **h.suite_inputs, "reader_sha256": READER_SHA256})


def test_runs_under_different_protocols_never_pair_or_share_a_column(server, tmp_path):
    from mnemometer.comparison import PairingError, compare
    from mnemometer.report import leaderboard

    base = ("--questions", "3", "--judge", "lenient", "--judge-model", "fake-llm")
    assert _run(server, tmp_path / "runs" / "neutral", *base).exit_code == 0
    res = _run(server, tmp_path / "runs" / "mem0", *base, "--protocol", "mem0")
    assert res.exit_code == 0, res.output
    a, b = tmp_path / "runs" / "neutral", tmp_path / "runs" / "mem0"
    with pytest.raises(PairingError, match=r"options\.protocol\.name mnemometer -> mem0"):
        compare([a], [b])
    assert compare([a], [b], vary=["suite", "reader"]) is not None  # when that is the experiment
    board = leaderboard([tmp_path / "runs"])
    assert len(board.columns) == 2
