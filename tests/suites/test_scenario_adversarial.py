"""Adversarial grading: negations, shotguns and near misses fail; right paraphrases pass.

``tests/data/grading/adversarial.jsonl`` holds 178 replies over the 22 graded turns of the
13 packaged scenarios, each with the score it must get, in five kinds: ``negation`` ("Not
Amazon.", "Amazon is false.", "Hardly Gold."), ``shotgun`` ("Amazon, Apple, Meta", "Amazon
or some other big tech company"), ``near-miss`` ("Monday at 3pm", "john@example.org", "Mon
15h"), ``paraphrase`` ("Nope", "Monday at 14:00", "Mon 14h", "Amazon, I'm not sure") and
``former`` ("Amazon (formerly Google)"). Rows whose ``why`` starts "issue 29" are that
issue's §7 families. ``scripts/grading_audit.py`` prints the same table kind by kind for any
version of the grader (docs/scenarios.md has the figures before and after).

End to end, four memoryless agents that read the answer key play the whole suite through
``mnemometer.run``: the oracle answers every graded turn with its expected answer (1.0), the
negation agent denies it, the shotgun agent lists it among other candidates and the open
agent offers it "or something else" (all near 0). This module imports only what suite
version 1 also had, so the script can run its agents against an older grader.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mnemometer.suites.scenarios import ScenarioSuite, load_scenarios

TABLE = Path(__file__).parents[1] / "data" / "grading" / "adversarial.jsonl"
ROWS = [json.loads(line) for line in TABLE.read_text(encoding="utf-8").splitlines()]
SCENARIOS = {s.id: s for s in load_scenarios()}
STEPS = {sid: [st for st in s.steps if st.grade is not None] for sid, s in SCENARIOS.items()}


def _grade(suite, row):
    step = STEPS[row["scenario"]][row["turn"]]
    return suite.grade(row["reply"], step.grade, step.context)


@pytest.mark.parametrize(
    "row", ROWS, ids=[f"{r['kind']}-{r['scenario']}-{r['turn']}-{r['reply']}" for r in ROWS]
)
def test_adversarial_reply(row):
    got = _grade(ScenarioSuite(similarity="none"), row)
    assert got.score == row["score"], (got.reason, got.competing, got.missing, row.get("why"))


def test_table_covers_every_kind_and_every_fact_turn():
    kinds = {r["kind"] for r in ROWS}
    assert kinds == {"negation", "shotgun", "near-miss", "paraphrase", "former"}
    turns = {(sid, k) for sid, steps in STEPS.items() for k in range(len(steps))}
    for kind in ("negation", "shotgun"):
        covered = {(r["scenario"], r["turn"]) for r in ROWS if r["kind"] == kind}
        # every graded turn with a fact to deny or hedge (the formal reply to thanks has none)
        assert covered == turns - {("personality_consistency_formal", 2)}, kind
    assert all(r["score"] == 0.0 for r in ROWS if r["kind"] in ("negation", "shotgun", "near-miss"))
    assert all(r["score"] > 0.0 for r in ROWS if r["kind"] in ("paraphrase", "former"))


# ---- memoryless agents that read the answer key --------------------------------------


def _first(kind, sid, k):
    return next(
        (r["reply"] for r in ROWS if r["kind"] == kind and (r["scenario"], r["turn"]) == (sid, k)),
        None,
    )


class Replay:
    """An agent factory that answers each graded turn by ``strategy`` and knows nothing
    else: it reads the scenario id from its namespace and counts user turns."""

    def __init__(self, strategy):
        self.strategy = strategy

    def create(self, namespace):
        sid = re.sub(r"-[0-9a-f]{6}$", "", namespace)
        return _ReplayAgent(self.strategy, sid, SCENARIOS[sid])

    def close(self):
        pass


class _ReplayAgent:
    def __init__(self, strategy, sid, scenario):
        self.replies = []
        graded = 0
        for step in scenario.steps:
            if step.kind != "user":
                continue
            if step.grade is None:
                self.replies.append("Noted.")
                continue
            self.replies.append(strategy(sid, graded, step.grade))
            graded += 1
        self.turn = 0

    def start_session(self, system=None):
        pass

    def send(self, message):
        from mnemometer.agents import Reply

        self.turn += 1
        return Reply(self.replies[self.turn - 1])

    def close(self):
        pass


def oracle(sid, k, grade):
    return grade.expected


def negation(sid, k, grade):
    """Deny the right answer (the table's first negation for the turn)."""
    return _first("negation", sid, k) or grade.expected


def shotgun(sid, k, grade):
    """List the right answer among other candidates (the table's first shotgun)."""
    return _first("shotgun", sid, k) or grade.expected


def open_alternative(sid, k, grade):
    """Offer the right answer beside an unnamed alternative."""
    return f"{grade.expected} or something else" if grade.required else grade.expected


STRATEGIES = {
    "oracle": oracle,
    "negation": negation,
    "shotgun": shotgun,
    "open": open_alternative,
}


def run_agent(name, out):
    """Accuracy of one strategy over all 13 scenarios, through the public run API."""
    from mnemometer import SystemSpec, run

    res = run(
        "scenarios",
        SystemSpec.of(Replay(STRATEGIES[name])),
        suite_options={"similarity": "none"},
        out=out,
    )
    return next(m.value for m in res.summary.overall if m.name == "accuracy")


@pytest.mark.parametrize(
    ("name", "accuracy"),
    [
        ("oracle", 1.0),
        # Both get only the formal persona's reply to thanks (no fact: "Sir" is the test),
        # 1 of that scenario's 3 graded turns: (1/3) / 13 = 0.026.
        ("negation", 1 / 39),
        ("shotgun", 1 / 39),
        ("open", 1 / 39),
    ],
)
def test_memoryless_agents_end_to_end(name, accuracy, tmp_path):
    assert run_agent(name, tmp_path / name) == pytest.approx(accuracy)
