"""The audit's attacks on the decision layer, each against compare, gate and leaderboard.

* A suffix: appending ", not mentioned" to every answer of a shotgun reader wins LoCoMo's
  category 5 by its substring rule, so the item-level ``success`` flag jumped 17.8% ->
  40.2% (+22.5 pp, p = 7e-131) and a gate passed. Decisions now read the declared
  headline (categories 1-4), which the suffix cannot move.
* A leaderboard cell must be the run's own headline (it ranked a LoCoMo run at 0.558, all
  questions with Wilson, where its summary said 72.0 over categories 1-4, cluster-robust).
* A killed run, failed items, unpaired items: a gate passes only on complete evidence.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import seed_file

import mnemometer
from mnemometer.comparison import compare, gate
from mnemometer.comparison._gate import GatePolicy
from mnemometer.llm import resolve_settings
from mnemometer.log import read_items
from mnemometer.report import leaderboard
from mnemometer.runner import RunSettings
from mnemometer.testing import FakeLLMServer
from mnemometer.testing._bench import benchmark_reply


def _locomo(srv: Any, out: Path, **options: Any) -> Any:
    return mnemometer.run(
        "locomo",
        "bm25",
        dataset=str(seed_file("locomo", "locomo10.json")),
        suite_options=options,
        out=out,
        settings=RunSettings(llm=resolve_settings(srv.base_url, srv.model)),
    )


def _success_rate(run_dir: Path) -> float:
    items = read_items(run_dir)
    return sum(r.status == "ok" and bool(r.success) for r in items) / len(items)


@pytest.mark.slow
def test_a_not_mentioned_suffix_moves_neither_the_headline_nor_a_gate(tmp_path: Path):
    def shotgun(body: dict) -> str:
        # Short enough that an appended suffix survives the reader's 64-token cap.
        return benchmark_reply(body)[:200]

    def suffixed(body: dict) -> str:
        return shotgun(body) + ", not mentioned"

    cats = {"categories": ["multi-hop", "adversarial"]}  # category 5 is the suffix's target
    with FakeLLMServer(default=shotgun) as plain:
        base = _locomo(plain, tmp_path / "shotgun", **cats)
    with FakeLLMServer(default=suffixed) as srv:
        cand = _locomo(srv, tmp_path / "suffixed", **cats)
    # The attack works on the old flag...
    assert _success_rate(cand.path) - _success_rate(base.path) > 0.10
    # ...and not on the decision: the headline (F1 over categories 1-4) barely moves.
    # The two readers are the experiment (two endpoints): declared, or the pairing is refused.
    c = compare([base.path], [cand.path], vary=["reader"], resamples=500)
    assert len(c.differs) == 1 and c.differs[0].startswith("reader: base_url")
    assert c.headline_spec.exclude == {"category": ["adversarial"]}
    assert abs(c.headline.delta) < 0.01
    assert c.clusters == 10 and c.headline.test.startswith("cluster-robust CR2")
    verdict = gate(c, GatePolicy(min_headline_delta=0.10, allow_vary=["reader"]))
    assert not verdict.passed
    assert any("F1 delta" in r for r in verdict.reasons)
    # The leaderboard never puts the two readers in one column, and each cell is its run's
    # own headline, interval and all.
    board = leaderboard([base.path, cand.path])
    assert len(board.columns) == 2 and {c.metric for c in board.columns} == {"F1"}
    cells = {cell.runs[0].path: cell for row in board.rows for cell in row.cells.values()}
    for run in (base, cand):
        cell = cells[str(run.path)]
        h = run.summary.headline
        assert cell.value == pytest.approx(h.value)
        assert (cell.low, cell.high) == pytest.approx((h.interval.low, h.interval.high))
        assert cell.n == h.n and cell.method.startswith("cluster-robust")


def test_a_gate_passes_only_on_complete_evidence(tmp_path: Path):
    from test_compare import load_policy_text, make_run

    lenient = "min_headline_delta = -1.0\n"
    a = make_run(tmp_path / "a", [False, True] * 10)
    b = make_run(tmp_path / "b", [True] * 20, condition="hybrid")
    assert gate(compare([a], [b], resamples=200), load_policy_text(tmp_path, lenient)).passed
    # A candidate killed halfway: its header says running, its missing items are unpaired.
    killed = make_run(tmp_path / "k", [True] * 10, condition="hybrid")
    header = json.loads((killed / "header.json").read_text())
    header.update(status="running", item_count=20)
    (killed / "header.json").write_text(json.dumps(header))
    c = compare([a], [killed], resamples=200)
    verdict = gate(c, load_policy_text(tmp_path, lenient))
    reasons = "; ".join(verdict.reasons)
    assert not verdict.passed and "did not finish" in reasons and "without a partner" in reasons
    tolerant = lenient + "allow_unfinished = true\nmax_unpaired_items = 10\n"
    assert gate(c, load_policy_text(tmp_path, tolerant)).passed
    # Failed items are counted per side and fail a gate unless the policy tolerates them.
    failing = make_run(tmp_path / "f", [True] * 20, condition="hybrid")
    lines = (failing / "items.jsonl").read_text().splitlines()
    broken = [json.loads(x) for x in lines]
    for r in broken[:3]:
        r.update(status="error", error="RuntimeError: boom")
    (failing / "items.jsonl").write_text("\n".join(json.dumps(r) for r in broken) + "\n")
    c = compare([a], [failing], resamples=200)
    assert c.candidate.failed == 3 and c.baseline.failed == 0
    verdict = gate(c, load_policy_text(tmp_path, lenient))
    assert not verdict.passed and any("failed items" in r for r in verdict.reasons)
    assert gate(c, load_policy_text(tmp_path, lenient + "max_failed_items = 3\n")).passed


def test_two_judge_models_on_the_same_answers_never_pair_or_share_a_cell_silently(tmp_path):
    # The audit: two LoCoMo runs, the same 199 answers, judged `lenient` by two models named
    # only through --llm-model (the judge asks the reader's model): success 55.8% -> 76.4%,
    # "95% CI [+20.6, +20.6]", p = 9e-13, no note, a gate passed, one leaderboard cell.
    from conftest import invoke_cli

    data = seed_file("locomo", "locomo10.json")
    with FakeLLMServer(default=benchmark_reply, models=["judge-one", "judge-two"]) as srv:
        for model in ("judge-one", "judge-two"):
            r = invoke_cli(
                *("run", "locomo", "-d", data, "-s", "bm25", "--questions", "30"),
                *("--judge", "lenient", "--llm-base-url", srv.base_url),
                *("--llm-model", model, "--out", tmp_path / model, "--format", "none"),
            )
            assert r.exit_code == 0, r.output
    a, b = tmp_path / "judge-one", tmp_path / "judge-two"
    r = invoke_cli("compare", a, b)
    assert r.exit_code == 2
    assert "differ in reader: model judge-one -> judge-two" in r.output
    c = compare([a], [b], vary=["reader", "judge"], resamples=200)
    assert any(d.startswith("judge:") for d in c.differs) and c.varies == ["reader", "judge"]
    verdict = gate(c, GatePolicy(min_headline_delta=-1.0))
    assert not verdict.passed and any("does not allow it" in r for r in verdict.reasons)
    # One conversation: no claim at all, whatever the policy allows.
    assert c.headline.no_claim and c.headline.intervals == [] and c.headline.p_value is None
    board = leaderboard([a, b])
    assert len(board.columns) == 2  # never one cell


def test_two_endpoints_of_one_model_are_told_apart_by_compare_and_the_leaderboard(tmp_path):
    """The same reader model at two endpoints: labels and the differs line name the port."""
    from test_compare import make_run

    runs = []
    for port, outcomes in ((18620, [True, False] * 5), (18622, [True] * 10)):
        path = make_run(tmp_path / str(port), outcomes)
        header = json.loads((path / "header.json").read_text())
        header["llm"] = {"model": "smollm2", "base_url": f"http://127.0.0.1:{port}/v1"}
        (path / "header.json").write_text(json.dumps(header))
        runs.append(path)
    c = compare([runs[0]], [runs[1]], vary=["reader"], resamples=200)
    (line,) = c.differs
    assert ":18620/v1" in line and ":18622/v1" in line, line
    board = leaderboard(runs)
    labels = sorted(col.label for col in board.columns)
    assert len(labels) == 2 and ":18620/v1" in labels[0] and ":18622/v1" in labels[1], labels
