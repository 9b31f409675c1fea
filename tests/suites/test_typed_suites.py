"""Suite directories: loading (ours and Memory Layer's), scoring, conditions, repeats, CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import invoke_cli as cli
from conftest import seed_file

from mnemometer.comparison import compare, gate
from mnemometer.errors import MnemometerError
from mnemometer.log import read_log
from mnemometer.runner import load_conditions
from mnemometer.scoring.text import asserts, label_recall, support
from mnemometer.suites.items import load_suite
from mnemometer.workflows import run_suite

REPO = Path(__file__).resolve().parents[2]
TEAM = REPO / "examples" / "suites" / "team-memory"


def ml(*parts: str) -> Path:
    """A file under ../shared/seed-data/memory-layer (skips with the reason if absent)."""
    return seed_file("memory-layer", *parts)


def test_every_memory_layer_suite_loads_as_it_is():
    suites = sorted(ml("evals").glob("*/*/suite.toml"))
    assert len(suites) == 9
    for manifest in suites:
        s = load_suite(manifest.parent)
        assert s.items and len(s.checksum) == 64
    mq = load_suite(
        ml("evals/suites/memory-quality-v1"),
        memories=ml("derived/memory-quality-v1.seed-capture.json"),
    )
    assert len(mq.items) == 26 and len(mq.memories) == 21
    assert {it.eval_type for it in mq.items} == {
        "retrieval_qa",
        "grounded_answer",
        "adversarial_stale",
    }
    assert "mq-sync" in mq.memories[0].tags


def test_suite_checksum_is_manifest_then_items():
    import hashlib

    s = load_suite(TEAM)
    raw = (
        (TEAM / "suite.toml").read_bytes() + b"\n--items--\n" + (TEAM / "items.jsonl").read_bytes()
    )
    assert s.checksum == hashlib.sha256(raw).hexdigest()


def test_fixture_checksum_hashes_the_tree(tmp_path):
    src = ml("evals/examples/app-build-smoke")
    dst = tmp_path / "suite"
    shutil.copytree(src, dst)
    before = load_suite(dst).fixture_checksum
    assert before is not None
    (dst / "fixtures" / "static-site" / "index.html").write_text("changed")
    assert load_suite(dst).fixture_checksum != before


def _suite(tmp_path: Path, items: str, manifest: str = 'name = "t"\n') -> Path:
    d = tmp_path / "s"
    d.mkdir(exist_ok=True)
    (d / "suite.toml").write_text(manifest)
    (d / "items.jsonl").write_text(items)
    return d


@pytest.mark.parametrize(
    ("items", "message"),
    [
        (
            '# c\n{"eval_type": "retrieval_qa", "id": "a", "question": "q"}\n{"eval_type": ',
            r"items.jsonl:3:\d+: malformed JSON",
        ),
        (
            '{"eval_type": "retrival_qa", "id": "a", "question": "q"}\n',
            r"items.jsonl:1: unknown eval_type 'retrival_qa' \(did you mean 'retrieval_qa'\?\)",
        ),
        (
            '\n{"eval_type": "grounded_answer", "id": "a"}\n',
            r"items.jsonl:2 \(item 'a'\): grounded_answer: missing key 'question'",
        ),
        (
            '{"eval_type": "retrieval_qa", "id": "a", "question": "q", "top_k": "many"}\n',
            r"items.jsonl:1 \(item 'a'\): retrieval_qa: top_k: ",
        ),
        (
            '{"eval_type": "retrieval_qa", "id": "a", "question": "q", "expected_tag": []}\n',
            r"unknown key 'expected_tag' \(did you mean 'expected_tags'\?\)",
        ),
        (
            '{"eval_type": "retrieval_qa", "id": "a", "question": "q"}\n'
            '{"eval_type": "retrieval_qa", "id": "a", "question": "r"}\n',
            r"items.jsonl:2: duplicate item id 'a' \(first on line 1\)",
        ),
        (
            '{"eval_type": "adversarial_stale", "id": "a", "question": "q", "expect": "maybe"}\n',
            r"adversarial_stale: expect: ",
        ),
        ('{"id": "a", "question": "q"}\n', r"items.jsonl:1: missing key 'eval_type'"),
    ],
)
def test_malformed_items_name_line_and_field(tmp_path, items, message):
    d = _suite(tmp_path, items)
    with pytest.raises(MnemometerError, match=message):
        load_suite(d)
    r = cli("run", d, "--condition", "lexical")
    assert r.exit_code == 2
    assert r.output.startswith("error: ") and "Traceback" not in r.output


def test_malformed_manifest(tmp_path):
    d = _suite(tmp_path, "", 'name = "t"\nlabel_stats = "reviewed"\n')
    with pytest.raises(
        MnemometerError, match=r"unknown key 'label_stats' \(did you mean 'label_status'"
    ):
        load_suite(d)
    d = _suite(tmp_path, "", 'name = "t"\nitems = "../elsewhere.jsonl"\n')
    with pytest.raises(MnemometerError, match="leaves the suite"):
        load_suite(d)


def test_missing_or_directory_items_and_memories_files(tmp_path):
    ok = '{"eval_type": "retrieval_qa", "id": "a", "question": "q"}\n'
    d = _suite(tmp_path, ok, 'name = "t"\nitems = "gone.jsonl"\n')
    with pytest.raises(MnemometerError, match=r"gone.jsonl: items file not found$"):
        load_suite(d)
    (d / "dir.jsonl").mkdir()
    d = _suite(tmp_path, ok, 'name = "t"\nitems = "dir.jsonl"\n')
    with pytest.raises(
        MnemometerError, match=r"dir.jsonl: is a directory, expected an items file$"
    ):
        load_suite(d)
    d = _suite(tmp_path, ok, 'name = "t"\nmemories = "gone.jsonl"\n')
    with pytest.raises(MnemometerError, match=r"gone.jsonl: memories file not found$"):
        load_suite(d)
    d = _suite(tmp_path, ok, 'name = "t"\nmemories = "dir.jsonl"\n')
    with pytest.raises(MnemometerError, match=r"dir.jsonl: is a directory, expected a memories"):
        load_suite(d)
    with pytest.raises(MnemometerError, match=r"dir.jsonl: is a directory, expected a condi"):
        load_conditions(d / "dir.jsonl")
    with pytest.raises(MnemometerError, match=r"gone.toml: no such conditions file$"):
        load_conditions(d / "gone.toml")


def test_negation_aware_assertions():
    assert not asserts("Avoid red banners, which the design review rejected.", "red banners")
    assert asserts("Use red banners for errors.", "red banners")
    assert not asserts("Python services use ruff; black is no longer used.", "black")
    assert asserts("Python services use ruff; black is no longer used.", "ruff")
    assert not asserts("The gateway now listens on 9443; port 8081 was closed.", "8081")
    assert not asserts("We replaced Mapwise in March.", "Mapwise")
    assert not asserts("CSV only; an Excel export was requested and declined.", "Excel export")
    assert asserts("no auto-retry after a failure", "no auto-retry")
    assert not asserts("2500 ms", "250 ms")  # whole-word edges
    assert asserts("a 250 ms flush window", "250 MS")


def test_retrieval_scores():
    from mnemometer.suites.items._qa import _rank

    s = {m.name: m for m in _rank(["x", "a", "b"], ["a", "b"], 3)}
    assert s["recall"].value == 1.0 and s["mrr"].value == 0.5 and s["recall"].k == 3
    assert s["ndcg"].value == pytest.approx((1 / 1.585 + 1 / 2) / (1 + 1 / 1.585), rel=1e-3)
    assert all(m.value is None for m in _rank(["a"], [], 3))
    assert label_recall(["Deploy ", "x"], ["deploy"]) == 0.5
    assert label_recall([], ["deploy"]) is None
    assert support("Which port does the gateway use?", "The gateway port is 1") == 2 / 3


def test_run_suite_conditions_repeats_and_artifacts(tmp_path):
    result = run_suite(TEAM, conditions=["no-memory", "lexical"], repeat=2, out=tmp_path / "r")
    assert [p.path.name for p in result.runs] == [
        "no-memory-r0",
        "lexical-r0",
        "no-memory-r1",
        "lexical-r1",
    ]
    logs = [read_log(r.path) for r in result.runs]
    assert {lg.header.run_group for lg in logs} == {result.run_group}
    h = logs[1].header
    assert h.suite == "items" and h.system.name == "bm25" and h.repeat == 0
    assert h.suite_options["suite_checksum"] == load_suite(TEAM).checksum
    assert h.system.condition == "lexical" and h.suite_inputs["profile"] == "offline"
    assert len(h.suite_options["memories_checksum"]) == 64
    assert logs[0].header.dataset.content_hash == h.dataset.content_hash
    assert logs[0].header.config_fingerprint != h.config_fingerprint
    item = logs[1].items[0]
    assert item.groups["eval_type"] == "retrieval_qa" and item.extra["duration_ms"] > 0
    assert item.tokens == {"input": 0, "output": 0, "total": 0}
    # the same suite, compared: no-memory never retrieves, lexical finds most
    c = compare([logs[0].path, logs[2].path], [logs[1].path, logs[3].path], resamples=500)
    assert c.pairs == 64 and c.items == 32 and c.cluster_by is None
    assert c.group("eval_type:retrieval_qa").headline.baseline == 0.0
    assert c.headline.candidate > 0.8 > 0.2 > c.headline.baseline
    # refusal items pass without memory: the answer key never leaks into the baseline
    refuse = c.group("memory_capability:refusal").headline
    assert refuse.baseline == 1.0
    # the negation-aware check: the lexical answer quotes "avoid red banners" and passes
    by_id = {r.item_id: r for r in logs[1].items}
    banner = by_id["ga-error-banner"]
    assert "red banners" in banner.output and _success(banner) == 1.0
    assert _success(by_id["as-gateway-port"]) == 1.0  # newest of the near-best memories
    assert _success(by_id["ga-export"]) == 1.0  # "Excel export ... declined" is not asserted
    # a changed suite refuses to pair
    other = tmp_path / "other"
    shutil.copytree(TEAM, other)
    with open(other / "items.jsonl", "a") as f:
        f.write('{"eval_type": "retrieval_qa", "id": "extra", "question": "deploys"}\n')
    more = run_suite(other, conditions=["lexical"], out=tmp_path / "o")
    with pytest.raises(MnemometerError, match="suite_checksum"):
        compare([logs[0].path], [more.runs[0].path])


def _success(item) -> float:
    return next(m.value for m in item.metrics if m.name == "success")


def test_memory_layer_quality_suite_runs_offline(tmp_path):
    res = run_suite(
        ml("evals/suites/memory-quality-v1"),
        conditions=["no-memory", "lexical"],
        memories=ml("derived/memory-quality-v1.seed-capture.json"),
        out=tmp_path / "mq",
    )
    c = compare([res.runs[0].path], [res.runs[1].path], resamples=300)
    assert c.pairs == 26
    assert c.group("eval_type:retrieval_qa").headline.candidate == 1.0  # tag recall
    verdict = gate(c, ml("evals/gates/memory-quality-v1.toml"))
    names = [ch.name for ch in verdict.checks]
    assert "min_group_candidate_success_rate" in names and "min_metric_delta" in names


def test_conditions_file_and_visible_fallback(tmp_path):
    f = tmp_path / "conditions.toml"
    f.write_text('[kw]\nstore = "keyword"\n[ghost]\nstore = "no-such-store"\nfallback = "tfidf"\n')
    table = load_conditions(f)
    assert table["kw"].store == "keyword" and "hybrid" in table
    with pytest.warns(UserWarning, match="fell back to 'tfidf'"):
        res = run_suite(TEAM, conditions=["kw", "ghost"], conditions_file=f, out=tmp_path / "r")
    assert [r.header.system.name for r in res.runs] == ["keyword", "tfidf"]
    ghost = read_log(res.runs[1].path).header
    assert "no-such-store" in ghost.notes[0]
    assert any("fell back" in n for n in res.runs[1].summary.notes)
    f.write_text('[kw]\nstore = "keyword"\nopts = {}\n')
    with pytest.raises(
        MnemometerError, match=r"\[kw\] unknown key 'opts' \(did you mean 'options'"
    ):
        load_conditions(f)


def test_unknown_condition_and_unsupported_items(tmp_path):
    r = cli("run", TEAM, "--condition", "hybird", "-o", tmp_path / "x")
    assert r.exit_code == 2 and "unknown condition 'hybird' (did you mean 'hybrid'?)" in r.output
    research = ml("evals/suites/research-v1")
    r = cli("run", research, "--condition", "lexical", "-o", tmp_path / "y")
    assert r.exit_code == 2 and "command_task" in r.output and "--skip-unsupported" in r.output
    r = cli(
        "run",
        research,
        "--condition",
        "lexical",
        "--skip-unsupported",
        "--profile",
        "offline",
        "-o",
        tmp_path / "z",
        "--format",
        "json",
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.output[r.output.index("{") :])
    assert out["runs"][0]["items"] == 9
    log = read_log(out["runs"][0]["path"])
    assert log.summary.counts["skipped"] == 3 and "3 item(s) skipped" in log.summary.notes[-1]
    r = cli("run", "retrieval", "--condition", "lexical")
    assert r.exit_code == 2 and "a run of suite 'retrieval' needs --dataset" in r.output


def test_manifest_defaults_are_honoured(tmp_path):
    d = tmp_path / "suite"
    shutil.copytree(TEAM, d)
    text = (d / "suite.toml").read_text().replace("default_repeats = 1", "default_repeats = 2")
    (d / "suite.toml").write_text(text.replace('["no-memory", "hybrid"]', '["lexical"]'))
    res = run_suite(d, out=tmp_path / "r")
    assert [r.path.name for r in res.runs] == ["lexical-r0", "lexical-r1"]
    assert res.runs[0].header.suite_inputs["profile"] == "offline"


def test_llm_profile_against_a_real_http_endpoint(tmp_path, monkeypatch):
    from mnemometer.testing.llm_server import FakeLLMServer, last_user_message

    def answer(body):
        text = last_user_message(body)
        lines = [ln for ln in text.splitlines() if ln.startswith("[")]
        return lines[0].split("] ", 1)[1] if lines else "Insufficient evidence in memory to answer."

    with FakeLLMServer(default=answer) as srv:
        monkeypatch.setenv("MNEMOMETER_LLM_BASE_URL", srv.base_url)
        monkeypatch.setenv("MNEMOMETER_LLM_MODEL", srv.model)
        res = run_suite(
            TEAM, conditions=["no-memory", "lexical"], profile="llm", out=tmp_path / "r"
        )
        assert srv.requests  # the answers really went over HTTP
    logs = [read_log(r.path) for r in res.runs]
    assert logs[1].header.suite_inputs["profile"] == "llm"
    answered = [i for i in logs[1].items if i.groups["eval_type"] == "grounded_answer"]
    assert all(i.tokens.get("total", 0) > 0 for i in answered)
    c = compare([logs[0].path], [logs[1].path], resamples=200)
    assert c.headline.candidate > c.headline.baseline
    assert c.candidate.total_tokens > 0


def test_agent_condition_from_a_conditions_file(tmp_path, monkeypatch):
    """A condition may name an agent: the suite tells it each memory, then asks each item."""
    from mnemometer.testing.llm_server import FakeLLMServer, last_user_message

    def reply(body):
        text = last_user_message(body)
        if "My message: Please remember this:" in text:
            return "Noted."
        # answer with every remembered fact the rag agent retrieved for this question
        facts = [ln[2:] for ln in text.splitlines() if ln.startswith("- Please remember this: ")]
        return (
            " ".join(f.removeprefix("Please remember this: ") for f in facts)
            or "Insufficient evidence in memory to answer."
        )

    f = tmp_path / "conditions.toml"
    f.write_text(
        '[rag-bm25]\nagent = "rag"\noptions = { store = "bm25", top_k = 3 }\n'
        '[both]\nagent = "rag"\nstore = "bm25"\n'
    )
    with pytest.raises(MnemometerError, match=r"\[both\] .*exactly one of 'store' and 'agent'"):
        load_conditions(f)
    f.write_text('[rag-bm25]\nagent = "rag"\noptions = { store = "bm25", top_k = 3 }\n')
    with pytest.raises(MnemometerError, match="pass --profile llm"):
        run_suite(TEAM, conditions=["rag-bm25"], conditions_file=f, out=tmp_path / "x")
    with FakeLLMServer(default=reply) as srv:
        monkeypatch.setenv("MNEMOMETER_LLM_BASE_URL", srv.base_url)
        monkeypatch.setenv("MNEMOMETER_LLM_MODEL", srv.model)
        res = run_suite(
            TEAM,
            conditions=["no-memory", "rag-bm25"],
            conditions_file=f,
            profile="llm",
            out=tmp_path / "r",
        )
        seeded = sum("Please remember this:" in last_user_message(b) for b in srv.requests)
    assert seeded >= 30  # every memory was told to the agent over real HTTP
    agent_log = read_log(res.runs[1].path)
    assert agent_log.header.system.kind == "agent" and agent_log.header.system.name == "rag"
    by_id = {r.item_id: r for r in agent_log.items}
    assert _success(by_id["ga-rate-limit"]) == 1.0 and by_id["ga-rate-limit"].tokens["total"] > 0
    assert next(m for m in by_id["rq-deploy-days"].metrics if m.name == "success").value is None
    c = compare([res.runs[0].path], [res.runs[1].path], resamples=200)
    assert c.headline.pairs == 22  # the 10 retrieval items are not scorable through an agent
    assert c.headline.candidate > c.headline.baseline
    assert c.candidate.total_tokens > 0
