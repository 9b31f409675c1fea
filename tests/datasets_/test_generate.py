"""The procedural generator: determinism, golden statistics, complete ground truth, CLI."""

from __future__ import annotations

import calendar
import hashlib
import json
import os
import subprocess
import sys
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from mnemometer.cli.main import cli
from mnemometer.datasets import load_dataset
from mnemometer.datasets.generate import DEFAULT_REFERENCE_TIME, generate, write_generated
from mnemometer.datasets.generate import _vocab as V

GOLDEN = Path(__file__).parents[1] / "data" / "generate_golden.json"
GOLDEN_CASES = [(100, "en"), (100, "zh"), (10000, "en"), (10000, "zh")]
MNEMOMETER = str(Path(sys.executable).with_name("mnemometer"))


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_same_bytes_across_processes_and_hash_seeds(tmp_path: Path) -> None:
    outs = []
    for hash_seed in ("1", "4242"):
        out = tmp_path / f"d{hash_seed}.jsonl"
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        args = [
            MNEMOMETER,
            "generate",
            "--size",
            "1500",
            "--lang",
            "zh",
            "--seed",
            "7",
            "-o",
            str(out),
        ]
        subprocess.run(args, env=env, check=True, capture_output=True)
        outs.append(out)
    assert outs[0].read_bytes() == outs[1].read_bytes()
    other = tmp_path / "other.jsonl"
    write_generated(other, 1500, "zh", seed=8)
    assert _sha(other) != _sha(outs[0])  # the seed matters


def test_id_order_through_many_temporary_files_gives_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A million memories go through many temporary files (one per id range); small sets
    # through one. Force many small ranges and odd batches: the bytes must not change.
    from mnemometer.datasets.generate._output import IdOrder

    one = write_generated(tmp_path / "one.jsonl", 1500, "zh", seed=7)
    monkeypatch.setattr(IdOrder, "min_span", 64)
    monkeypatch.setattr(IdOrder, "batch", 7)
    many = write_generated(tmp_path / "many.jsonl", 1500, "zh", seed=7)
    assert many["sha256"] == one["sha256"]
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("mnemometer-")]


def test_hand_built_json_is_json_dumps() -> None:
    from mnemometer.datasets.generate import generate_records
    from mnemometer.datasets.generate._output import dumps

    _, mems, queries = generate_records(300, "zh", seed=1)
    for rec in [*mems, *queries]:
        assert dumps(rec) == json.dumps(rec, ensure_ascii=False, separators=(",", ":"))


def test_json_and_jsonl_load_to_the_same_dataset(tmp_path: Path) -> None:
    write_generated(tmp_path / "d.json", 400, "en", seed=3)
    write_generated(tmp_path / "d.jsonl", 400, "en", seed=3)
    a, b = load_dataset(tmp_path / "d.json"), load_dataset(tmp_path / "d.jsonl")
    mem = generate(400, "en", seed=3)
    assert a.info.content_hash == b.info.content_hash == mem.info.content_hash
    assert a.info.reference_time == DEFAULT_REFERENCE_TIME
    ref = datetime(2025, 1, 15, 12, 0)
    moved = generate(400, "en", seed=3, reference_time=ref)
    assert moved.info.reference_time == ref
    assert max(m.timestamp for m in moved.memories) < ref  # every memory is in the past


def _golden_stats(tmp: Path) -> dict[str, dict]:
    out = {}
    for size, lang in GOLDEN_CASES:
        out[f"{lang}-{size}"] = write_generated(tmp / f"{lang}{size}.jsonl", size, lang, stats=True)
    return out


def test_golden_statistics(tmp_path: Path) -> None:
    golden = json.loads(GOLDEN.read_text("utf-8"))
    assert _golden_stats(tmp_path) == golden


def _age(ref: date, m) -> int:
    return (ref - m.timestamp.date()).days


