"""`mnemometer sweep`: the matrix from a TOML file, resumable, ending with a leaderboard.

These run on the local executor; tests/runner/test_ray.py runs a sweep on a Ray cluster.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from conftest import invoke_cli, seed_file

from mnemometer.errors import MnemometerError
from mnemometer.log import read_header, read_items
from mnemometer.runner import RayExecutor, RunSettings
from mnemometer.workflows import load_sweep, sweep

SWEEP = """
suite = "retrieval"
repeats = 2

[[systems]]
store = "keyword"

[[systems]]
store = "bm25"
name = "lexical-bm25"

[[datasets]]
path = "demo-en"

[[datasets]]
path = "{other}"
name = "zh"

[[compare]]
baseline = "keyword"
candidate = "lexical-bm25"
"""


def _write(tmp_path: Path, text: str = SWEEP) -> Path:
    from mnemometer.datasets._io import _resolve

    other = tmp_path / "data" / "zh.json"
    other.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(_resolve("demo-zh"), other)
    path = tmp_path / "sweep.toml"
    path.write_text(text.replace("{other}", "data/zh.json"), "utf-8")
    return path


def test_a_sweep_runs_the_matrix_and_ends_with_a_leaderboard(tmp_path: Path):
    path = _write(tmp_path)
    r = invoke_cli("sweep", path, "--out", tmp_path / "out", "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    runs = sorted(Path(p).relative_to(tmp_path / "out").as_posix() for p in doc["runs"])
    assert runs == sorted(
        f"{ds}/{label}-r{k}"
        for ds in ("demo-en", "zh")
        for label in ("keyword", "lexical-bm25")
        for k in (0, 1)
    )
    board = (tmp_path / "out" / "leaderboard.md").read_text()
    assert "| keyword |" in board and "| bm25 (lexical-bm25) |" in board
    assert "demo-en" in board and "zh" in board and "Paired comparisons" in board
    for ds in ("demo-en", "zh"):
        cmp = json.loads(
            (tmp_path / "out" / ds / "comparison-keyword-vs-lexical-bm25.json").read_text()
        )
        assert cmp["kind"] == "mnemometer-comparison" and cmp["pairs"] > 0
    # Every run of one dataset shares its experiment's run group and dataset path.
    headers = [read_header(p) for p in doc["runs"] if "/zh/" in p]
    assert len({h.run_group for h in headers}) == 1
    assert {h.dataset.path for h in headers} == {str((tmp_path / "data" / "zh.json").resolve())}


def test_running_a_sweep_again_finishes_only_what_is_missing(tmp_path: Path):
    path = _write(tmp_path)
    first = sweep(path, tmp_path / "out")
    kept = first.experiments["demo-en"].runs[0].path
    before = kept.joinpath("header.json").read_bytes()
    gone = first.experiments["zh"].runs[-1].path
    items = read_items(gone)
    shutil.rmtree(gone)
    again = sweep(path, tmp_path / "out")
    assert kept.joinpath("header.json").read_bytes() == before
    assert [i.item_id for i in read_items(gone)] == [i.item_id for i in items]
    assert [r.path for e in again.experiments.values() for r in e.runs] == [
        r.path for e in first.experiments.values() for r in e.runs
    ]
    # A different sweep into the same directory is refused.
    path.write_text(path.read_text().replace("repeats = 2", "repeats = 3"))
    with pytest.raises(MnemometerError, match="different sweep"):
        sweep(path, tmp_path / "out")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (SWEEP.replace('store = "keyword"', 'stor = "keyword"'), "did you mean 'store'"),
        (SWEEP.replace('candidate = "lexical-bm25"', 'candidate = "bm52"'), "'bm52'"),
        (SWEEP.replace("repeats = 2", "repeats = 0"), "repeats"),
        (SWEEP.replace('name = "zh"', 'name = "demo-en"'), "two datasets"),
    ],
)
def test_bad_sweep_files_are_one_line_naming_the_file(tmp_path: Path, text: str, message: str):
    path = _write(tmp_path, text)
    r = invoke_cli("sweep", path, "--out", tmp_path / "out")
    assert r.exit_code == 2
    assert message in r.output and "sweep.toml" in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_a_dataset_the_suite_cannot_score_stops_the_sweep_before_it_runs(tmp_path: Path):
    locomo = seed_file("locomo", "locomo10.json")
    text = SWEEP.replace('"retrieval"', '"memtest"').replace("{other}", str(locomo))
    path = tmp_path / "sweep.toml"
    path.write_text(text, "utf-8")
    r = invoke_cli("sweep", path, "--out", tmp_path / "out")
    assert r.exit_code == 2, r.output
    [line] = r.output.strip().splitlines()
    assert f"{locomo}: suite 'memtest' cannot score it: a conversation dataset" in line
    assert not (tmp_path / "out").exists()  # demo-en, listed first, did not run either


def test_load_sweep_names_conditions_as_labels(tmp_path: Path):
    path = _write(tmp_path, SWEEP.replace("repeats = 2", 'repeats = 1\nconditions = ["lexical"]'))
    s = load_sweep(path)
    assert s.conditions == ["lexical"] and s.repeats == 1


def test_a_missing_ray_extra_is_one_line_with_the_install_command(tmp_path: Path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed
    r = invoke_cli(*"run retrieval -d demo-en -s bm25 --executor ray --out".split(), tmp_path / "r")
    assert r.exit_code == 2
    assert "pip install 'mnemometer[distributed]'" in r.output
    assert not (tmp_path / "r").exists()
    path = _write(tmp_path)
    r = invoke_cli("sweep", path, "--out", tmp_path / "s", "--executor", "ray")
    assert r.exit_code == 2 and "mnemometer[distributed]" in r.output
    assert not (tmp_path / "s").exists()
    with pytest.raises(MnemometerError, match="distributed"):
        sweep(path, tmp_path / "s2", settings=RunSettings(executor=RayExecutor()))


def test_ray_address_needs_the_ray_executor(tmp_path: Path):
    r = invoke_cli("run", "-d", "demo-en", "-s", "bm25", "--ray-address", "127.0.0.1:1")
    assert r.exit_code == 2 and "--ray-address needs --executor ray" in r.output


def test_a_malformed_ray_address_is_one_line(tmp_path: Path):
    r = invoke_cli(
        "run", "-d", "demo-en", "-s", "bm25", "--executor", "ray", "--ray-address", "nonsense"
    )
    assert r.exit_code == 2 and "is not HOST:PORT" in r.output
