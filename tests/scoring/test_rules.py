"""Every peer's retrieval rule on one hand-built ranking, and the rule-sensitivity table.

The real LoCoMo suite runs a hand-built conversation (``rule_helpers``) with a store that
answers each question with a fixed ranking; every rule's value is compared with the value
worked out by hand from the peer's code, the table with the rules' means, and its random
column with the random rankings the records hold, scored again here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import rule_helpers as H
from benchmark_helpers import run_longmemeval

from mnemometer.llm import resolve_settings
from mnemometer.log import read_log
from mnemometer.log._schema import ScorerSpec
from mnemometer.report import report
from mnemometer.runner import RunSettings
from mnemometer.scoring import build, scorer_names
from mnemometer.scoring.rules import (
    RANDOM_SEED,
    RULE_DEPTH,
    RULES,
    AnswerInContext,
    DistinctSession,
    Rule,
    SessionHit,
    TurnAny,
    random_record,
)
from mnemometer.testing import FakeLLMServer
from mnemometer.testing._bench import benchmark_reply


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The hand-built conversation run through the LoCoMo suite on the scripted store."""
    root = tmp_path_factory.mktemp("rules")
    return H.run_locomo(H.write_file(root), root / "run")


def _records(res) -> dict[str, dict]:
    """Question letter -> its record as plain data, in the file's order."""
    rows = read_log(res.path).items
    assert [r.step for r in rows] == [f"tiny/q{n:03d}" for n in range(1, 6)]
    return {H.LETTERS[i]: r.model_dump() for i, r in enumerate(rows)}


def _expected_ks(rule: type[Rule]) -> tuple[int, ...]:
    return (*H.KS, 10) if 10 in rule.default_ks else H.KS


def test_every_rule_scores_the_hand_built_ranking_as_worked_out_from_the_peers_code(tiny):
    records = _records(tiny)
    for rule in RULES:
        ks = _expected_ks(rule)
        scorer = rule(ks=ks)
        for letter, want in H.EXPECTED[rule.name].items():
            got = {m["k"]: m["value"] for m in scorer.score(records[letter])}
            assert tuple(got.get(k) for k in ks) == want, (rule.name, letter)


def test_the_run_records_each_rule_at_its_default_cut_off(tiny):
    records = _records(tiny)
    for rule in RULES:
        k = rule.default_ks[0]
        for letter, want in H.EXPECTED[rule.name].items():
            found = [m for m in records[letter]["metrics"] if m["name"] == f"rule:{rule.name}"]
            value = _expected_ks(rule).index(k)
            assert [m["value"] for m in found] == ([] if want[value] is None else [want[value]])


def test_the_record_holds_what_the_rules_read_and_no_more(tiny):
    a = _records(tiny)["A"]["extra"]
    assert a["sessions"] == [H.session_of(d) for d in H.ALL]
    assert a["texts"] == [H.TEXTS[d] for d in H.ALL]  # the words, not "Speaker: words"
    assert a["evidence_sessions"] == ["session_1", "session_3"]
    assert _records(tiny)["C"]["extra"]["evidence_sessions"] == []
    random = a["random"]
    assert sorted(random["ids"]) == sorted(f"tiny/{d}" for d in H.TEXTS)  # 9 turns < depth
    assert random["sessions"] == [H.session_of(i.split("/")[1]) for i in random["ids"]]


def test_the_table_is_each_rules_mean_with_the_random_ranking_beside(tiny):
    records = _records(tiny)
    table = next(t for t in tiny.summary.tables if t.name == "rule_sensitivity")
    assert [d["rule"] for d in table.data] == [r.name for r in RULES]
    for row, rule in zip(table.data, RULES, strict=True):
        k = rule.default_ks[0]
        want = [v[_expected_ks(rule).index(k)] for v in H.EXPECTED[rule.name].values()]
        want = [v for v in want if v is not None]
        assert (row["k"], row["n"]) == (k, len(want))
        assert row["value"] == pytest.approx(sum(want) / len(want))
        # The random column: the records' random rankings under the same rule, scored here.
        again = [rule().value(random_record(r), k) for r in records.values()]
        again = [v for v in again if v is not None]
        if rule.texts_needed:
            assert row["random"] is None  # a random ranking has no texts
        else:
            assert row["random"] == {
                "n": len(again),
                "value": pytest.approx(sum(again) / len(again)),
            }
    assert tiny.summary.sections["rules"]["rules"] == table.data
    spread = tiny.summary.sections["rules"]["spread"]
    assert spread == pytest.approx(
        max(d["value"] for d in table.data) - min(d["value"] for d in table.data)
    )


def test_the_table_renders_in_every_report_format(tiny):
    for fmt in ("text", "md", "html"):
        out = report(tiny.path, fmt)
        assert "every peer&#x27;s rule" in out or "every peer's rule" in out, fmt
        assert "distinct-session" in out and "engram-search" in out, fmt
    doc = json.loads(report(tiny.path, "json"))
    assert "rule_sensitivity" in {t["name"] for t in doc["summary"]["tables"]}


