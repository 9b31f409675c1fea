from __future__ import annotations

import json
import pickle
import runpy
from importlib.resources import files
from pathlib import Path

import pytest
from conftest import REPO, seed_file

from mnemometer.datasets import (
    Dataset,
    DatasetInfo,
    Memory,
    Query,
    builtin_datasets,
    load_dataset,
    save_dataset,
)
from mnemometer.errors import DatasetError

MEMTEST = [
    "sample_db_100.json",
    "sample_db_4875b98.json",
    "sample_db_a4ad044.json",
    "hp_benchmark_db.json",
    "hp_benchmark_db_raw.json",
    "four_novels_db.json",
    "tianlongbabu_db.json",
]


def small() -> Dataset:
    return Dataset(
        info=DatasetInfo(name="t", language="en"),
        memories=[Memory(id="a", text="alpha"), Memory(id="b", text="beta")],
        queries=[Query(id="q", text="alpha?", relevant_ids=["a"])],
    )


@pytest.mark.parametrize("name", builtin_datasets())
def test_builtin_datasets_are_consistent(name: str) -> None:
    ds = load_dataset(name)
    ids = {m.id for m in ds.memories}
    assert ds.info.reference_time is not None
    assert len(ds.memories) >= 20 and len(ds.queries) >= 10
    assert all(set(q.relevant_ids) <= ids for q in ds.queries)
    assert any(q.is_negative for q in ds.queries)
    assert ds.info.language == name.split("-")[1]


def test_builtin_demo_datasets_are_what_their_script_builds(tmp_path: Path) -> None:
    # The packaged files and the facts they are built from must not drift apart.
    script = runpy.run_path(str(REPO / "scripts" / "build_demo_datasets.py"))
    facts = json.loads(script["FACTS"].read_text(encoding="utf-8"))
    assert sorted(facts) == [n for n in builtin_datasets() if n.startswith("demo-")]
    for name, spec in facts.items():
        built = save_dataset(script["build"](name, spec), tmp_path / f"{name}.json")
        packaged = files("mnemometer.datasets") / "builtin" / f"{name.replace('-', '_')}.json"
        assert built.read_bytes() == packaged.read_bytes(), name


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_native_round_trip_keeps_content_and_hash(tmp_path: Path, suffix: str) -> None:
    ds = load_dataset("demo-zh")
    path = save_dataset(ds, tmp_path / f"d{suffix}")
    again = load_dataset(path)
    assert again.memories == ds.memories
    assert again.queries == ds.queries
    assert again.info.content_hash == ds.info.content_hash


def test_content_hash_changes_with_content() -> None:
    a = small().with_hash()
    b = small()
    b.memories[0].text = "alpha!"
    assert a.info.content_hash != b.with_hash().info.content_hash


@pytest.mark.parametrize("name", MEMTEST)
def test_every_memtest_variant_loads(name: str) -> None:
    raw = json.loads(seed_file("memtest", name).read_text("utf-8"))
    ds = load_dataset(seed_file("memtest", name))
    ids = {m.id for m in ds.memories}
    assert ds.memories and ds.queries
    # No dangling id survives, and every query either has ground truth or is a negative.
    for q in ds.queries:
        assert set(q.relevant_ids) <= ids
        assert q.relevant_ids or q.type == "negative"
    # Every labelled query is either kept or accounted for in the notes.
    labelled = [q for q in raw["queries"] if q.get("expected_memory_ids") or q.get("is_negative")]
    if len(ds.queries) < len(labelled):
        assert any("point to no memory" in n for n in ds.info.notes)


def test_memtest_versions_and_reference_time() -> None:
    ds = load_dataset(seed_file("memtest", "sample_db_100.json"))
    m = ds.memories[0]
    assert len(m.versions) == 3 and m.text == m.versions[0].text
    assert str(ds.info.reference_time) == "2026-05-26 21:21:12"
    assert ds.info.language == "zh"
    assert m.timestamp is not None and m.timestamp < ds.info.reference_time
    # Labels stay with the dataset (for scoring), typed query types are mapped.
    assert "person" in m.metadata
    assert {q.type for q in ds.queries} == {"person", "location", "event", "time", "composite"}


