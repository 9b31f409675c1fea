"""Dollars and tokens of a benchmark run, against the real test server, never the network.

$ in summary.json is the billed tokens times the price map the header pinned (LiteLLM's
bundled file, hash recorded); a model the map lacks says so instead of costing $0; an
endpoint that under-reports its usage is billed what mnemometer counted, and flagged.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from benchmark_helpers import MINI
from conftest import invoke_cli

import mnemometer
from mnemometer.llm import counter_for, resolve_settings
from mnemometer.llm._prices import price_map_path
from mnemometer.log import read_header, read_items
from mnemometer.runner import RunSettings
from mnemometer.testing import FakeLLMServer
from mnemometer.testing._bench import benchmark_reply

MODEL = "gpt-4o-mini"


@pytest.fixture(scope="module")
def price_map() -> Path:
    path = price_map_path()
    if path is None:
        pytest.skip("the [cost] extra (LiteLLM's price map) is not installed")
    return path


def _run(srv: FakeLLMServer, out: Path, **settings) -> mnemometer.RunResult:
    return mnemometer.run(
        "longmemeval",
        "bm25",
        suite_options={"dataset": str(MINI), "judges": ["longmemeval"]},
        out=out,
        settings=RunSettings(llm=resolve_settings(srv.base_url, srv.model), **settings),
    )


def test_dollars_equal_billed_tokens_times_the_pinned_price_map(tmp_path, price_map):
    with FakeLLMServer(default=benchmark_reply, models=(MODEL,)) as srv:
        r = _run(srv, tmp_path / "r")
        requests = srv.chat_requests()
    header = read_header(r.path)
    raw = price_map.read_bytes()
    assert header.cost.price_map_sha256 == hashlib.sha256(raw).hexdigest()
    assert header.cost.roles == {"reader": MODEL, "judge:longmemeval": MODEL}
    assert header.cost.models[MODEL].tokenizer.startswith("tiktoken:o200k_base")
    entry = json.loads(raw)[MODEL]
    cost = json.loads((r.path / "summary.json").read_text())["cost"]
    billed = {
        side: sum(x[f"{side}_tokens"] for x in cost["roles"]) for side in ("prompt", "completion")
    }
    expected = (
        billed["prompt"] * entry["input_cost_per_token"]
        + billed["completion"] * entry["output_cost_per_token"]
    )
    assert billed["prompt"] > 0 and cost["usd"] == pytest.approx(expected, rel=1e-12)
    assert cost["per_question"] == pytest.approx(expected / cost["questions"])
    assert cost["correct"] == r.summary.counts["succeeded"]
    if cost["correct"]:
        assert cost["per_correct"] == pytest.approx(expected / cost["correct"])
    # Every prompt was counted with the model's own tokenizer, from what was sent.
    enc = counter_for(MODEL)
    readers = [b for b in requests if not b.get("response_format")]
    items = [i for i in read_items(r.path) if "counted_tokens" in i.extra]
    assert len(items) == len(readers)
    sent = sorted(enc.count(b["messages"][0]["content"]) for b in readers)
    assert sorted(i.extra["counted_tokens"]["reader_prompt"] for i in items) == sent
    # And every report format shows the dollars.
    for fmt, needle in (
        ("text", "What the LLM calls cost"),
        ("md", "### What the LLM calls cost"),
        ("html", "What the LLM calls cost"),
        ("json", '"per_correct"'),
    ):
        res = invoke_cli("report", str(r.path), "--format", fmt)
        assert needle in res.output and "$" in res.output


def test_a_model_missing_from_the_map_says_so_instead_of_costing_nothing(tmp_path):
    with FakeLLMServer(default=benchmark_reply) as srv:  # "fake-llm": in no price map
        r = _run(srv, tmp_path / "r")
    cost = r.summary.cost
    assert cost is not None and cost.usd is None and cost.per_correct is None
    assert cost.unpriced == ["fake-llm"]
    assert "no price for model 'fake-llm': add it with --prices FILE" in r.summary.notes
    text = invoke_cli("report", str(r.path)).output
    assert "no price" in text and "$0" not in text


def test_a_price_file_prices_what_the_map_lacks(tmp_path):
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."fake-llm"]\ninput_per_million = 2\noutput_per_million = 8\n')
    with FakeLLMServer(default=benchmark_reply) as srv:
        r = _run(srv, tmp_path / "r", prices=prices)
    header = read_header(r.path)
    assert header.cost.overrides_sha256 == hashlib.sha256(prices.read_bytes()).hexdigest()
    assert header.cost.models["fake-llm"].source == "override"
    cost = r.summary.cost
    p = sum(x.prompt_tokens for x in cost.roles)
    c = sum(x.completion_tokens for x in cost.roles)
    assert cost.usd == pytest.approx(p * 2e-6 + c * 8e-6)
    assert header.cost.models["fake-llm"].tokenizer.startswith("estimate:4-chars")
    assert any("counted by the estimate of 4 characters" in n for n in r.summary.notes)


@pytest.mark.parametrize(
    "usage, flag",
    [
        (lambda body, msg: {"prompt_tokens": 0, "completion_tokens": 0}, "reported no prompt"),
        (lambda body, msg: None, "reported no prompt"),
        (lambda body, msg: {"prompt_tokens": 1, "completion_tokens": 1}, "USAGE DISAGREES"),
    ],
    ids=["zero", "absent", "one-token"],
)
def test_an_endpoint_that_under_reports_is_billed_what_was_counted(
    tmp_path, price_map, usage, flag
):
    """The adversary sends long prompts and says they cost nothing (or next to nothing)."""
    with FakeLLMServer(default=benchmark_reply, models=(MODEL,), usage=usage) as srv:
        r = _run(srv, tmp_path / "r")
    cost = r.summary.cost
    reader = next(x for x in cost.roles if x.role == "reader")
    assert reader.reported_prompt_tokens < reader.counted_prompt_tokens / 10
    assert reader.prompt_tokens == reader.counted_prompt_tokens > 100  # billed the count
    price = read_header(r.path).cost.models[MODEL]
    assert cost.usd >= reader.counted_prompt_tokens * price.input_per_token > 0
    # The judge's calls go through the same endpoint and are held to the same count.
    judge = next(x for x in cost.roles if x.role == "judge:longmemeval")
    assert judge.prompt_tokens == judge.counted_prompt_tokens > 10 * judge.reported_prompt_tokens
    billed = sum(x.prompt_tokens for x in cost.roles) * price.input_per_token
    billed += sum(x.completion_tokens for x in cost.roles) * price.output_per_token
    assert cost.usd == pytest.approx(billed, rel=1e-12)
    assert any(flag in n and n.startswith(("reader", "USAGE")) for n in r.summary.notes)
    assert any(f.startswith("reader") or "reader" in f for f in cost.flags)


def test_an_honest_endpoint_is_billed_as_it_reported(tmp_path, price_map):
    enc = counter_for(MODEL)

    def exact(body, msg):  # what an OpenAI endpoint reports: the text plus its template
        p = sum(enc.count(m["content"]) + 4 for m in body["messages"]) + 3
        return {"prompt_tokens": p, "completion_tokens": enc.count(msg.get("content") or "")}

    with FakeLLMServer(default=benchmark_reply, models=(MODEL,), usage=exact) as srv:
        r = _run(srv, tmp_path / "r")
    cost = r.summary.cost
    assert not cost.flags
    for x in cost.roles:
        assert x.prompt_tokens == x.reported_prompt_tokens > x.counted_prompt_tokens


def test_a_resume_whose_token_counter_changed_is_refused(tmp_path):
    from mnemometer.errors import MnemometerError

    with FakeLLMServer(default=benchmark_reply) as srv:
        r = _run(srv, tmp_path / "r")
        header = json.loads((r.path / "header.json").read_text())
        header["cost"]["models"]["fake-llm"]["tokenizer"] = "tiktoken:o200k_base (then)"
        header["status"] = "interrupted"
        (r.path / "header.json").write_text(json.dumps(header))
        lines = (r.path / "items.jsonl").read_text().splitlines(keepends=True)
        (r.path / "items.jsonl").write_text("".join(lines[:-1]))  # one question to ask again
        with pytest.raises(MnemometerError, match="counted by tiktoken:o200k_base"):
            mnemometer.resume(r.path)


def test_re_scoring_keeps_the_pinned_prices_and_prices_a_new_judge(tmp_path, price_map):
    with (
        FakeLLMServer(default=benchmark_reply) as srv,
        FakeLLMServer(default=benchmark_reply, models=(MODEL,)) as judge,
    ):
        r = _run(srv, tmp_path / "r")
        assert r.summary.cost.usd is None  # fake-llm has no price
        new = mnemometer.score(
            r.path,
            judges=[f"strict@{MODEL}"],
            judge_endpoints=[f"{MODEL}={judge.base_url}"],
            out=tmp_path / "strict",
        )
    cost = read_header(new.path).cost
    assert cost.roles[f"judge:strict@{MODEL}"] == MODEL and "judge:longmemeval" not in cost.roles
    assert cost.roles["reader"] == "fake-llm"  # the parent's reader, not the judge's model
    assert cost.models["fake-llm"] == read_header(r.path).cost.models["fake-llm"]  # pinned
    assert cost.models[MODEL].source == "litellm"
    judged = next(x for x in new.summary.cost.roles if x.role == f"judge:strict@{MODEL}")
    assert judged.usd is not None and judged.usd > 0
    assert new.summary.cost.unpriced == ["fake-llm"]  # the reader's tokens still unpriced


def test_a_new_judge_priced_from_another_map_than_the_parents_says_so(tmp_path, price_map):
    with (
        FakeLLMServer(default=benchmark_reply) as srv,
        FakeLLMServer(default=benchmark_reply, models=(MODEL,)) as judge,
    ):
        r = _run(srv, tmp_path / "r")
        header = json.loads((r.path / "header.json").read_text())
        header["cost"]["price_map"] = "litellm 0.0.1 model_prices_and_context_window_backup.json"
        header["cost"]["price_map_sha256"] = "0" * 64  # pinned by another LiteLLM
        (r.path / "header.json").write_text(json.dumps(header))
        new = mnemometer.score(
            r.path,
            judges=[f"strict@{MODEL}"],
            judge_endpoints=[f"{MODEL}={judge.base_url}"],
            out=tmp_path / "strict",
        )
    cost = read_header(new.path).cost
    assert cost.price_map_sha256 == "0" * 64  # the parent's pins stay the run's
    assert cost.models[MODEL].source == "litellm"
    sha = hashlib.sha256(price_map.read_bytes()).hexdigest()[:12]
    assert any(
        n.startswith(f"{MODEL} priced from litellm") and sha in n and "000000000000" in n
        for n in new.header.notes
    )


def test_score_with_a_price_file_prices_a_finished_run_afresh(tmp_path):
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."fake-llm"]\ninput_per_million = 1\noutput_per_million = 3\n')
    with FakeLLMServer(default=benchmark_reply) as srv:
        r = _run(srv, tmp_path / "r")
    assert r.summary.cost.usd is None  # fake-llm has no price
    other = ("--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", MODEL)  # never asked
    res = invoke_cli(
        "score", str(r.path), "--prices", str(prices), "--out", str(tmp_path / "p"), *other
    )
    assert res.exit_code == 0, res.output
    assert read_header(tmp_path / "p").cost.roles == {
        "reader": "fake-llm",
        "judge:longmemeval": "fake-llm",
    }
    cost = json.loads((tmp_path / "p" / "summary.json").read_text())["cost"]
    p = sum(x["prompt_tokens"] for x in cost["roles"])
    c = sum(x["completion_tokens"] for x in cost["roles"])
    assert p > c > 0 and cost["usd"] == pytest.approx(p * 1e-6 + c * 3e-6)
    assert not cost["unpriced"] and cost["per_question"] == pytest.approx(
        cost["usd"] / cost["questions"]
    )
    # The parent's tokens, not new ones: re-pricing calls no model.
    parent = json.loads((r.path / "summary.json").read_text())["cost"]
    assert [(x["role"], x["prompt_tokens"]) for x in parent["roles"]] == [
        (x["role"], x["prompt_tokens"]) for x in cost["roles"]
    ]
    # Another price file into the same directory is refused, not silently resumed.
    prices.write_text('[models."fake-llm"]\ninput_per_million = 9\noutput_per_million = 9\n')
    again = invoke_cli("score", str(r.path), "--prices", str(prices), "--out", str(tmp_path / "p"))
    assert again.exit_code != 0 and "already holds another run" in again.output
    resumed = invoke_cli("score", str(tmp_path / "p"), "--resume", "--prices", str(prices))
    assert resumed.exit_code != 0 and "priced with another price file" in resumed.output


def test_a_new_judge_is_not_priced_by_a_price_file_changed_since_the_run(tmp_path):
    """The adversary edits the parent's price file after the run to price the new judge."""
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."fake-llm"]\ninput_per_million = 1\noutput_per_million = 1\n')
    with (
        FakeLLMServer(default=benchmark_reply) as srv,
        FakeLLMServer(default=benchmark_reply, models=("judge-llm",)) as judge,
    ):
        r = _run(srv, tmp_path / "r", prices=prices)
        prices.write_text(
            '[models."fake-llm"]\ninput_per_million = 50\noutput_per_million = 50\n'
            '[models."judge-llm"]\ninput_per_million = 0\noutput_per_million = 0\n'
        )
        new = mnemometer.score(
            r.path,
            judges=["strict@judge-llm"],
            judge_endpoints=[f"judge-llm={judge.base_url}"],
            out=tmp_path / "strict",
        )
    cost = read_header(new.path).cost
    assert cost.models["fake-llm"] == read_header(r.path).cost.models["fake-llm"]  # pinned
    assert cost.models["judge-llm"].source is None  # not the edited file's $0
    assert new.summary.cost.usd is None and new.summary.cost.unpriced == ["judge-llm"]
    assert "no price for model 'judge-llm': add it with --prices FILE" in new.summary.notes
    assert any("without the parent's --prices file" in n for n in new.header.notes)


