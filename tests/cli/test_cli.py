from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import plugins
import pytest
from conftest import MNEMOMETER, seed_file


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [MNEMOMETER, *args], capture_output=True, text=True, env={**os.environ, **(env or {})}
    )


def assert_one_line_error(p: subprocess.CompletedProcess, pattern: str) -> None:
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr
    assert "Traceback" not in p.stderr
    import re

    assert re.search(pattern, lines[0]), lines[0]


def test_done_when_hp_run_then_json_report(tmp_path: Path) -> None:
    ds = seed_file("memtest", "hp_benchmark_db.json")
    p = cli(
        "run",
        "retrieval",
        "--dataset",
        str(ds),
        "--store",
        "bm25",
        "--out",
        str(tmp_path / "hp"),
        "--format",
        "none",
    )
    assert p.returncode == 0, p.stderr
    rep = json.loads(cli("report", str(tmp_path / "hp"), "--format", "json").stdout)
    overall = {(m["name"], m["k"]): m["value"] for m in rep["summary"]["overall"]}
    assert 0.5 < overall[("hit", 20)] <= 1 and 0.2 < overall[("mrr", 20)] <= 1
    assert rep["header"]["dataset"]["name"]
    assert "type" in rep["summary"]["groups"] and "difficulty" in rep["summary"]["groups"]


@pytest.mark.parametrize("fmt,needle", [("text", "hit"), ("md", "| metric |")])
def test_report_formats(tmp_path: Path, fmt: str, needle: str) -> None:
    assert (
        cli(
            "run",
            "--dataset",
            "demo-en",
            "--store",
            "keyword",
            "--out",
            str(tmp_path / "r"),
            "--format",
            "none",
        ).returncode
        == 0
    )
    assert needle in cli("report", str(tmp_path / "r"), "--format", fmt).stdout


def test_options_from_environment(tmp_path: Path) -> None:
    env = {
        "MNEMOMETER_RUN_STORE": "tfidf",
        "MNEMOMETER_RUN_DATASET": "demo-zh",
        "MNEMOMETER_RUN_OUT": str(tmp_path / "env"),
        "MNEMOMETER_RUN_FORMAT": "none",
    }
    p = cli("run", env=env)
    assert p.returncode == 0, p.stderr
    assert json.loads((tmp_path / "env" / "header.json").read_text())["system"]["name"] == "tfidf"


def test_list_and_schema_and_check_store() -> None:
    assert "bm25" in cli("list", "stores").stdout
    assert "retrieval" in cli("list", "suites").stdout
    assert "demo-zh" in cli("list", "datasets").stdout
    schema = json.loads(cli("log", "schema").stdout)
    assert schema["header"]["properties"]["schema_version"]
    assert "properties" in json.loads(cli("log", "schema", "--dataset").stdout)
    p = cli("check-store", "bm25")
    assert p.returncode == 0 and "FAIL" not in p.stdout


@pytest.mark.parametrize(
    "command", [[], ["run"], ["report"], ["list"], ["check-store"], ["log", "schema"]]
)
def test_help_everywhere(command: list[str]) -> None:
    p = cli(*command, "--help")
    assert p.returncode == 0 and "Usage:" in p.stdout and len(p.stdout) > 150


# --- bad input: one line, exit 2 -------------------------------------------------------


def test_malformed_json(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"info": {"name": "x"}, "memories": [,]}')
    assert_one_line_error(
        cli("run", "--dataset", str(bad), "--store", "bm25"), r"bad.json:1:\d+: malformed JSON"
    )


def test_schema_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"info": {"name": "x"}, "memories": [{"id": "a", "text": 3}]}))
    assert_one_line_error(
        cli("run", "--dataset", str(bad), "--store", "bm25"), r"memories\.0\.text"
    )


def test_unknown_store_and_suite() -> None:
    assert_one_line_error(
        cli("run", "--dataset", "demo-en", "--store", "bm2"),
        r"unknown store 'bm2' \(did you mean 'bm25'\?\)",
    )
    assert_one_line_error(
        cli("run", "retreival", "--dataset", "demo-en", "--store", "bm25"),
        r"unknown suite 'retreival' \(did you mean 'retrieval'\?\)",
    )


