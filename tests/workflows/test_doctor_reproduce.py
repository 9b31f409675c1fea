"""doctor, reproduce and archive: one line per check, the verdict as exit code, checksums."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

from conftest import invoke_cli as cli
from conftest import seed_file

REPO = Path(__file__).resolve().parents[2]
TEAM = REPO / "examples" / "suites" / "team-memory"


def ml(*parts: str) -> Path:
    """A file under ../shared/seed-data/memory-layer (skips with the reason if absent)."""
    return seed_file("memory-layer", *parts)


def _lines(output: str) -> list[str]:
    return [ln for ln in output.splitlines() if ln.strip()]


def test_doctor_passes_our_suite_one_line_per_check():
    r = cli("doctor", TEAM, "--condition", "no-memory", "--condition", "lexical")
    assert r.exit_code == 0, r.output
    lines = _lines(r.output)
    assert all(ln.split(" ", 1)[0] in ("ok", "warn", "FAIL") for ln in lines)
    assert any(ln.startswith("ok   suite.load: 'team memory' v1: 32 items") for ln in lines)
    assert "ok   suite.labels: labels reviewed" in lines
    assert any(ln.startswith("ok   suite.memories: 30 seed memories") for ln in lines)
    assert "ok   condition.lexical: store 'bm25'" in lines


def test_doctor_explains_what_memory_layer_suites_need():
    smoke = cli("doctor", ml("evals/examples/memory-smoke"))
    assert smoke.exit_code == 1
    assert "FAIL suite.memories: no seed memories" in smoke.output
    assert "--memories FILE" in smoke.output
    mq = cli(
        "doctor",
        ml("evals/suites/memory-quality-v1"),
        "--memories",
        ml("derived/memory-quality-v1.seed-capture.json"),
    )
    assert "ok   suite.memories: 21 seed memories" in mq.output
    assert "warn suite.labels: label_status is 'draft'" in mq.output
    build = cli("doctor", ml("evals/examples/app-build-smoke"))
    assert "scripts/check.sh" in build.output  # the checker script the seed does not ship
    assert "fake-agent.sh" in build.output
    for manifest in sorted(ml("evals").glob("*/*/suite.toml")):
        r = cli("doctor", manifest.parent)
        assert r.exit_code in (0, 1), r.output  # loads; never bad input
        assert "suite.load: '" in r.output


def test_doctor_bad_input_and_json(tmp_path):
    r = cli("doctor", tmp_path)
    assert r.exit_code == 2 and "not a suite directory" in r.output
    d = tmp_path / "s"
    d.mkdir()
    (d / "suite.toml").write_text('name = "x"\n')
    (d / "items.jsonl").write_text('{"eval_type": "retrieval_qa", "id": "a"}\n')
    r = cli("doctor", d, "--format", "json")
    assert r.exit_code == 1
    doc = json.loads(r.output)
    assert doc["ok"] is False
    load = next(c for c in doc["checks"] if c["name"] == "suite.load")
    assert load["status"] == "fail" and "items.jsonl:1" in load["message"]


def test_reproduce_then_archive(tmp_path):
    out = tmp_path / "rep"
    r = cli(
        "reproduce",
        TEAM,
        "-o",
        out,
        "--baseline",
        "no-memory",
        "--candidate",
        "lexical",
        "--resamples",
        "500",
    )
    assert r.exit_code == 0, r.output
    assert "gate: pass" in r.output and str(TEAM / "gate.toml") in r.output
    assert json.loads((out / "gate.json").read_text())["passed"] is True
    cmp = json.loads((out / "comparison.json").read_text())
    assert cmp["pairs"] == 32 and cmp["baseline"]["conditions"] == ["no-memory"]
    # a stricter policy fails, and the exit code says so
    strict = tmp_path / "strict.toml"
    strict.write_text("min_candidate_success_rate = 1.0\n")
    r = cli(
        "reproduce",
        TEAM,
        "-o",
        tmp_path / "rep2",
        "--candidate",
        "lexical",
        "--policy",
        strict,
        "--resamples",
        "200",
    )
    assert r.exit_code == 1 and "gate: fail" in r.output

    bundle = tmp_path / "team.tar.gz"
    # A saved store index (a resume's shortcut, not a result) stays out of the bundle.
    planted = next(out.rglob("header.json")).parent / "store-index"
    planted.mkdir()
    (planted / "key.json").write_text("{}")
    r = cli("archive", TEAM, out, "-o", bundle)
    assert r.exit_code == 0, r.output
    r = cli("archive", "--verify", bundle)
    assert r.exit_code == 0 and r.output.startswith("ok: ")
    with tarfile.open(bundle) as tar:
        names = tar.getnames()
        manifest = json.loads(tar.extractfile("manifest.json").read())
    assert "suite/items.jsonl" in names and "runs/rep/comparison.json" in names
    assert any(n.endswith("no-memory-r0/header.json") for n in names)
    assert not any("/store-index" in n for n in names)
    assert manifest["kind"] == "mnemometer-experiment" and manifest["item_count"] == 32
    assert {f["path"] for f in manifest["files"]} == set(names) - {"manifest.json"}
    # tampering is caught
    bad = tmp_path / "bad.tar.gz"
    with tarfile.open(bundle) as src, tarfile.open(bad, "w:gz") as dst:
        for m in src.getmembers():
            data = src.extractfile(m).read()
            if m.name == "suite/items.jsonl":
                data += b"\n"
                m.size = len(data)
            import io

            dst.addfile(m, io.BytesIO(data))
    r = cli("archive", "--verify", bad)
    assert r.exit_code == 2 and "suite/items.jsonl does not match its SHA-256" in r.output
    r = cli("archive", TEAM, out, "-o", bundle)
    assert r.exit_code == 2 and "already exists" in r.output


def test_the_three_documented_commands(tmp_path):
    """docs/ablations.md: run under no-memory and hybrid with repeats, compare, gate."""
    runs = tmp_path / "runs" / "team"
    r = cli(
        "run",
        TEAM,
        "--condition",
        "no-memory",
        "--condition",
        "hybrid",
        "--repeat",
        "2",
        "--out",
        runs,
    )
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in runs.iterdir()) == [
        "experiment.json",
        "hybrid-r0",
        "hybrid-r1",
        "no-memory-r0",
        "no-memory-r1",
    ]
    out = runs / "comparison.json"
    r = cli(
        "compare",
        runs,
        "--baseline",
        "no-memory",
        "--candidate",
        "hybrid",
        "-o",
        out,
        "--resamples",
        "1000",
    )
    assert r.exit_code == 0, r.output
    assert "32 items (64 paired observations) from 2+2 runs" in r.output
    doc = json.loads(out.read_text())
    assert doc["candidate"]["conditions"] == ["hybrid"] and doc["headline"]["delta"] > 0.5
    r = cli("gate", out, "--policy", TEAM / "gate.toml")
    assert r.exit_code == 0 and r.output.startswith("gate: pass")


def test_doctor_warns_until_a_suite_is_held_out_with_100_reviewed_items(tmp_path):
    import shutil

    suite = tmp_path / "team"
    shutil.copytree(TEAM, suite)
    r = cli("doctor", suite, "--condition", "lexical")
    assert r.exit_code == 0, r.output
    assert "warn suite.claim: suite 'team memory' is not marked held-out" in r.output
    assert "warn suite.claim: the claim rests on 32 reviewed items" in r.output
    toml = suite / "suite.toml"
    toml.write_text(
        toml.read_text().replace(
            'label_status = "reviewed"', 'label_status = "reviewed"\nheld_out = true'
        )
    )
    items = suite / "items.jsonl"
    rows = [ln for ln in items.read_text().splitlines() if ln.startswith("{")]
    extra = [
        json.dumps({**json.loads(ln), "id": f"{json.loads(ln)['id']}-{n}"})
        for n in range(3)
        for ln in rows
    ]
    items.write_text("\n".join(rows + extra) + "\n")
    r = cli("doctor", suite, "--condition", "lexical")
    assert r.exit_code == 0, r.output
    assert "suite.claim" not in r.output
