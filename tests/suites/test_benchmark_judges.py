"""Several judge models in one run (``--judge NAME@MODEL``, ``--judge-endpoint MODEL=URL``).

Two real test servers on 127.0.0.1: the reader and the rule judges on one, a second
"model" that calls everything CORRECT on the other. The same answers are judged by both,
so the sensitivity table and Cohen's kappa compare judges, not systems.
"""

from __future__ import annotations

import json

import pytest
from conftest import invoke_cli, seed_file

import mnemometer
from mnemometer.errors import MnemometerError
from mnemometer.llm import resolve_settings
from mnemometer.log import read_log
from mnemometer.runner import RunSettings
from mnemometer.scoring.judges import builtin_judges, judge_endpoints, resolve_judges
from mnemometer.testing import FakeLLMServer
from mnemometer.testing._bench import benchmark_reply


def _yes_man(body: dict) -> str:
    return json.dumps({"label": "CORRECT"})


@pytest.fixture
def servers():
    with (
        FakeLLMServer(default=benchmark_reply) as reader,
        FakeLLMServer(default=_yes_man, models=("yes-man",)) as other,
    ):
        yield reader, other


def _run(reader, other, out, judges, **options):
    opts = {
        "dataset": str(seed_file("locomo", "locomo10.json")),
        "judges": judges,
        "judge_endpoints": [f"yes-man={other.base_url}"],
        "questions": 30,
        **options,
    }
    settings = RunSettings(llm=resolve_settings(reader.base_url, reader.model))
    return mnemometer.run("locomo", "bm25", suite_options=opts, out=out, settings=settings)


def test_judges_at_two_endpoints_judge_the_same_answers(servers, tmp_path):
    reader, other = servers
    res = _run(reader, other, tmp_path / "r", ["strict", "lenient", "strict@yes-man"])
    rows = read_log(res.path).items
    judged = [r for r in rows if r.extra.get("judges")]
    assert len(judged) == len(rows) == 30  # the first 30 are in categories 1-4
    # every judged answer went to both endpoints: the yes-man saw only judge requests
    yes_requests = other.chat_requests()
    probes = sum(len(r.extra.get("probe_answers") or {}) for r in judged)  # known-wrong ones
    assert probes > 0 and len(yes_requests) == len(judged) + probes
    assert all(b["model"] == "yes-man" and b.get("response_format") for b in yes_requests)
    reader_judged = [b for b in reader.chat_requests() if b.get("response_format")]
    assert len(reader_judged) == 2 * (len(judged) + probes)
    for r in judged:
        assert r.extra["judges"]["strict@yes-man"]["correct"] is True
    s = res.summary
    acc = {m.name: m.value for m in s.overall if m.name.startswith("accuracy:")}
    assert acc["accuracy:strict@yes-man"] == 1.0
    assert acc["accuracy:strict"] < acc["accuracy:lenient"] < 1.0
    pairs = {(p["a"], p["b"]): p for p in s.sections["judges"]["agreement"]}
    # a judge that says CORRECT to everything has no agreement beyond chance (kappa 0)
    assert pairs["lenient", "strict@yes-man"]["kappa"] == pytest.approx(0.0, abs=1e-9)
    pins = json.loads((res.path / "pins.json").read_text())
    by_name = {j["name"]: j for j in pins["judges"]}
    assert by_name["strict@yes-man"]["model"] == "yes-man"
    assert by_name["strict@yes-man"]["base_url"] == other.base_url
    assert by_name["strict"]["model"] == "fake-llm"
    assert by_name["strict"]["base_url"] == reader.base_url
    # the prompt is the family's: the same hash as the plain judge
    assert by_name["strict@yes-man"]["prompt_sha256"] == builtin_judges()["strict"].prompt_hash


def test_resume_keeps_the_judge_endpoints(servers, tmp_path):
    reader, other = servers
    out = tmp_path / "r"
    _run(reader, other, out, ["lenient", "lenient@yes-man"], questions=5)
    header = read_log(out).header
    assert header.suite_inputs["judge_endpoints"] == [f"yes-man={other.base_url}"]
    assert header.suite_inputs["judge_names"] == ["lenient", "lenient@yes-man"]


def test_bad_judge_specs_are_clear_errors(servers, tmp_path):
    with pytest.raises(MnemometerError, match="name a model after '@'"):
        resolve_judges(["lenient@"])
    with pytest.raises(MnemometerError, match="unknown judge 'lenent'"):
        resolve_judges(["lenent@m"])
    with pytest.raises(MnemometerError, match="expected MODEL=URL"):
        judge_endpoints(["http://127.0.0.1:1/v1"])
    with pytest.raises(MnemometerError, match="named twice"):
        judge_endpoints(["m=http://a/v1", "m=http://b/v1"])
    reader, other = servers
    with pytest.raises(MnemometerError, match="no --judge NAME@MODEL uses"):
        _run(reader, other, tmp_path / "r", ["lenient"])
    data = str(seed_file("locomo", "locomo10.json"))
    args = ["run", "locomo", "--dataset", data, "--store", "bm25", "--judge", "lenient@x"]
    args += ["--judge-endpoint", "x", "--llm-base-url", reader.base_url, "--llm-model", "fake-llm"]
    res = invoke_cli(*args, "--out", tmp_path / "cli")
    assert res.exit_code == 2 and "expected MODEL=URL" in res.output