def test_the_random_ranking_is_seeded_by_the_question_alone(tiny, tmp_path):
    """Every system's records carry the same random ranking of a question: a paired baseline."""
    again = H.run_locomo(H.write_file(tmp_path), tmp_path / "again", seed=99)
    first, second = _records(tiny), _records(again)
    assert [r["extra"]["random"] for r in first.values()] == [
        r["extra"]["random"] for r in second.values()
    ]
    assert len({json.dumps(r["extra"]["random"]["ids"]) for r in first.values()}) == 5
    assert RANDOM_SEED.endswith("/")


def test_a_failed_search_is_a_miss_under_every_rule_whose_questions_it_belongs_to():
    failed = {
        "status": "error",
        "expected": ["c/D1:2"],
        "groups": {"category": "temporal"},
        "extra": {"gold": "x", "evidence_sessions": ["session_1"]},
    }
    for rule in RULES:
        want = [{"name": f"rule:{rule.name}", "k": rule.default_ks[0], "value": 0.0}]
        assert rule().score(failed) == want, rule.name
    adversarial = {**failed, "groups": {"category": "adversarial"}, "expected": []}
    adversarial["extra"] = {"evidence_sessions": []}
    scored = {r.name for r in RULES if r().score(adversarial)}
    assert scored == {"raw-any", "raw-strict", "sess-any", "sess-strict"}  # infolang: all


def test_a_question_answered_without_a_ranking_is_under_no_rule():
    """A baseline's or an agent's question: no hits, and no evidence sessions recorded."""
    oracle = {"status": "ok", "expected": ["c/D1:1"], "retrieved": [], "extra": {"gold": "x"}}
    for record in (oracle, {**oracle, "status": "error"}):
        assert [r.name for r in RULES if r().score(record)] == []
    ranked_nothing = {**oracle, "extra": {"gold": "x", "evidence_sessions": ["s1"], "sessions": []}}
    assert TurnAny().score(ranked_nothing) == [{"name": "rule:turn-any", "k": 5, "value": 0.0}]


def test_a_record_that_does_not_say_gets_no_value_rather_than_a_guess():
    old = {"status": "ok", "expected": ["c/D1:1"], "retrieved": [{"id": "c/D1:1", "score": 1}]}
    assert TurnAny().score(old) == [{"name": "rule:turn-any", "k": 5, "value": 1.0}]
    for rule in (SessionHit, DistinctSession, AnswerInContext):
        assert rule().score(old) == [], rule.name
    # A ranking deeper than the sessions recorded: no session-hit past them.
    deep = {
        "status": "ok",
        "expected": ["c/x12"],
        "retrieved": [{"id": f"c/x{i}", "score": 1} for i in range(1, 13)],
        "extra": {
            "sessions": ["s1"] * RULE_DEPTH,
            "evidence_sessions": ["s1"],
            "texts": ["t"] * RULE_DEPTH,
        },
    }
    assert [m["k"] for m in SessionHit(ks=(10, 11)).score(deep)] == [10]
    assert [m["k"] for m in AnswerInContext(ks=(10, 11)).score(deep)] == [10]


def test_longmemeval_abstention_is_left_to_the_rules_that_score_it():
    """memory-core-eval sets abstention apart; engram and infolang score it on its sessions."""
    record = {
        "status": "ok",
        "expected": [],
        "retrieved": [{"id": "q/s2/1", "score": 2}, {"id": "q/s1/1", "score": 1}],
        "groups": {"type": "single-session-user"},
        "extra": {"abstention": True, "evidence_sessions": ["s1"], "sessions": ["s2", "s1"]},
    }
    got = {r.name: [m["value"] for m in r(ks=(1, 2)).score(record)] for r in RULES}
    assert got["session-hit"] == [] and got["turn-any"] == []
    assert got["distinct-session"] == [0.0, 1.0] and got["sess-any"] == [0.0, 1.0]
    assert got["raw-any"] == [0.0, 0.0]  # infolang: empty (turn) evidence is a miss


def test_every_rule_is_a_registered_scorer_rebuilt_from_its_spec():
    assert {r.name for r in RULES} <= set(scorer_names())
    for rule in RULES:
        spec = rule(ks=(3, 7)).spec()
        again = build(ScorerSpec.model_validate(spec.model_dump()))
        assert type(again) is rule and again.spec() == spec
        assert spec.sha256 != rule().spec().sha256
    with pytest.raises(ValueError, match="cut-offs of 1 or more"):
        TurnAny(ks=(0,))


def test_longmemeval_runs_carry_the_table_with_the_answer_sessions(tmp_path: Path):
    with FakeLLMServer(default=benchmark_reply) as srv:
        res = run_longmemeval(
            RunSettings(llm=resolve_settings(srv.base_url, srv.model)), tmp_path / "lme"
        )
    rows = {r.step: r for r in read_log(res.path).items}
    assert rows["mini_0004_abs"].extra["evidence_sessions"] == ["answer_mini_0004_1"]
    assert rows["mini_0002"].extra["evidence_sessions"] == [
        "answer_mini_0002_1",
        "answer_mini_0002_2",
    ]
    table = {d["rule"]: d for d in res.summary.sections["rules"]["rules"]}
    assert table["turn-any"]["n"] == 3  # the abstention question has no evidence turn
    assert table["session-hit"]["n"] == 3  # memory-core-eval sets it apart
    assert table["distinct-session"]["n"] == 4 and table["sess-any"]["n"] == 4
    assert all(d["random"] is not None for d in table.values() if d["rule"] != "answer-in-context")
