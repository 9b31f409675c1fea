"""Run directories written by schema v1 read, report and compare through the real migration.

The golden directories (tests/data/runlogs/v1) were written by mnemometer 0.1.0 and are
never rewritten; see their README for the commands.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mnemometer.comparison import compare
from mnemometer.log import LOG_SCHEMA_VERSION, read_header, read_items, read_log
from mnemometer.report import report

V1 = Path(__file__).resolve().parents[1] / "data" / "runlogs" / "v1"
RUNS = sorted(p.parent for p in V1.rglob("header.json"))


def test_the_golden_directories_really_are_v1():
    assert len(RUNS) == 10
    for run in RUNS:
        assert json.loads((run / "header.json").read_text())["schema_version"] == 1
        assert not (run / "summary.json").exists()


@pytest.mark.parametrize("run", RUNS, ids=lambda p: str(p.relative_to(V1)))
def test_every_v1_run_reads_as_the_current_schema_and_reports(run: Path):
    log = read_log(run)
    assert log.header.schema_version == LOG_SCHEMA_VERSION
    assert log.header.success_definition  # v1's global rule, recorded
    assert log.items and all(i.success is not None or i.status == "ok" for i in log.items)
    for fmt in ("text", "md", "json"):
        text = report(run, fmt)
        assert log.header.run_id in text
    doc = json.loads(report(run, "json"))
    assert doc["summary"]["source"] == "generic"  # v1 wrote no summary.json
    assert any("no summary.json" in n for n in doc["summary"]["notes"])


def test_v1_items_suite_options_split_into_measured_inputs_and_system_side():
    h = read_header(V1 / "team" / "lexical-r1")
    assert h.system.condition == "lexical" and h.system.name == "bm25"
    assert h.suite_inputs["profile"] == "offline" and "suite_dir" in h.suite_inputs
    for moved in ("condition", "profile", "suite_dir", "repeat", "notes", "skipped"):
        assert moved not in h.suite_options
    assert len(h.suite_options["suite_checksum"]) == 64


def test_v1_steps_become_the_step_field_and_success_is_recorded():
    items = read_items(V1 / "build" / "lexical-r0")
    steps = [(i.item_id, i.step) for i in items]
    assert steps == [
        ("launch-hero", None),
        ("launch-page", "hero"),
        ("launch-page", "features"),
        ("launch-page", "pricing"),
    ]
    assert all("step" not in i.extra for i in items)
    assert [i.success for i in items] == [True, True, True, True]
    assert [i.success for i in read_items(V1 / "build" / "no-memory-r0")] == [False] * 4


def test_v1_metric_names_become_structured_fields():
    items = read_items(V1 / "scenarios-rag")
    lat = next(m for m in items[0].metrics if m.name == "latency")
    assert lat.unit == "ms" and lat.percentile is None
    team = read_items(V1 / "team" / "lexical-r0")
    names = {m.name for i in team for m in i.metrics}
    assert "recall" in names and "recall_at_k" not in names
    h = read_header(V1 / "scenarios-rag")
    assert h.suite_options["epochs"] == 2 and "repeat" not in h.suite_options


def test_v1_retrieval_success_follows_the_v1_rule():
    for item in read_items(V1 / "retrieval-bm25"):
        hit = next((m.value for m in item.metrics if m.name == "hit" and m.k == 20), None)
        if hit is not None:
            assert item.success is (hit == 1.0)


def test_v1_runs_compare_by_condition_repeat_and_step(tmp_path: Path):
    team = V1 / "team"
    c = compare(
        [team / "no-memory-r0", team / "no-memory-r1"],
        [team / "lexical-r0", team / "lexical-r1"],
        resamples=200,
    )
    assert c.pairs == 64 and c.baseline.conditions == ["no-memory"]
    assert c.headline.candidate > c.headline.baseline
    b = compare([V1 / "build" / "no-memory-r0"], [V1 / "build" / "lexical-r0"], resamples=200)
    assert b.pairs == 4 and b.headline.delta == 1.0


def test_an_interrupted_v1_run_resumes_in_the_current_schema(tmp_path: Path):
    from mnemometer import resume, run

    old = tmp_path / "old"
    shutil.copytree(V1 / "retrieval-bm25", old)
    # Drop the last 5 results, as a kill would, and resume with today's mnemometer.
    lines = (old / "items.jsonl").read_bytes().splitlines(keepends=True)
    (old / "items.jsonl").write_bytes(b"".join(lines[:10]))
    resumed = resume(old)
    assert json.loads((old / "header.json").read_text())["schema_version"] == LOG_SCHEMA_VERSION
    fresh = run("retrieval", "bm25", dataset="demo-en", out=tmp_path / "fresh")

    def same(items):
        return [(i.item_id, i.success, [(m.key, m.value) for m in i.metrics]) for i in items]

    # The 10 finished items are kept as recorded; the 5 dropped ones are redone with today's
    # mnemometer, so they equal a fresh run's (rankings changed since the golden run was
    # recorded: ties are no longer broken by insertion order).
    resumed_items = read_items(old)
    assert same(resumed_items[:10]) == same(read_items(V1 / "retrieval-bm25")[:10])
    assert same(resumed_items[10:]) == same(read_items(fresh.path)[10:])
    assert resumed.summary.source == "suite" and resumed.header.resumes == 1
