"""Experiments (conditions x repeats) and systems passed as objects, resumed after a kill."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import invoke_cli, kw_lex_experiment

from mnemometer import Experiment, SystemSpec, resume, run, run_experiment
from mnemometer.errors import MnemometerError
from mnemometer.log import read_header, read_items
from mnemometer.runner import read_experiment, resume_experiment


def _outcomes(path: Path) -> list[tuple[str, bool | None, list]]:
    return [(i.item_id, i.success, [(m.key, m.value) for m in i.metrics]) for i in read_items(path)]


def test_an_experiment_over_a_registered_suite_resumes_after_a_kill(tmp_path: Path):
    exp = kw_lex_experiment()
    full = run_experiment(exp, tmp_path / "full")
    assert [r.path.name for r in full.runs] == ["kw-r0", "lex-r0", "kw-r1", "lex-r1"]
    assert {read_header(r.path).run_group for r in full.runs} == {full.run_group}
    assert read_experiment(tmp_path / "full").repeats == 2
    # A kill during lex-r0: its log is cut short, and the later runs never started.
    cut = tmp_path / "cut"
    shutil.copytree(tmp_path / "full", cut)
    for name in ("kw-r1", "lex-r1"):
        shutil.rmtree(cut / name)
    lines = (cut / "lex-r0" / "items.jsonl").read_bytes().splitlines(keepends=True)
    (cut / "lex-r0" / "items.jsonl").write_bytes(b"".join(lines[:7]) + lines[7][:15])
    (cut / "lex-r0" / "summary.json").unlink()
    header = json.loads((cut / "lex-r0" / "header.json").read_text())
    (cut / "lex-r0" / "header.json").write_text(json.dumps({**header, "status": "running"}))
    done = resume_experiment(cut)
    assert [r.path.name for r in done.runs] == ["kw-r0", "lex-r0", "kw-r1", "lex-r1"]
    assert done.run_group == full.run_group
    for name in ("kw-r0", "lex-r0", "kw-r1", "lex-r1"):
        assert _outcomes(cut / name) == _outcomes(tmp_path / "full" / name)
    assert read_header(cut / "lex-r0").resumes == 1 and read_header(cut / "kw-r0").resumes == 0
    assert read_header(cut / "kw-r1").repeat == 1


def test_the_cli_resumes_an_experiment_directory(tmp_path: Path):
    r = invoke_cli(
        "run",
        "retrieval",
        "-d",
        "demo-en",
        "--condition",
        "lexical",
        "--repeat",
        "2",
        "-o",
        tmp_path / "e",
    )
    assert r.exit_code == 0, r.output
    shutil.rmtree(tmp_path / "e" / "lexical-r1")
    r = invoke_cli("run", "--resume", tmp_path / "e")
    assert r.exit_code == 0, r.output
    assert _outcomes(tmp_path / "e" / "lexical-r1") == _outcomes(tmp_path / "e" / "lexical-r0")
    r = invoke_cli("run", "--resume", tmp_path / "e", "--store", "bm25")
    assert r.exit_code == 2 and "--store does not apply with --resume" in r.output


class Exact:
    """An in-process store: finds a memory by any shared word."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}

    def reset(self) -> None:
        self.texts.clear()

    def store(self, text: str, metadata: dict) -> None:
        self.texts[metadata["memory_id"]] = text.lower()

    def search(self, query: str, top_k: int) -> list[dict]:
        words = set(query.lower().split())
        hits = [(len(words & set(t.split())), m) for m, t in self.texts.items()]
        hits = sorted((h for h in hits if h[0]), key=lambda h: (-h[0], h[1]))
        return [{"memory_id": m, "score": float(s)} for s, m in hits[:top_k]]


def test_a_store_object_runs_and_resumes_only_with_the_object(tmp_path: Path):
    res = run("retrieval", Exact(), dataset="demo-en", out=tmp_path / "r")
    assert res.header.system.name == "Exact" and res.summary.counts["items"] == 15
    lines = (res.path / "items.jsonl").read_bytes().splitlines(keepends=True)
    (res.path / "items.jsonl").write_bytes(b"".join(lines[:5]))
    with pytest.raises(MnemometerError, match="resume with the same object"):
        resume(res.path)
    again = resume(res.path, system=Exact())
    assert len(read_items(again.path)) == 15


def test_store_and_agent_keywords_as_a_notebook_user_writes_them(tmp_path: Path):
    res = run("retrieval", store=Exact(), dataset="demo-en", out=tmp_path / "obj")
    assert res.header.system.name == "Exact" and res.summary.counts["items"] == 15
    named = run("retrieval", store="keyword", dataset="demo-en", out=tmp_path / "name")
    assert named.header.system.name == "keyword"
    with pytest.raises(MnemometerError, match="no system to run"):
        run("retrieval", dataset="demo-en", out=tmp_path / "none")
    with pytest.raises(MnemometerError, match="more than one system"):
        run("retrieval", "bm25", store=Exact(), dataset="demo-en", out=tmp_path / "two")


def test_a_suite_that_drives_agents_refuses_a_store_and_the_reverse(tmp_path: Path):
    with pytest.raises(MnemometerError, match="drives agents: pass --agent"):
        run("scenarios", "bm25", out=tmp_path / "a")
    with pytest.raises(MnemometerError, match="drives stores"):
        run("retrieval", SystemSpec.agent("rag"), dataset="demo-en", out=tmp_path / "b")
    with pytest.raises(MnemometerError, match="brings its own items"):
        run("scenarios", SystemSpec.agent("rag"), dataset="demo-en", out=tmp_path / "c")
    with pytest.raises(MnemometerError, match="a condition is listed twice"):
        run_experiment(Experiment("retrieval", [SystemSpec.store("bm25")] * 2, dataset="demo-en"))
    assert not (tmp_path / "a").exists() and not (tmp_path / "c").exists()
