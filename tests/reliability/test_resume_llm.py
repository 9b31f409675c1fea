"""A resume is the same run: it asks the LLM the run recorded, and no other unless told.

The audit: resuming a killed LoCoMo run without the LLM flags failed "no LLM endpoint";
resuming with ``--llm-model other-llm`` silently mixed 199 answers of one model with 105 of
another and rewrote ``pins.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import invoke_cli, seed_file

from mnemometer.log import read_header, read_items
from mnemometer.testing import FakeLLMServer
from mnemometer.testing._bench import benchmark_reply, is_judge_request


@pytest.fixture(scope="module")
def server():
    rules = [(is_judge_request, benchmark_reply)]
    with FakeLLMServer(rules=rules, default=benchmark_reply, models=["fake-llm", "other"]) as s:
        yield s


def _killed_run(server, out: Path) -> int:
    """A LoCoMo run of two conversations, killed after the first: how many questions."""
    r = invoke_cli(
        *("run", "locomo", "-d", seed_file("locomo", "locomo10.json"), "-s", "bm25"),
        *("--limit", "2", "--category", "temporal", "--judge", "lenient"),
        *("--llm-base-url", server.base_url),
        *("--llm-model", "fake-llm", "--out", out, "--format", "none"),
    )
    assert r.exit_code == 0, r.output
    items = read_items(out)
    first = items[0].item_id
    kept = [x for x in (out / "items.jsonl").read_text().splitlines() if first in x]
    (out / "items.jsonl").write_text("\n".join(kept) + "\n")
    header = json.loads((out / "header.json").read_text())
    (out / "header.json").write_text(json.dumps({**header, "status": "running"}))
    return len(items)


def test_a_resume_asks_the_recorded_llm_without_flags(server, tmp_path: Path):
    out = tmp_path / "r"
    total = _killed_run(server, out)
    r = invoke_cli("run", "--resume", out, "--format", "none")
    assert r.exit_code == 0, r.output
    assert len(read_items(out)) == total
    h = read_header(out)
    assert h.status == "finished" and h.llm["model"] == "fake-llm"


def test_a_resume_asking_another_model_is_refused_unless_allowed(server, tmp_path: Path):
    out = tmp_path / "r"
    _killed_run(server, out)
    pins = (out / "pins.json").read_text()
    r = invoke_cli(
        *("run", "--resume", out, "--llm-base-url", server.base_url, "--llm-model", "other"),
    )
    assert r.exit_code == 2
    assert "this run asked the reader fake-llm" in r.output and "--allow-llm-change" in r.output
    assert (out / "pins.json").read_text() == pins  # nothing was touched
    assert read_header(out).status == "running"
    r = invoke_cli(
        *("run", "--resume", out, "--llm-base-url", server.base_url, "--llm-model", "other"),
        *("--allow-llm-change", "--format", "none"),
    )
    assert r.exit_code == 0, r.output
    h = read_header(out)
    assert h.llm["model"] == "other"
    assert any("resumed asking other" in n and "fake-llm" in n for n in h.notes)
    r = invoke_cli("run", "retrieval", "-d", "demo-en", "-s", "bm25", "--allow-llm-change")
    assert r.exit_code == 2 and "--allow-llm-change applies with --resume only" in r.output