def _satisfies(m, cons: dict, ref: date) -> bool:
    md = m.metadata
    for key, want in cons.items():
        if key == "involves":
            if want not in (md.get("person"), md.get("companion")):
                return False
        elif key == "subject":
            if md.get("person") != want:
                return False
        elif key == "date_from":
            if m.timestamp.date() < date.fromisoformat(want):
                return False
        elif key == "date_to":
            if m.timestamp.date() > date.fromisoformat(want):
                return False
        elif key == "age_days":
            if not want[0] <= _age(ref, m) <= want[1]:
                return False
        elif key == "after_position":
            if md.get("chain_position", 0) <= want:
                return False
        elif md.get(key) != want:
            return False
    return True


def _window(expr: str, ref: date) -> tuple[date, date]:
    """An independent reading of the relative-time expressions."""
    words = {"yesterday": 1, "昨天": 1}
    for n in range(2, 7):
        words[f"{n} days ago"] = n
        words[f"{V.ZH_NUMBERS[n]}天前"] = n
    if expr in words:
        d = ref - timedelta(words[expr])
        return d, d
    if expr in ("last week", "上周"):
        start = ref - timedelta(ref.weekday() + 7)
        return start, start + timedelta(6)
    back = 1 if expr in ("last month", "上个月") else 2
    y, m = divmod(ref.year * 12 + ref.month - 1 - back, 12)
    return date(y, m + 1, 1), date(y, m + 1, calendar.monthrange(y, m + 1)[1])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ground_truth_is_complete(lang: str) -> None:
    ds = generate(1200, lang, seed=5)
    ref = ds.info.reference_time.date()
    types = {q.type for q in ds.queries}
    assert types == {
        "person",
        "location",
        "event",
        "time",
        "composite",
        "negative",
        "chain",
        "cluster",
        "deep",
    }
    for q in ds.queries:
        cons = q.metadata["constraints"]
        brute = sorted(m.id for m in ds.memories if _satisfies(m, cons, ref))
        assert brute == q.relevant_ids, q
        if q.type == "negative":
            assert not q.relevant_ids
        else:
            assert q.relevant_ids
        if q.type == "time":
            assert _window(q.metadata["relative"], ref) == (
                date.fromisoformat(cons["date_from"]),
                date.fromisoformat(cons["date_to"]),
            )
        if q.type == "chain":  # true order = chain position = time order
            by = {m.id: m for m in ds.memories}
            order = q.metadata["order"]
            assert [by[x].metadata["chain_position"] for x in order] == list(
                range(2, len(order) + 2)
            )
            stamps = [by[x].timestamp for x in [q.metadata["first_hop"], *order]]
            assert stamps == sorted(stamps) and 3 <= len(stamps) <= 6
        if q.type == "deep":
            assert all(
                365 <= _age(ref, by_id) <= 729
                for by_id in (m for m in ds.memories if m.id in q.relevant_ids)
            )