def test_hp_dangling_ids_reported_and_excluded() -> None:
    ds = load_dataset(seed_file("memtest", "hp_benchmark_db.json"))
    assert len(ds.memories) == 1626
    assert len(ds.queries) == 130  # 133 less the 3 whose only ids no longer exist
    assert any("3 expected ids point to no memory" in n for n in ds.info.notes)
    assert ds.info.language == "en"


def test_four_novels_uses_fragment_text_and_query_field() -> None:
    ds = load_dataset(seed_file("memtest", "four_novels_db.json"))
    assert ds.info.language == "zh"
    assert not any("[人物:" in m.text for m in ds.memories)
    assert all(q.text for q in ds.queries)
    assert len({q.id for q in ds.queries}) == len(ds.queries)


def test_raw_hp_unlabelled_queries_excluded_with_a_note() -> None:
    ds = load_dataset(seed_file("memtest", "hp_benchmark_db_raw.json"))
    assert len(ds.queries) <= 87
    assert any("without expected ids" in n for n in ds.info.notes)


# --- bad input -------------------------------------------------------------------------


BAD_FILES = {
    "malformed JSON names line and column": (
        "bad.json",
        '{"info": {"name": "x"},\n "memories": [}\n',
        r"bad.json:2:\d+: malformed JSON",
    ),
    "schema violation names the field path": (
        "bad.json",
        json.dumps({"info": {"name": "x"}, "memories": [{"id": "a"}], "queries": []}),
        r"memories\.0\.text: Field required",
    ),
    "unknown field is rejected": (
        "bad.json",
        json.dumps({"info": {"name": "x", "langauge": "en"}, "memories": []}),
        r"info\.langauge: Extra inputs",
    ),
    "JSONL error names the line": (
        "d.jsonl",
        '{"kind":"info","name":"x"}\n{"kind":"memory","id":"a","text":"t"}\n'
        '{"kind":"query","id":"q","text":"t","relevant_ids":"a"}\n',
        r"d.jsonl:3: relevant_ids",
    ),
    "not a dataset": ("x.json", "[1, 2, 3]", "not a dataset"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_a_bad_file_is_one_clear_error(case: str, tmp_path: Path) -> None:
    name, text, message = BAD_FILES[case]
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(DatasetError, match=message):
        load_dataset(p)


def test_dangling_id_in_native_dataset_is_an_error(tmp_path: Path) -> None:
    ds = small()
    ds.queries[0].relevant_ids = ["zzz"]
    path = save_dataset(ds, tmp_path / "d.json")
    with pytest.raises(DatasetError, match="'zzz' is not a memory id"):
        load_dataset(path)


def test_missing_file_and_did_you_mean() -> None:
    with pytest.raises(DatasetError, match="did you mean 'demo-en'"):
        load_dataset("demo-em")
    with pytest.raises(DatasetError, match="no such file"):
        load_dataset("nope/missing.json")


def test_load_defers_the_content_hash_until_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    eager = load_dataset("demo-en").compute_hash()
    calls: list[int] = []
    original = Dataset.compute_hash

    def counting(self: Dataset) -> str:
        calls.append(1)
        return original(self)

    monkeypatch.setattr(Dataset, "compute_hash", counting)
    ds = load_dataset("demo-en")
    assert calls == []
    assert ds.info.content_hash == eager
    assert ds.info.content_hash == eager and len(calls) == 1  # computed once, then cached
    lazy = load_dataset("demo-en")
    assert lazy.info.model_copy(deep=True).content_hash == eager
    assert pickle.loads(pickle.dumps(load_dataset("demo-en"))).info.content_hash == eager
    assert load_dataset("demo-en").info == ds.info  # a deferred hash compares as its value
    saved = json.loads(save_dataset(load_dataset("demo-en"), tmp_path / "d.json").read_text())
    assert saved["info"]["content_hash"] == eager
    pinned = load_dataset("demo-en")
    pinned.info.content_hash = "explicit"
    assert pinned.info.content_hash == "explicit"  # an assigned value wins over the deferred one
    pinned.info.content_hash = None
    assert pinned.info.content_hash is None
