"""``-O similarity=endpoint`` embeds at the run's LLM endpoint, never the environment's.

End to end: the rag agent over bm25 answers through the test LLM server, which also serves
``/v1/embeddings``; the embedding model is the suite option ``embedding_model``.
"""

from __future__ import annotations

import pytest
from benchmark_helpers import llm_flags
from conftest import invoke_cli

import mnemometer
from mnemometer.errors import MnemometerError
from mnemometer.llm import LLMSettings
from mnemometer.log import read_header, read_items
from mnemometer.testing import FakeLLMServer
from mnemometer.testing.llm_server import echo_memories

RAG = mnemometer.SystemSpec.agent("rag").options_with_store("bm25", None)
OPTIONS = {
    "similarity": "endpoint",
    "embedding_model": "embed-test",
    "scenarios": ["task_continuity"],
}


@pytest.fixture
def server():
    with FakeLLMServer(default=echo_memories, embedding_models=["embed-test"]) as srv:
        yield srv


def _similarities(run_dir) -> list[float | None]:
    (item,) = read_items(run_dir)
    return [t["grade"]["similarity"] for t in item.extra["turns"] if "grade" in t]


def _embedded(srv) -> list[str]:
    return [b["model"] for p, b in zip(srv.paths, srv.requests, strict=True) if "embed" in p]


def test_the_runs_endpoint_embeds_with_the_suites_model(server, tmp_path):
    settings = mnemometer.RunSettings(llm=LLMSettings(server.base_url, server.model))
    res = mnemometer.run(
        "scenarios", RAG, suite_options=OPTIONS, out=tmp_path / "r", settings=settings
    )
    sims = _similarities(res.path)
    assert sims and all(isinstance(s, float) for s in sims)
    assert set(_embedded(server)) == {"embed-test"}
    assert read_header(res.path).suite_options["embedding_model"] == "embed-test"


def test_the_command_line_and_the_environment_reach_it_too(server, tmp_path, monkeypatch):
    opts = ["-O", "similarity=endpoint", "-O", "embedding_model=embed-test"]
    args = ["run", "scenarios", "-a", "rag", "-s", "bm25", "--scenario", "task_continuity", *opts]
    r = invoke_cli(*args, *llm_flags(server), "-o", tmp_path / "flags", "--format", "none")
    assert r.exit_code == 0, r.output
    monkeypatch.setenv("MNEMOMETER_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("MNEMOMETER_LLM_MODEL", server.model)
    r = invoke_cli(*args, "-o", tmp_path / "env", "--format", "none")
    assert r.exit_code == 0, r.output
    assert _similarities(tmp_path / "flags") == _similarities(tmp_path / "env") != []


def test_without_an_endpoint_it_stops_before_the_run_with_one_line(tmp_path):
    with pytest.raises(MnemometerError, match="--llm-base-url URL or set MNEMOMETER_LLM_BASE_URL"):
        mnemometer.run("scenarios", RAG, suite_options=OPTIONS, out=tmp_path / "r")
    assert not (tmp_path / "r").exists()
