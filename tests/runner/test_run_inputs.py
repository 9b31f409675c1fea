"""The Python API takes what the command line takes; a run resolves its LLM endpoint once.

``mnemometer.run(..., dataset=PATH)`` hands the file to a suite that reads its own
(``reads_dataset``) as ``--dataset`` does, on a single run and in an experiment; other
suites still load it. The endpoint is the caller's, else the one a resumed run recorded,
else the environment's, and reaches the suite from there. Real bm25, the test LLM server
on 127.0.0.1.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from benchmark_helpers import MINI, llm_flags
from conftest import REPO, invoke_cli, seed_file

import mnemometer
from mnemometer.errors import MnemometerError
from mnemometer.llm import NO_ENDPOINT, LLMSettings
from mnemometer.log import read_header, read_items
from mnemometer.runner import Experiment, RunSettings, run_experiment
from mnemometer.runner._setup import with_llm
from mnemometer.testing import FakeLLMServer
from mnemometer.testing._bench import benchmark_reply


@pytest.fixture
def server():
    with FakeLLMServer(default=benchmark_reply) as srv:
        yield srv


def _settings(srv) -> RunSettings:
    return RunSettings(llm=LLMSettings(srv.base_url, srv.model))


def test_dataset_reaches_a_suite_that_reads_its_own_file(server, tmp_path):
    res = mnemometer.run(
        "longmemeval", "bm25", dataset=MINI, out=tmp_path / "r", settings=_settings(server)
    )
    h = read_header(res.path)
    assert h.suite_inputs["dataset"] == str(MINI.resolve()) and h.dataset.path is None
    steps = [r.step for r in read_items(res.path)]
    assert steps == ["mini_0001", "mini_0002", "mini_0003", "mini_0004_abs"]
    out = tmp_path / "c"  # the command line hands --dataset over the same way
    cli = invoke_cli("run", "longmemeval", "-d", MINI, "-s", "bm25", "-o", out, *llm_flags(server))
    assert cli.exit_code == 0, cli.output
    assert read_header(out).suite_inputs["dataset"] == h.suite_inputs["dataset"]


def test_an_experiment_hands_the_file_over_too(server, tmp_path):
    exp = Experiment("longmemeval", [mnemometer.SystemSpec.store("bm25")], dataset=str(MINI))
    res = run_experiment(exp, tmp_path / "e", settings=_settings(server))
    plan = mnemometer.runner.read_experiment(tmp_path / "e")
    assert plan.dataset is None and plan.suite_options["dataset"] == str(MINI.resolve())
    assert res.runs[0].header.suite_inputs["dataset"] == str(MINI.resolve())
    assert len(read_items(res.runs[0].path)) == 4


def test_locomo_from_python_with_dataset(server, tmp_path):
    data = seed_file("locomo", "locomo10.json")
    res = mnemometer.run(
        "locomo",
        "bm25",
        dataset=data,
        suite_options={"questions": 3},
        out=tmp_path / "l",
        settings=_settings(server),
        limit=1,
    )
    assert [r.step for r in read_items(res.path)] == [f"conv-26/q{n:03d}" for n in (1, 2, 3)]
    assert res.header.suite_inputs["dataset"] == str(data.resolve())


def test_dataset_still_loads_for_a_suite_that_reads_none(tmp_path):
    res = mnemometer.run("retrieval", "bm25", dataset="demo-en", out=tmp_path / "r")
    assert res.header.dataset.path == "demo-en" and "dataset" not in res.header.suite_inputs


def test_a_suite_that_reads_its_file_refuses_a_loaded_dataset_or_two_files(tmp_path):
    with pytest.raises(MnemometerError, match="reads its own file: pass dataset=PATH"):
        mnemometer.run("longmemeval", "bm25", dataset=mnemometer.load_dataset("demo-en"))
    with pytest.raises(MnemometerError, match="was given two files"):
        mnemometer.run(
            "longmemeval", "bm25", dataset=MINI, suite_options={"dataset": str(tmp_path / "x")}
        )


def test_the_endpoint_comes_from_the_environment_where_the_run_starts(
    server, tmp_path, monkeypatch
):
    monkeypatch.setenv("MNEMOMETER_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("MNEMOMETER_LLM_MODEL", server.model)
    res = mnemometer.run("longmemeval", "bm25", dataset=MINI, out=tmp_path / "r")
    assert res.summary.counts["questions"] == 4 and server.chat_requests()


def test_no_endpoint_anywhere_is_one_line_naming_the_flag_and_the_variable(tmp_path):
    with pytest.raises(MnemometerError) as e:
        mnemometer.run("longmemeval", "bm25", dataset=MINI, out=tmp_path / "r")
    assert str(e.value) == f"suite 'longmemeval' asks an LLM: {NO_ENDPOINT}"
    assert not (tmp_path / "r").exists()  # refused before anything was written
    assert "--llm-base-url" in NO_ENDPOINT and "MNEMOMETER_LLM_BASE_URL" in NO_ENDPOINT


def test_the_callers_endpoint_then_the_recorded_one_then_the_environment(monkeypatch):
    given = LLMSettings("http://127.0.0.1:1/v1", "given")
    recorded = {"base_url": "http://127.0.0.1:2/v1", "model": "recorded", "timeout": 7.0}
    system = SimpleNamespace(options={"resolved": {"llm": recorded}})  # as an agent records
    header = SimpleNamespace(system=system, llm=None)
    assert with_llm(RunSettings()).llm is None  # nothing configured anywhere
    monkeypatch.setenv("MNEMOMETER_LLM_BASE_URL", "http://127.0.0.1:3/v1")
    monkeypatch.setenv("MNEMOMETER_LLM_MODEL", "env")
    monkeypatch.setenv("MNEMOMETER_LLM_API_KEY", "sk-env")
    assert with_llm(RunSettings(llm=given), header).llm is given
    resumed = with_llm(RunSettings(), header).llm
    assert (resumed.model, resumed.timeout, resumed.api_key) == ("recorded", 7.0, "sk-env")
    assert with_llm(RunSettings()).llm.model == "env"


def test_a_sweep_hands_each_dataset_to_a_suite_that_reads_its_file(server, tmp_path):
    from mnemometer.workflows import sweep

    f = tmp_path / "sweep.toml"
    f.write_text(
        'suite = "longmemeval"\n[suite_options]\nquestions = 1\n'
        f'[[systems]]\nstore = "bm25"\n[[datasets]]\npath = "{MINI}"\nname = "mini"\n'
    )
    first = sweep(f, tmp_path / "s", settings=_settings(server))
    (run,) = first.experiments["mini"].runs
    assert run.header.suite_inputs["dataset"] == str(MINI.resolve())
    again = sweep(f, tmp_path / "s", settings=_settings(server))  # the recorded plan matches
    assert again.experiments["mini"].runs[0].header.run_id == run.header.run_id


def test_a_suite_asking_a_model_is_refused_before_anything_is_written(tmp_path):
    team = REPO / "examples" / "suites" / "team-memory"
    with pytest.raises(
        MnemometerError, match=re.escape(f"suite 'items' asks an LLM: {NO_ENDPOINT}")
    ):
        mnemometer.run_suite(team, conditions=["lexical"], profile="llm", out=tmp_path / "x")
    assert not (tmp_path / "x").exists()