def test_memories_are_realistic_and_structured() -> None:
    ds = generate(3000, "en", seed=2)
    ref = ds.info.reference_time.date()
    ids = [m.id for m in ds.memories]
    assert len(set(ids)) == len(ids) == 3000
    clusters: dict[str, int] = {}
    for m in ds.memories:
        assert [v.style for v in m.versions] == ["terse", "detailed", "colloquial"]
        assert m.text == m.versions[0].text
        md = m.metadata
        assert md["person"] in m.versions[1].text
        if "action" in md:  # every action fits its object
            assert md["action"] in V.OBJECTS[md["object"]][1]
            assert V.OBJECTS[md["object"]][0] == md["topic"]
        if md.get("frequency"):
            n = {"high": 8, "medium": 3, "low": 0}[md["frequency"]]
            assert len(md["access_days"]) == n and md["cue"]
        assert 1 <= _age(ref, m) <= 729
        clusters[md["cluster"]] = clusters.get(md["cluster"], 0) + 1
    levels = {m.metadata.get("frequency") for m in ds.memories}
    assert {"high", "medium", "low"} <= levels
    assert sum(v >= 3 for v in clusters.values()) > 50
    deep = [q for q in ds.queries if q.type == "deep"]
    assert {q.metadata["semantic_distance"] for q in deep} == {"near", "mid", "far"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_deep_queries_are_phrased_by_the_measured_calibration(lang: str) -> None:
    from mnemometer.datasets.generate._deep import PHRASINGS, calibration, choose, phrasing_id

    table = calibration()
    fitting = {f"{a}/{o}" for o, spec in V.OBJECTS.items() for a in spec[1]}
    assert set(table) == fitting  # every (action, object) the generator can make is measured
    assert all(len(v) == len(PHRASINGS) for v in table.values())
    ds = generate(3000, lang, seed=2)
    deep = [q for q in ds.queries if q.type == "deep"]
    people = {m.metadata["person"] for m in ds.memories}
    for q in deep:
        md, cons = q.metadata, q.metadata["constraints"]
        b = md["semantic_distance"]
        ph, sim = choose(cons["action"], cons["object"])[b]
        assert (md["phrasing"], md["similarity"]) == (phrasing_id(ph), sim)
        sims = choose(cons["action"], cons["object"])
        assert sims["near"][1] >= sims["mid"][1] >= sims["far"][1]
        # Measured, not assumed: the farthest phrasing describes the subject ("a nurse in
        # Leeds") instead of naming them, so matching names cannot answer it.
        if b == "far":
            assert md["phrasing"].startswith("occupation/"), q
            assert not any(name in q.text for name in people), q
            assert "occupation" in cons and "subject" not in cons
        if b == "near":
            assert md["phrasing"].startswith("name/") and cons["subject"] in q.text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--size", "10"], "--size must be between 50"),
        (["--size", "9000000"], "--size must be between 50"),
        (["--size", "ten"], "--size must be an integer"),
        (["--lang", "fr"], "--lang must be one of en, zh"),
        (["--seed", "-1"], "--seed must be a non-negative integer"),
        (["--reference-time", "yesterday"], "--reference-time must be ISO 8601"),
    ],
)
def test_cli_bad_input(args: list[str], message: str, tmp_path: Path) -> None:
    r = CliRunner().invoke(
        cli, ["generate", *args, "-o", str(tmp_path / "x.json")], standalone_mode=False
    )
    assert r.exception is not None and message in str(r.exception)
    p = subprocess.run(
        [MNEMOMETER, "generate", *args, "-o", str(tmp_path / "x.json")],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2
    assert p.stderr.startswith("error: ") and p.stderr.count("\n") == 1
    assert "Traceback" not in p.stderr and not (tmp_path / "x.json").exists()


def test_cli_bad_extension_and_stats(tmp_path: Path) -> None:
    p = subprocess.run(
        [MNEMOMETER, "generate", "-o", str(tmp_path / "x.csv")], capture_output=True, text=True
    )
    assert p.returncode == 2 and "must end in .json or .jsonl" in p.stderr
    p = subprocess.run(
        [
            MNEMOMETER,
            "generate",
            "--size",
            "100",
            "--lang",
            "zh",
            "--stats",
            "-o",
            str(tmp_path / "x.json"),
        ],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0
    golden = json.loads(GOLDEN.read_text("utf-8"))["zh-100"]
    printed = json.loads(p.stdout)
    assert printed.pop("sha256") == _sha(tmp_path / "x.json")
    golden.pop("sha256")  # the golden hash is of the .jsonl file; the content is the same
    assert printed == golden


if __name__ == "__main__":  # regenerate the golden statistics after a deliberate change
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        GOLDEN.write_text(
            json.dumps(_golden_stats(Path(d)), indent=1, ensure_ascii=False) + "\n", "utf-8"
        )
    print(f"wrote {GOLDEN}")
