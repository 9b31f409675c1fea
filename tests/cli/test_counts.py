"""Failures are counted in the unit they happen in, and progress names what it measures."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from conftest import invoke_cli

from mnemometer.log._schema import DatasetRef, RunHeader, Summary, SystemRef
from mnemometer.report import render
from mnemometer.report._run import RunView, failure_banner


def _view(counts: dict[str, int]) -> RunView:
    header = RunHeader(
        run_id="r",
        run_group="g",
        suite="locomo",
        suite_version="1",
        dataset=DatasetRef(name="d", version="1", content_hash="h", language="en"),
        system=SystemRef(name="bm25", implementation="x:Y"),
        config_fingerprint="f",
        package_version="0",
        python_version="3",
        platform="p",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        status="finished",
        item_count=2,
    )
    return RunView(Path("nowhere"), header, Summary(overall=[], counts=counts))


def test_four_failed_questions_of_304_are_not_four_of_two_items():
    # The audit: "items 2/2 (4 errors)" and "NO RESULT: 4 of 2 items failed", result withheld.
    v = _view({"items": 2, "questions": 304, "planned": 2, "errors": 4})
    assert failure_banner(v) == []
    text = render(v, "text")
    assert "items 2/2 (304 questions; 4 errors)" in text and "NO RESULT" not in text


def test_an_experiment_says_its_headline_per_run(tmp_path: Path):
    # The audit: "0/2339 succeeded (0.0%)" for every retrieval condition (bm25 hit 2,034).
    r = invoke_cli(
        *("run", "retrieval", "-d", "demo-en", "--condition", "lexical"),
        *("--repeat", "2", "--out", tmp_path / "exp"),
    )
    assert r.exit_code == 0, r.output
    assert "lexical r0 (bm25): hit@20 0.846 (n=13)" in r.output
    assert "succeeded" not in r.output


def test_a_resumed_run_names_its_own_suite_in_progress(tmp_path: Path):
    out = tmp_path / "m"
    r = invoke_cli("run", "memtest", "-d", "demo-en", "-s", "bm25", "--out", out)
    assert r.exit_code == 0, r.output
    lines = (out / "items.jsonl").read_text().splitlines(keepends=True)
    (out / "items.jsonl").write_text("".join(lines[: len(lines) // 2]))  # killed halfway
    header = json.loads((out / "header.json").read_text())
    (out / "header.json").write_text(json.dumps({**header, "status": "running"}))
    r = invoke_cli("run", "--resume", out, "--format", "none")
    assert r.exit_code == 0, r.output
    assert "memtest · items" in r.output and "retrieval ·" not in r.output


def test_a_store_whose_extra_is_missing_is_not_installed_not_broken(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "cognee", None)  # as if not installed (it never is here)
    r = invoke_cli("list", "stores")
    assert r.exit_code == 0
    line = next(x for x in r.output.splitlines() if x.startswith("cognee"))
    assert line.split(maxsplit=1)[1] == "(not installed: pip install 'mnemometer[cognee]')"
    assert "broken" not in r.output