def test_missing_file() -> None:
    assert_one_line_error(
        cli("run", "--dataset", "no/such.json", "--store", "bm25"), r"no/such.json: no such file"
    )
    assert_one_line_error(cli("report", "no/such/run"), r"not a run directory")


def test_missing_extra_broken_plugin_and_bad_option(tmp_path: Path) -> None:
    env = {"PYTHONPATH": str(plugins.install(tmp_path / "plug"))}
    assert_one_line_error(
        cli("run", "--dataset", "demo-en", "--store", "needs-extra", env=env),
        r"pip install 'mnemometer\[vector\]'",
    )
    assert_one_line_error(
        cli("run", "--dataset", "demo-en", "--store", "broken", env=env),
        r"store 'broken' .* failed to load: RuntimeError",
    )
    # A broken plug-in is a warning in listings, never a dead CLI.
    p = cli("list", "stores", env=env)
    assert p.returncode == 0 and "bm25" in p.stdout and "broken" in p.stdout
    assert_one_line_error(
        cli("run", "--dataset", "demo-en", "--store", "bm25", "-S", "k3=1"), r"no option 'k3'"
    )
    assert_one_line_error(
        cli("run", "--dataset", "demo-en", "--store", "bm25", "-S", "k1"), r"expects key=value"
    )


def test_item_failures_exit_1(tmp_path: Path) -> None:
    env = {"PYTHONPATH": str(plugins.install(tmp_path / "plug"))}
    # The killer store dies only when a marker path is set; here a bad top_k type fails items.
    p = cli(
        "run",
        "--dataset",
        "demo-en",
        "--store",
        "killer",
        "-S",
        "after=1000",
        "--top-k",
        "0",
        env=env,
    )
    assert_one_line_error(p, r"--top-k must be at least 1")


def test_no_help_prints_a_literal_backslash_b() -> None:
    """Click keeps an example block unwrapped only after a real backspace (``\\b``)."""
    import click
    from click.testing import CliRunner

    from mnemometer.cli.main import cli as root

    def commands(group: click.Group, path: list[str]):
        for name, cmd in group.commands.items():
            yield [*path, name]
            if isinstance(cmd, click.Group):
                yield from commands(cmd, [*path, name])

    for path in commands(root, []):
        out = CliRunner().invoke(root, [*path, "--help"]).output
        assert "\\b" not in out, path
        if "Examples:" in out:  # each example on a line of its own, not wrapped into one
            after = out.split("Examples:", 1)[1].splitlines()
            assert after[0].strip() == "" and after[1].strip().startswith("mnemometer"), path


def test_list_protocols_names_each_with_its_sources_and_licence() -> None:
    from mnemometer.protocols import PROTOCOL_NAMES, get_protocol

    p = cli("list", "protocols")
    assert p.returncode == 0, p.stderr
    text = p.stdout
    names = [ln.split()[0] for ln in text.splitlines() if ln and not ln.startswith(" ")]
    assert names == list(PROTOCOL_NAMES) and len(names) >= 5
    for name in names:
        for s in get_protocol(name).sources:
            assert f"{s.repository} {s.path} @{s.commit[:7]} ({s.licence})" in text
    assert "snap-research/LoCoMo task_eval/gpt_utils.py @3eb6f2c (CC-BY-NC-4.0)" in text
    assert "mem0ai/mem0 evaluation/prompts.py @aae5989 (Apache-2.0)" in text
    rows = json.loads(cli("list", "protocols", "--format", "json").stdout)
    assert [r["name"] for r in rows] == names
    for r in rows:
        assert r["sha256"] == get_protocol(r["name"]).sha256
        assert r["prompts"] in ("shipped", "read from your copy")
        assert all(len(s["commit"]) == 40 and s["licence"] for s in r["sources"])
    assert {r["name"]: r["prompts"] for r in rows}["zep"] == "read from your copy"
    stores = json.loads(cli("list", "stores", "--format", "json").stdout)
    assert any(r["name"] == "bm25" and r["description"] for r in stores)
