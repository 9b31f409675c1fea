"""rerank: a second stage over any store, by bi-encoder, cross-encoder or an LLM verdict."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from mnemometer.cli.main import cli
from mnemometer.errors import MnemometerError
from mnemometer.stores import create_store
from mnemometer.testing import check_store
from mnemometer.testing.llm_server import FakeLLMServer

DOCS = [
    ("a", "The budget meeting moved to Thursday."),
    ("b", "Marta's budget for groceries is tight this month."),
    ("c", "Thursday is the day the team reviews the quarterly budget."),
]


def _verdicts(prefer: str):
    def reply(body: dict) -> str:
        # Grade the numbered memories: the one containing `prefer` is the answer.
        listing = re.findall(r"\[(\d+)\] (.*)", body["messages"][-1]["content"])
        return json.dumps(
            {"verdicts": [{"id": int(i), "relevance": 3 if prefer in t else 0} for i, t in listing]}
        )

    return reply


def test_llm_verdict_reorders_candidates_and_run_log_records_it(tmp_path: Path) -> None:
    with FakeLLMServer(default=_verdicts("groceries")) as srv:
        s = create_store(
            "rerank",
            {"base": "bm25", "by": "llm", "base_url": srv.base_url, "model": srv.model},
            lang="en",
        )
        s.store_many([(t, {"memory_id": m}) for m, t in DOCS])
        base = [h.memory_id for h in create_store("bm25", lang="en").search("budget", 3)]
        hits = s.search("budget", 3)
        req = srv.chat_requests()[0]
    assert hits[0].memory_id == "b" and {h.memory_id for h in hits} == {"a", "b", "c"}
    assert req["response_format"]["type"] == "json_object"  # JSON-constrained verdict
    assert "verdicts" in json.dumps(req["response_format"]["schema"])
    assert base != [h.memory_id for h in hits] or base[0] == "b"


def test_llm_reranker_passes_conformance() -> None:
    with FakeLLMServer(default=_verdicts("lighthouse")) as srv:
        s = create_store("rerank", {"by": "llm", "base_url": srv.base_url, "model": srv.model})
        rep = check_store(s)
    assert rep.ok, str(rep)


def test_malformed_llm_verdict_is_an_item_error(tmp_path: Path, monkeypatch) -> None:
    with FakeLLMServer(default='{"no_verdicts": true}') as srv:
        monkeypatch.setenv("MNEMOMETER_LLM_BASE_URL", srv.base_url)
        monkeypatch.setenv("MNEMOMETER_LLM_MODEL", srv.model)
        out = tmp_path / "run"
        args = "run retrieval -d demo-en -s rerank -S by=llm --format none -o".split()
        res = CliRunner().invoke(cli, [*args, str(out)])
    assert res.exit_code == 1  # items failed and were recorded
    items = [json.loads(x) for x in (out / "items.jsonl").read_text().splitlines()]
    failed = [r for r in items if r.get("status") == "error"]
    assert failed and all("no 'verdicts' list" in r["error"] for r in failed)
    header = json.loads((out / "header.json").read_text())
    assert header["system"]["options"]["by"] == "llm"


def test_bad_rerank_options(tmp_path: Path) -> None:
    with pytest.raises(MnemometerError, match="by must be one of"):
        create_store("rerank", {"by": "magic"})
    with pytest.raises(MnemometerError, match="cannot itself be 'rerank'"):
        create_store("rerank", {"base": "rerank"})
    with pytest.raises(MnemometerError, match="needs a model directory"):
        create_store("rerank", {"by": "cross-encoder"})
    with pytest.raises(MnemometerError, match="no such directory"):
        create_store("rerank", {"by": "cross-encoder", "model": str(tmp_path / "none")})


@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("sentence_transformers", reason="needs the [embeddings] extra")
    from mnemometer.embeddings import load_embedder

    return load_embedder()


def test_dense_rerank_over_bm25(minilm) -> None:
    s = create_store("rerank", {"base": "bm25", "by": "dense"}, lang="en")
    rep = check_store(s)
    assert rep.ok, str(rep)
    s.store_many([(t, {"memory_id": m}) for m, t in DOCS])
    hits = s.search("when do we look at the budget numbers with the team", 3)
    assert hits[0].memory_id == "c"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert s.resolved_options() == {"model": minilm.path, "tie_seed": 0}


def test_cross_encoder_by_path(minilm, tmp_path: Path) -> None:
    # The only local model is a bi-encoder; loaded as a CrossEncoder it gets an untrained
    # head. That still exercises the real CrossEncoder path: the output order must be the
    # order of the model's own scores.
    from sentence_transformers import CrossEncoder

    s = create_store(
        "rerank", {"base": "bm25", "by": "cross-encoder", "model": minilm.path}, lang="en"
    )
    s.store_many([(t, {"memory_id": m}) for m, t in DOCS])
    hits = s.search("budget", 3)
    ce = s.reranker._ce
    assert isinstance(ce, CrossEncoder)
    want = sorted(DOCS, key=lambda d: -float(ce.predict([("budget", d[1])])[0]))
    assert [h.memory_id for h in hits] == [m for m, _ in want]


def test_llm_verdicts_from_a_providers_model(tmp_path: Path, monkeypatch) -> None:
    """``-S model=anthropic/...`` (the [providers] extra): the verdicts come through
    Anthropic's Messages protocol, their schema asked as its ``output_format``, with the key
    LiteLLM reads from the provider's own variable."""
    from mnemometer.errors import MissingExtraError
    from mnemometer.llm._litellm import load_litellm
    from mnemometer.testing import AnthropicServer

    try:
        load_litellm()
    except MissingExtraError:
        pytest.skip("needs pip install 'mnemometer[providers]'")
    key = "sk-ant-test-0123456789abcdef"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    verdicts = _verdicts("groceries")
    with AnthropicServer(default=verdicts, models=["claude-haiku-4-5"], api_key=key) as srv:
        opts = {"base": "bm25", "by": "llm", "base_url": srv.url}
        s = create_store("rerank", {**opts, "model": "anthropic/claude-haiku-4-5"}, lang="en")
        s.store_many([(t, {"memory_id": m}) for m, t in DOCS])
        hits = s.search("budget", 3)
        req = srv.requests[0]
    assert hits[0].memory_id == "b" and {h.memory_id for h in hits} == {"a", "b", "c"}
    assert "verdicts" in json.dumps(req["output_format"]["schema"])