def test_the_reader_budget_counts_the_models_own_tokens(tmp_path, price_map, monkeypatch):
    """Chinese text is ~1 token a character where the 4-characters estimate says 0.25: a
    budget in estimated tokens would send the reader about three times what it allows."""
    from mnemometer.llm import _tokens

    tiktoken = pytest.importorskip("tiktoken")
    bundled = _tokens.bundled_dir()
    if bundled is None:
        pytest.skip("the [cost] extra (LiteLLM's bundled tokenizer files) is not installed")
    said = [
        "我昨天去了支持小组，感觉非常温暖。",
        "梅尔文说他下周要去海边画画。",
        "我们在公园里散步了两个小时。",
    ]
    turns = [{"role": "user", "content": said[i % 3] + f"（第{i}次）"} for i in range(40)]
    data = [
        {
            "question_id": "zh_1",
            "question_type": "single-session-user",
            "question": "我昨天去了哪里？",
            "answer": "支持小组",
            "question_date": "2023/06/02 (Fri) 18:05",
            "haystack_session_ids": ["s1"],
            "haystack_dates": ["2023/05/20 (Sat) 02:21"],
            "haystack_sessions": [turns],
            "answer_session_ids": ["s1"],
        }
    ]
    (tmp_path / "zh.json").write_text(json.dumps(data, ensure_ascii=False))
    budget = 300
    with FakeLLMServer(default=benchmark_reply, models=(MODEL,)) as srv:
        r = mnemometer.run(
            "longmemeval",
            "bm25",
            suite_options={
                "dataset": str(tmp_path / "zh.json"),
                "baseline": "full-context",
                "reader_budget": budget,
                "judges": [],
            },
            out=tmp_path / "r",
            settings=RunSettings(llm=resolve_settings(srv.base_url, srv.model)),
        )
        (prompt,) = [b["messages"][0]["content"] for b in srv.chat_requests()]
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(bundled))
    enc = tiktoken.encoding_for_model(MODEL)
    lines = prompt.split("Excerpts:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    real = sum(len(enc.encode_ordinary(x)) + 1 for x in lines)
    estimate = sum(-(-len(x) // 4) + 1 for x in lines)
    (item,) = read_items(r.path)
    assert item.extra["context_tokens"] == real <= budget  # the model's tokens, in budget
    assert budget - real < 30 and 0 < len(lines) < len(turns)  # filled, and some dropped
    assert estimate < real / 2  # what the estimate would have believed was sent
