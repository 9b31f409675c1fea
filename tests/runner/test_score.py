"""``mnemometer score``: a finished run re-scored without its system, judged again, resumed.

The runs are LoCoMo (two conversations of the seed file) on a store that counts every call
and refuses to be built once re-scoring starts: re-scoring must never touch it. Judges are
the deterministic test server's rule judges, served under two model names so a judge swap
is a real change of model and endpoint.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import MNEMOMETER, seed_file

import mnemometer
from mnemometer.comparison import PairingError, compare, gate
from mnemometer.comparison._gate import GatePolicy
from mnemometer.errors import MnemometerError
from mnemometer.llm import resolve_settings
from mnemometer.log import read_header, read_items
from mnemometer.runner import RunSettings
from mnemometer.stores import register_store, unregister_store
from mnemometer.stores.bm25 import BM25Store
from mnemometer.testing import FakeLLMServer
from mnemometer.testing._bench import benchmark_reply, is_judge_request


class Watched(BM25Store):
    """bm25 that counts every call, and cannot be built or called once ``armed``."""

    calls = 0
    armed = False

    def __init__(self, **kw: Any) -> None:
        assert not Watched.armed, "re-scoring built the store"
        super().__init__(**kw)

    def store(self, text: str, metadata: dict) -> None:
        self._touch()
        super().store(text, metadata)

    def store_many(self, batch: list) -> None:
        self._touch()
        super().store_many(batch)

    def search(self, query: str, top_k: int):
        self._touch()
        return super().search(query, top_k)

    @staticmethod
    def _touch() -> None:
        assert not Watched.armed, "re-scoring called the store"
        Watched.calls += 1


@pytest.fixture(scope="module")
def server():
    models = ["reader-llm", "judge-a", "judge-b"]
    rules = [(is_judge_request, benchmark_reply)]
    with FakeLLMServer(rules=rules, default=benchmark_reply, models=models) as s:
        yield s


@pytest.fixture(autouse=True)
def watched_store():
    register_store("watched", Watched)
    Watched.armed = False
    yield
    unregister_store("watched")
    Watched.armed = False


def _run(server, tmp: Path, judge: str, name: str) -> Any:
    return mnemometer.run(
        "locomo",
        "watched",
        suite_options={
            "dataset": str(seed_file("locomo", "locomo10.json")),
            "categories": ["temporal", "adversarial"],
            "judges": [judge],
            "judge_endpoints": [f"{judge.partition('@')[2]}={server.base_url}"],
        },
        out=tmp / name,
        settings=RunSettings(llm=resolve_settings(server.base_url, "reader-llm")),
        limit=2,
    )


def _verdicts(run_dir: Path, judge: str) -> dict[tuple[str, str], Any]:
    return {
        (r.item_id, r.step or ""): (r.extra.get("judges") or {}).get(judge, {}).get("correct")
        for r in read_items(run_dir)
    }


def test_a_judge_swap_rescores_without_the_store_and_equals_a_fresh_run(server, tmp_path):
    parent = _run(server, tmp_path, "lenient@judge-a", "parent")
    fresh = _run(server, tmp_path, "strict@judge-b", "fresh")
    before = Watched.calls
    Watched.armed = True  # from here, building or calling the store fails the test
    scored = mnemometer.score(
        parent.path,
        judges=["strict@judge-b"],
        judge_endpoints=[f"judge-b={server.base_url}"],
        out=tmp_path / "scored",
    )
    assert Watched.calls == before
    # Item by item, the re-scored verdicts are a fresh run's with that judge.
    assert _verdicts(scored.path, "strict@judge-b") == _verdicts(fresh.path, "strict@judge-b")
    assert scored.summary.headline.metric == "judge:strict@judge-b"
    assert scored.summary.headline.value == fresh.summary.headline.value
    assert scored.summary.headline.interval == fresh.summary.headline.interval
    # The answers are the parent's, untouched; the old judge's verdicts are gone.
    p_items = {(r.item_id, r.step): r for r in read_items(parent.path)}
    for r in read_items(scored.path):
        old = p_items[(r.item_id, r.step)]
        assert r.output == old.output and r.retrieved == old.retrieved
        assert "lenient@judge-a" not in (r.extra.get("judges") or {})
    h = read_header(scored.path)
    assert h.parent.run_id == parent.header.run_id and h.parent.scoring == parent.header.scoring
    judges = [s.args for s in h.scoring.scorers if s.name == "judge"]
    assert [(j["judge"], j["model"], j["base_url"]) for j in judges] == [
        ("strict@judge-b", "judge-b", server.base_url)
    ]
    assert h.run_group == parent.header.run_group and h.run_id != parent.header.run_id


def test_two_judgings_of_the_same_answers_compare_only_when_declared(server, tmp_path):
    parent = _run(server, tmp_path, "lenient@judge-a", "parent")
    Watched.armed = True
    scored = mnemometer.score(
        parent.path,
        judges=["lenient@judge-b"],
        judge_endpoints=[f"judge-b={server.base_url}"],
        out=tmp_path / "scored",
    )
    # The same answers, the same rule judges: two models that agree. Undeclared, the
    # judge swap is refused; declared, it is the experiment and the line names it.
    with pytest.raises(PairingError, match="differ in judge.*--vary"):
        compare([parent.path], [scored.path])
    c = compare([parent.path], [scored.path], vary=["judge"], resamples=200)
    assert c.varies == ["judge"] and any(d.startswith("judge:") for d in c.differs)
    assert c.headline.delta == 0.0 and c.headline.pairs > 50
    denied = gate(c, GatePolicy(min_headline_delta=-1.0))
    assert not denied.passed and any("does not allow it" in r for r in denied.reasons)
    allowed = {ch.name: ch.passed for ch in gate(c, GatePolicy(allow_vary=["judge"])).checks}
    assert allowed["allow_vary"]
    # Two conversations are two clusters: no claim either way, whatever the policy allows.
    assert c.headline.no_claim and c.clusters == 2 and not allowed["no_claim"]


def test_a_killed_scoring_continues_and_the_cli_matches_the_api(server, tmp_path):
    parent = _run(server, tmp_path, "lenient@judge-a", "parent")
    items = read_items(parent.path)
    total = len(items)
    first = items[0].item_id  # scored first; its judged questions, then one more call
    stop = 1 + sum(r.item_id == first and r.groups["category"] != "adversarial" for r in items)
    Watched.armed = True
    asked, hold = threading.Event(), threading.Event()
    seen = []

    def judge_b(body: dict) -> bool:
        # The first call after the first conversation's waits until the test lets it go:
        # the scoring process is then mid-way (one conversation written), and is killed.
        if body.get("model") != "judge-b" or not is_judge_request(body):
            return False
        seen.append(1)
        if len(seen) == stop:
            asked.set()
            hold.wait(timeout=120)
        return False

    rules = [(judge_b, "unused"), (is_judge_request, benchmark_reply)]
    with FakeLLMServer(rules=rules, default=benchmark_reply, models=["judge-b"]) as slow:
        out = tmp_path / "scored"
        argv = ["--judge", "strict@judge-b", "--judge-endpoint", f"judge-b={slow.base_url}"]
        proc = subprocess.Popen(
            [MNEMOMETER, "score", str(parent.path), *argv, "--out", str(out), "-c", "1"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        assert asked.wait(timeout=300), "the scoring never reached the second conversation"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        hold.set()
        partial = read_items(out)
        # Whole items or none: the first conversation (its lines are written before the
        # next one's first judge call is answered; the kill may race the write itself).
        assert {r.item_id for r in partial} <= {first} and read_header(out).status == "running"
        done = subprocess.run(
            [MNEMOMETER, "run", "--resume", str(out), "--format", "none"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        api = mnemometer.score(
            parent.path,
            judges=["strict@judge-b"],
            judge_endpoints=[f"judge-b={slow.base_url}"],
            out=tmp_path / "api",
        )
    keys = [(r.item_id, r.step) for r in read_items(out)]
    assert len(keys) == len(set(keys)) == total  # none lost, none twice
    assert _verdicts(out, "strict@judge-b") == _verdicts(api.path, "strict@judge-b")
    assert json.loads((out / "summary.json").read_text())["headline"]["value"] == (
        api.summary.headline.value
    )


def test_a_retrieval_run_rescored_under_another_headline(tmp_path):
    r = mnemometer.run("retrieval", "bm25", dataset="demo-en", out=tmp_path / "r")
    s = mnemometer.score(r.path, headline="recall@5", out=tmp_path / "s")
    assert s.summary.headline.label == "recall@5" and not s.summary.headline.binary
    assert s.summary.headline.value == next(
        m.value for m in r.summary.overall if m.name == "recall" and m.k == 5
    )
    assert read_items(s.path) == read_items(r.path)  # nothing re-scored but the headline
    with pytest.raises(MnemometerError, match="asks no judge"):
        mnemometer.score(r.path, judges=["strict"], out=tmp_path / "j")


def test_an_unfinished_run_is_not_scored(tmp_path):
    r = mnemometer.run("retrieval", "bm25", dataset="demo-en", out=tmp_path / "r")
    header = json.loads((r.path / "header.json").read_text())
    header["status"] = "running"
    (r.path / "header.json").write_text(json.dumps(header))
    with pytest.raises(MnemometerError, match="did not finish"):
        mnemometer.score(r.path, headline="recall@5")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))


def test_results_read_in_one_line(tmp_path):
    # print(mnemometer.run(...)) printed over 100,000 characters (issue 32 §5).
    a = mnemometer.run("retrieval", "keyword", dataset="demo-en", out=tmp_path / "a")
    b = mnemometer.run("retrieval", "bm25", dataset="demo-en", out=tmp_path / "b")
    assert repr(a) == (
        f"RunResult({a.path}: retrieval on demo-en, hit@20 "
        f"{a.summary.headline.value:.3f} [{a.summary.headline.interval.low:.3f}, "
        f"{a.summary.headline.interval.high:.3f}], 15 items)"
    )
    assert str(a) == repr(a) and len(repr(a)) < 200
    assert "<table>" in a._repr_html_() and "hit@20" in a._repr_html_()
    assert a.table().startswith("retrieval · keyword · demo-en")
    c = compare([a.path], [b.path], resamples=200)
    assert (
        repr(c).startswith("Comparison(retrieval: bm25 vs keyword, hit@20 ") and len(repr(c)) < 300
    )
    assert str(c) == repr(c)  # print(comparison) too: pydantic's str lists every field
