"""compare and gate: pairing rules, statistics wiring, refusals, CLI exit codes."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import invoke_cli as _cli

from mnemometer.comparison import PairingError, compare, gate, load_policy, split_sides
from mnemometer.errors import MnemometerError
from mnemometer.log._schema import DatasetRef, ItemResult, Metric, RunHeader, SystemRef
from mnemometer.log._writer import ItemWriter, write_header

SEED = Path(__file__).resolve().parents[2].parent / "shared" / "seed-data" / "memory-layer"
_T0 = datetime(2026, 1, 1, tzinfo=UTC)


def make_run(
    path: Path,
    successes: list[bool],
    *,
    condition: str = "lexical",
    group: str = "g1",
    repeat: int = 0,
    dataset_hash: str = "h1",
    recall: list[float] | None = None,
    tokens: int | None = None,
    types: list[str] | None = None,
    conversation: bool = False,
    ids: list[str] | None = None,
    options: dict | None = None,
) -> Path:
    """Write a real run directory (header + JSONL) with the given per-item outcomes."""
    path.mkdir(parents=True)
    header = RunHeader(
        run_id=uuid.uuid4().hex[:12],
        run_group=group,
        repeat=repeat,
        suite="items",
        suite_version="1",
        suite_options={"suite_checksum": "abc", **(options or {})},
        suite_inputs={"profile": "offline"},
        dataset=DatasetRef(name="d", version="1", content_hash=dataset_hash, language="en"),
        system=SystemRef(name="bm25", condition=condition, implementation="x:Y"),
        config_fingerprint="f",
        package_version="0",
        python_version="3",
        platform="p",
        created_at=_T0 + timedelta(minutes=repeat),
        status="finished",
        item_count=len(successes),
    )
    write_header(path, header)
    w = ItemWriter(path)
    for i, ok in enumerate(successes):
        metrics = [Metric(name="success", value=float(ok))]
        if recall is not None:
            metrics.append(Metric(name="recall_at_k", value=recall[i]))
        groups = {"eval_type": (types or ["retrieval_qa"] * len(successes))[i]}
        if conversation:
            groups["conversation"] = f"c{i // 4}"
        w.write(
            ItemResult(
                item_id=(ids or [f"item-{j}" for j in range(len(successes))])[i],
                index=i,
                success=ok,
                groups=groups,
                metrics=metrics,
                latency_ms=1.0 + i,
                tokens={"total": tokens} if tokens is not None else {},
            )
        )
    w.close()
    return path


def test_self_comparison_has_zero_delta_and_p_one(tmp_path):
    outcomes = [True, False, True, True, False, True]
    a = make_run(tmp_path / "a", outcomes, recall=[1, 0, 1, 0.5, 0, 1])
    b = make_run(tmp_path / "b", outcomes, recall=[1, 0, 1, 0.5, 0, 1])
    c = compare([a], [b], resamples=500)
    assert c.pairs == 6
    assert c.headline.delta == 0.0 and c.headline.p_value == 1.0
    (m,) = c.metrics
    assert m.mean_delta == 0.0 and m.p_value == 1.0
    assert all(iv.low == iv.high == 0.0 for iv in m.intervals)


def test_swapping_sides_flips_signs(tmp_path):
    a = make_run(tmp_path / "a", [False] * 8 + [True] * 4, recall=[0.0] * 8 + [1.0] * 4, tokens=10)
    b = make_run(
        tmp_path / "b",
        [True] * 10 + [False] * 2,
        recall=[1.0] * 10 + [0.5] * 2,
        condition="hybrid",
        tokens=30,
    )
    fwd, back = compare([a], [b], resamples=500), compare([b], [a], resamples=500)
    assert fwd.headline.delta == pytest.approx(6 / 12)
    assert back.headline.delta == pytest.approx(-fwd.headline.delta)
    assert (fwd.headline.mcnemar_b, fwd.headline.mcnemar_c) == (8, 2)
    assert (back.headline.mcnemar_b, back.headline.mcnemar_c) == (2, 8)
    assert fwd.headline.p_value == pytest.approx(back.headline.p_value)
    assert fwd.headline.p_value == pytest.approx(0.109375)  # binomtest(8, 10)
    assert fwd.metrics[0].mean_delta == pytest.approx(-back.metrics[0].mean_delta)
    assert fwd.cost.token_delta == 240 and back.cost.token_delta == -240
    assert fwd.candidate.conditions == ["hybrid"]


def test_holm_and_groups(tmp_path):
    types = ["retrieval_qa"] * 6 + ["grounded_answer"] * 6
    a = make_run(tmp_path / "a", [False] * 12, types=types)
    b = make_run(tmp_path / "b", [True] * 6 + [False] * 6, types=types)
    c = compare([a], [b], resamples=300)
    rq = c.group("eval_type:retrieval_qa")
    ga = c.group("eval_type:grounded_answer")
    assert rq.headline.candidate == 1.0 and ga.headline.candidate == 0.0
    assert rq.headline.pairs == ga.headline.pairs == 6
    # Holm never lowers a p-value and the smallest one is scaled by the number of tests.
    tests = [c.headline, *c.metrics] + [x for g in c.groups for x in (g.headline, *g.metrics)]
    assert all(t.p_holm >= t.p_value for t in tests)
    # three tests: overall p = rq p = 2 * 0.5**6, ga p = 1; Holm: 3 * 0.03125, then 1
    assert len(tests) == 3
    assert c.headline.p_holm == pytest.approx(0.09375)
    assert ga.headline.p_holm == 1.0


def test_repeats_are_aggregated_per_item_before_any_test(tmp_path):
    base = [
        make_run(
            tmp_path / f"b{r}", [False, True, False, True, False], repeat=r, condition="no-memory"
        )
        for r in range(3)
    ]
    cand = [
        make_run(tmp_path / f"c{r}", [True, True, r > 0, True, True], repeat=r, condition="hybrid")
        for r in range(3)
    ]
    c = compare(base, cand, resamples=500)
    assert c.pairs == 15 and c.items == 5 and c.headline.pairs == 5
    assert c.cluster_by is None  # repeats are aggregated, not clustered
    assert c.headline.candidate == 1.0  # item 3: 2 of 3 repeats succeeded, a majority
    assert (c.headline.mcnemar_b, c.headline.mcnemar_c) == (3, 0)
    assert c.headline.p_value == pytest.approx(0.25)  # binomtest(3, 3): 5 items, not 15 pairs
    assert any("aggregated per item" in n for n in c.notes)
    for key in ("max_mcnemar_p_value", "max_item_mcnemar_p_value"):
        tmp = tmp_path / "p.toml"
        tmp.write_text(f"{key} = 0.05\n")
        verdict = gate(c, load_policy(tmp))
        assert not verdict.passed and "over 5 items" in verdict.reasons[0]


def test_identical_repeats_change_no_p_value_and_no_gate(tmp_path):
    # The audit: three deterministic repeats of one comparison moved McNemar p from 0.0703
    # to 0.000277 and flipped a gate. Repeating must change nothing.
    outcomes_b = [False] * 7 + [True] * 5
    outcomes_c = [True] * 7 + [False] + [True] * 4
    one = compare(
        [make_run(tmp_path / "b", outcomes_b, condition="no-memory")],
        [make_run(tmp_path / "c", outcomes_c, condition="hybrid")],
        resamples=500,
    )
    base = [
        make_run(tmp_path / f"b{r}", outcomes_b, repeat=r, condition="no-memory") for r in range(3)
    ]
    cand = [
        make_run(tmp_path / f"c{r}", outcomes_c, repeat=r, condition="hybrid") for r in range(3)
    ]
    three = compare(base, cand, resamples=500)
    assert one.headline.p_value == pytest.approx(0.0703125)  # binomtest(7, 8)
    assert three.headline.p_value == one.headline.p_value
    assert three.headline.mde == one.headline.mde and three.items == one.items == 12
    policy = tmp_path / "p.toml"
    policy.write_text("max_mcnemar_p_value = 0.05\nmin_paired_items = 20\n")
    assert not gate(one, load_policy(policy)).passed
    assert not gate(three, load_policy(policy)).passed


def test_a_run_compared_with_itself_has_delta_zero_and_p_one(tmp_path):
    a = make_run(tmp_path / "a", [True, False, True, True], recall=[1, 0, 0.5, 1])
    c = compare([a], [a], resamples=200)
    assert c.headline.delta == 0.0 and c.headline.p_value == 1.0
    assert all(m.mean_delta == 0.0 and m.p_value == 1.0 for m in c.metrics)
    r = _cli("compare", a, a)
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output


def test_a_constant_metric_delta_gets_an_exact_p_not_zero(tmp_path):
    a = make_run(tmp_path / "a", [True, True], recall=[0.0, 0.0])
    b = make_run(tmp_path / "b", [True, True], recall=[1.0, 1.0], condition="hybrid")
    (m,) = compare([a], [b], resamples=200).metrics
    assert m.mean_delta == 1.0 and m.p_value == pytest.approx(0.5)  # 2 items, exact
    assert m.test == "sign-flip-exact" and m.pairs == 2


def test_conversation_clusters(tmp_path):
    a = make_run(tmp_path / "a", [False, True] * 6, conversation=True)
    b = make_run(tmp_path / "b", [True] * 12, conversation=True)
    c = compare([a], [b], resamples=300)
    assert c.cluster_by == "conversation" and c.clusters == 3
    # Three conversations cannot support a claim: no interval, no test, and a gate fails.
    assert c.headline.no_claim and c.headline.p_value is None and c.headline.intervals == []
    verdict = gate(c, load_policy_text(tmp_path, "min_headline_delta = 0.1\n"))
    assert not verdict.passed and any("only 3 clusters" in r for r in verdict.reasons)


def test_duplicate_repeat_is_refused_never_overwritten(tmp_path):
    a0 = make_run(tmp_path / "a0", [True])
    a0b = make_run(tmp_path / "a0b", [False])
    b0 = make_run(tmp_path / "b0", [True])
    with pytest.raises(PairingError, match="both repeat 0 of run group g1"):
        compare([a0, a0b], [b0])


def test_runs_from_different_invocations_pair_by_order(tmp_path):
    a = make_run(tmp_path / "a", [False, False], group="gA")
    b = make_run(tmp_path / "b", [True, True], group="gB")
    assert compare([a], [b], resamples=100).headline.delta == 1.0
    b2 = make_run(tmp_path / "b2", [True, True], group="gB", repeat=1)
    with pytest.raises(PairingError, match=r"repeats \[0\].*repeats \[0, 1\]"):
        compare([a], [b, b2])


def test_different_datasets_refused_unless_forced(tmp_path):
    a = make_run(tmp_path / "a", [False, True])
    b = make_run(tmp_path / "b", [True, True], dataset_hash="other")
    with pytest.raises(PairingError, match="differ in dataset: content hash h1 -> other.*--force"):
        compare([a], [b])
    c = compare([a], [b], force=True, resamples=100)
    assert c.forced and "content hash h1 -> other" in c.mismatches[0]
    policy = load_policy_text(tmp_path, "min_paired_items = 1\n")
    assert not gate(c, policy).passed
    assert gate(c, load_policy_text(tmp_path, "allow_forced = true\n")).passed


def test_unpaired_items_are_reported(tmp_path):
    a = make_run(tmp_path / "a", [True, True, True], ids=["x", "y", "z"])
    b = make_run(tmp_path / "b", [True, True], ids=["x", "y"])
    c = compare([a], [b], resamples=100)
    assert c.pairs == 2 and c.unpaired == 1
    assert any("z" in n for n in c.notes)


def load_policy_text(tmp_path: Path, text: str):
    p = tmp_path / f"policy-{uuid.uuid4().hex[:6]}.toml"
    p.write_text(text)
    return load_policy(p)


def test_split_sides(tmp_path):
    runs = tmp_path / "runs"
    make_run(runs / "hybrid-r0", [True], condition="hybrid")
    make_run(runs / "no-memory-r0", [False], condition="no-memory")
    make_run(runs / "lexical-r0", [False], condition="lexical")
    with pytest.raises(MnemometerError, match="pass --baseline COND"):
        split_sides([runs], None, "hybrid")
    with pytest.raises(MnemometerError, match="cannot tell baseline from candidate"):
        split_sides([runs], None, None)
    base, cand = split_sides([runs], "no-memory", "hybrid")
    assert [p.name for p in base] == ["no-memory-r0"] and [p.name for p in cand] == ["hybrid-r0"]
    with pytest.raises(MnemometerError, match="did you mean 'hybrid'"):
        split_sides([runs], "no-memory", "hybird")
    base, cand = split_sides([runs / "lexical-r0", "vs", runs / "hybrid-r0"])
    assert cand[0].name == "hybrid-r0"


def test_cli_compare_and_gate_exit_codes(tmp_path):
    types = ["retrieval_qa"] * 10 + ["adversarial_stale"] * 12
    make_run(
        tmp_path / "runs" / "nm",
        [False] * 22,
        condition="no-memory",
        types=types,
        recall=[0.0] * 22,
    )
    make_run(
        tmp_path / "runs" / "fm",
        [True] * 21 + [False],
        condition="full-memory",
        types=types,
        recall=[1.0] * 22,
    )
    out = tmp_path / "cmp.json"
    r = _cli(
        "compare", str(tmp_path / "runs"), "--resamples", "200", "-o", str(out), "--format", "md"
    )
    assert r.exit_code == 0, r.output
    assert "| success (headline) | 0.0% | 95.5% |" in r.output
    data = json.loads(out.read_text())
    assert data["kind"] == "mnemometer-comparison" and data["pairs"] == 22
    # Memory Layer's own gate files, as they are.
    ml = SEED / "evals" / "gates"
    if not ml.exists():
        pytest.skip(f"seed data not found at {ml}")
    r = _cli("gate", str(out), "--policy", str(ml / "research-v1.toml"))
    assert r.exit_code == 0, r.output
    assert r.output.startswith("gate: pass")
    r = _cli("gate", str(out), "--policy", str(ml / "memory-quality-v1.toml"))
    assert r.exit_code == 1
    assert "FAIL group eval_type:adversarial_stale candidate success 0.9167" in r.output


def test_cli_gate_bad_input_exits_2(tmp_path):
    a = make_run(tmp_path / "a", [False, True])
    b = make_run(tmp_path / "b", [True, True])
    out = tmp_path / "cmp.json"
    assert _cli("compare", str(a), str(b), "-o", str(out), "--resamples", "50").exit_code == 0
    bad = tmp_path / "bad.toml"
    bad.write_text("min_paired_item = 3\n")
    r = _cli("gate", str(out), "--policy", str(bad))
    assert r.exit_code == 2
    assert "unknown key 'min_paired_item' (did you mean 'min_paired_items'?)" in r.output
    bad.write_text("min_paired_items = [\n")
    r = _cli("gate", str(out), "--policy", str(bad))
    assert r.exit_code == 2 and "malformed TOML" in r.output
    bad.write_text("min_paired_items = 'many'\n")
    assert _cli("gate", str(out), "--policy", str(bad)).exit_code == 2
    notcmp = tmp_path / "x.json"
    notcmp.write_text("{}")
    r = _cli("gate", str(notcmp), "--policy", str(SEED / "evals/gates/research-v1.toml"))
    assert r.exit_code == 2 and "not a comparison" in r.output
    group = tmp_path / "g.toml"
    group.write_text('[min_group_candidate_success_rate]\n"eval_type:missing" = 0.5\n')
    r = _cli("gate", str(out), "--policy", str(group))
    assert r.exit_code == 1 and "no paired observations" in r.output


def test_cli_compare_refusal_exits_2(tmp_path):
    a = make_run(tmp_path / "a", [False, True])
    b = make_run(tmp_path / "b", [True, True], dataset_hash="zzz")
    r = _cli("compare", str(a), str(b))
    assert r.exit_code == 2
    assert "error: refusing to pair runs" in r.output and "--force" in r.output
    r = _cli("compare", str(a), str(tmp_path / "missing"))
    assert r.exit_code == 2 and "no such run directory" in r.output


def test_retrieval_suite_runs_compare(tmp_path):
    from mnemometer.datasets._models import Dataset, DatasetInfo, Memory, Query
    from mnemometer.runner import run

    texts = [
        "the cat sat on the mat",
        "dogs bark at night",
        "the gateway listens on port 7420",
        "paris is the capital of france",
        "alice likes green tea",
    ]
    ds = Dataset(
        info=DatasetInfo(name="tiny"),
        memories=[Memory(id=f"m{i}", text=t) for i, t in enumerate(texts)],
        queries=[
            Query(id="q0", text="where did the cat sit", relevant_ids=["m0"]),
            Query(id="q1", text="gateway port", relevant_ids=["m2"]),
            Query(id="q2", text="what does alice drink", relevant_ids=["m4"]),
            Query(id="q3", text="zebra", relevant_ids=[]),
        ],
    )
    a = run("retrieval", "keyword", dataset=ds, out=tmp_path / "a", suite_options={"top_k": 2})
    b = run("retrieval", "bm25", dataset=ds, out=tmp_path / "b", suite_options={"top_k": 2})
    c = compare([a.path], [b.path], resamples=200)
    assert c.pairs == 4
    # The headline is hit@top_k over queries with ground truth: the negative query (both
    # stores abstain, so it is scored) is a metric of its own, not in the headline.
    assert c.headline.pairs == 3
    assert c.metric("abstention").pairs == 1
    assert c.baseline.conditions == ["keyword"] and c.candidate.conditions == ["bm25"]
    assert c.metric("recall_at_k").key == "recall@2"
    d = run("retrieval", "bm25", dataset=ds, out=tmp_path / "d", suite_options={"top_k": 1})
    with pytest.raises(PairingError, match=r"differ in suite: options.top_k 2 -> 1"):
        compare([a.path], [d.path])


def test_compare_says_plainly_when_a_fallback_made_both_sides_the_same_system(tmp_path):
    from mnemometer import SystemSpec
    from mnemometer.report import render
    from mnemometer.runner import run

    note = "condition 'semantic': store 'dense' unavailable (no model); fell back to 'bm25'"
    fell = SystemSpec("store", "bm25", {}, "semantic", (note,))
    base = run(
        "retrieval",
        SystemSpec("store", "bm25", {}, "lexical"),
        dataset="demo-zh",
        out=tmp_path / "b",
    )
    cand = run("retrieval", fell, dataset="demo-zh", out=tmp_path / "c")
    c = compare([base.path], [cand.path])
    assert c.notes[0].startswith("SAME SYSTEM ON BOTH SIDES")
    assert "fell back to 'bm25'" in c.notes[0]
    assert "SAME SYSTEM ON BOTH SIDES" in render(c, "text")
    real = run(
        "retrieval",
        SystemSpec("store", "tfidf", {}, "semantic"),
        dataset="demo-zh",
        out=tmp_path / "t",
    )
    assert not any("SAME SYSTEM" in n for n in compare([base.path], [real.path]).notes)


def test_gate_warns_when_a_claim_lacks_a_held_out_reviewed_suite(tmp_path):
    from mnemometer.comparison import GatePolicy

    policy = GatePolicy(min_success_rate_delta=-1.0)
    make_run(tmp_path / "a" / "nm", [False] * 22, condition="no-memory")
    make_run(tmp_path / "a" / "fm", [True] * 22, condition="full-memory")
    c = compare([tmp_path / "a" / "nm"], [tmp_path / "a" / "fm"], resamples=200)
    g = gate(c, policy)
    assert g.passed  # a warning never fails the gate
    assert any("not marked held-out" in w for w in g.warnings)
    assert any("rests on 0 reviewed items" in w for w in g.warnings)
    from mnemometer.report import render

    assert "  warn suite " in render(g, "text")
    held = {"held_out": True, "label_status": "reviewed", "suite_name": "h"}
    make_run(tmp_path / "b" / "nm", [False] * 120, condition="no-memory", options=held)
    make_run(tmp_path / "b" / "fm", [True] * 120, condition="full-memory", options=held)
    c = compare([tmp_path / "b" / "nm"], [tmp_path / "b" / "fm"], resamples=200)
    assert gate(c, policy).warnings == []
    make_run(tmp_path / "c" / "nm", [False] * 99, condition="no-memory", options=held)
    make_run(tmp_path / "c" / "fm", [True] * 99, condition="full-memory", options=held)
    c = compare([tmp_path / "c" / "nm"], [tmp_path / "c" / "fm"], resamples=200)
    assert gate(c, policy).warnings == [
        "the claim rests on 99 reviewed items (99 items); an external claim needs at least 100"
    ]
