"""The Letta-vs-Mem0 seed's rating bands and its memory scalability, in the scenarios report.

Bands: every threshold at and either side of its edge, the seed's conjunction for a row,
and that a system which remembers nothing cannot be rated above Poor however fast it is.
Scalability: the binned curve and its slope on points whose trend is known, invariance to
item order, and a real run whose text and HTML reports show both.
"""

from __future__ import annotations

import random

import pytest

from mnemometer import RunSettings, SystemSpec
from mnemometer.llm import LLMSettings
from mnemometer.log import read_items
from mnemometer.log._schema import ItemResult
from mnemometer.report import report
from mnemometer.runner import run
from mnemometer.scoring.scenarios.bands import band, banded_row, rating
from mnemometer.scoring.scenarios.scaling import latency_by_facts
from mnemometer.testing import FakeLLMServer
from mnemometer.testing.llm_server import echo_memories


@pytest.mark.parametrize(
    ("metric", "value", "expected"),
    [
        ("accuracy", 0.90, "Excellent"),
        ("accuracy", 0.8999, "Good"),
        ("accuracy", 0.70, "Good"),
        ("accuracy", 0.6999, "between"),
        ("accuracy", 0.50, "between"),
        ("accuracy", 0.4999, "Poor"),
        ("similarity", 0.80, "Excellent"),
        ("similarity", 0.70, "Good"),
        ("similarity", 0.65, "between"),
        ("similarity", 0.5999, "Poor"),
        ("latency_ms", 4999.9, "Excellent"),
        ("latency_ms", 5000.0, "Good"),
        ("latency_ms", 8000.0, "between"),
        ("latency_ms", 10000.0, "between"),
        ("latency_ms", 10000.1, "Poor"),
        ("accuracy", None, None),
    ],
)
def test_bands_are_the_seeds_thresholds(metric, value, expected) -> None:
    assert band(metric, value) == expected


def test_the_rating_is_the_seeds_conjunction() -> None:
    assert banded_row("s", 0.95, 0.85, 3000.0)["rating"] == "Excellent"
    assert banded_row("s", 0.95, 0.75, 3000.0)["rating"] == "Good"  # one only Good
    assert banded_row("s", 0.95, None, 3000.0)["rating"] == "Excellent"  # no similarity
    assert banded_row("s", 0.60, 0.85, 3000.0)["rating"] == "between"
    assert rating([None, None, None]) is None


def test_remembering_nothing_is_poor_however_fast() -> None:
    # an instant agent that keeps nothing: accuracy 0, no similarity, 1 ms a turn
    row = banded_row("s", 0.0, None, 1.0)
    assert row["latency_band"] == "Excellent" and row["rating"] == "Poor"


def _items(latency, n_items: int = 3, turns: int = 25) -> list[ItemResult]:
    return [
        ItemResult(
            item_id=f"s{i}",
            index=i,
            extra={
                "turns": [
                    {"turn": k, "latency_ms": latency(k), "memory_ms": latency(k) / 2}
                    for k in range(turns)
                ]
            },
        )
        for i in range(n_items)
    ]


def test_scalability_curve_and_slope_on_a_known_trend() -> None:
    rows, slopes = latency_by_facts(_items(lambda k: 5.0 + 2.0 * k))
    assert slopes["ms_per_fact"] == pytest.approx(2.0)
    assert slopes["memory_ms_per_fact"] == pytest.approx(1.0)
    # 25 turns (0-24 facts before them) in bins of 5: five bins of 15 points
    assert [(r["facts_from"], r["facts_to"], r["turns"]) for r in rows] == [
        (0, 4, 15),
        (5, 9, 15),
        (10, 14, 15),
        (15, 19, 15),
        (20, 24, 15),
    ]
    assert rows[0]["mean_latency_ms"] == pytest.approx(5.0 + 2.0 * 2)
    flat_rows, flat = latency_by_facts(_items(lambda k: 40.0))
    assert flat["ms_per_fact"] == pytest.approx(0.0, abs=1e-9)
    assert {r["mean_latency_ms"] for r in flat_rows} == {40.0}


def test_scalability_does_not_depend_on_item_order() -> None:
    rng = random.Random(5)
    items = _items(lambda k: 3.0 + (k % 7) * 1.5, n_items=6)
    shuffled = items[:]
    rng.shuffle(shuffled)
    assert latency_by_facts(items) == latency_by_facts(shuffled)


def test_a_scenario_run_reports_bands_and_the_scalability_curve(tmp_path) -> None:
    with FakeLLMServer(default=echo_memories) as srv:
        res = run(
            "scenarios",
            SystemSpec.agent("rag", store="bm25"),
            suite_options={
                "similarity": "none",
                "scenarios": ["memory_scalability", "cross_session_recall"],
            },
            out=tmp_path / "s",
            settings=RunSettings(llm=LLMSettings(srv.base_url, srv.model)),
        )
    s = res.summary
    rated = {r["scenario"]: r for r in s.table("seed_rating").data}
    assert set(rated) == {"memory_scalability", "cross_session_recall", "AVERAGE"}
    for r in rated.values():
        assert r["accuracy_band"] == band("accuracy", r["accuracy"])
    curve = s.table("latency_vs_facts").data
    assert curve[-1]["facts_to"] >= 50  # the 50 facts of memory_scalability, then questions
    items = read_items(res.path)
    assert sum(r["turns"] for r in curve) == sum(len(i.extra["turns"]) for i in items)
    assert s.sections["scalability"]["ms_per_fact"] is not None
    text = report(res.path)
    assert "The seed's rating bands" in text and "Latency against facts stored" in text
    html = report(res.path, "html")
    assert 'aria-label="latency ms against facts stored"' in html
