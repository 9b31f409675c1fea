"""The dataset reader registry: sniffing, explicit formats, plug-ins, errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import plugins
import pytest
from conftest import MNEMOMETER, REPO, invoke_cli, seed_file

from mnemometer.datasets import (
    Dataset,
    DatasetInfo,
    Memory,
    Reader,
    get_reader,
    load_dataset,
    readers,
    register_reader,
    save_dataset,
)
from mnemometer.datasets._readers import READERS, detect_reader, read_head
from mnemometer.errors import DatasetError, MnemometerError

BUILTIN = [
    "letta-core-memory",
    "memoryagentbench",
    "native-json",
    "native-jsonl",
    "memtest",
    "locomo",
    "longmemeval",
]
LONGMEMEVAL_MINI = REPO / "tests/data/longmemeval_mini.json"


@pytest.fixture
def registered():
    """Register readers in-process for one test, and always remove them."""
    names: list[str] = []

    def add(reader: Reader) -> Reader:
        register_reader(reader)
        names.append(reader.name)
        return reader

    yield add
    for name in names:
        READERS.unregister(name)


def samples(tmp_path: Path) -> dict[str, Path]:
    ds = load_dataset("demo-en")
    return {
        "native-json": save_dataset(ds, tmp_path / "d.json"),
        "native-jsonl": save_dataset(ds, tmp_path / "d.jsonl"),
        "memtest": seed_file("memtest", "sample_db_100.json"),
        "locomo": seed_file("locomo", "locomo10.json"),
        "longmemeval": LONGMEMEVAL_MINI,
    }


def test_builtins_register_through_entry_points_in_sniffing_order() -> None:
    assert [r.name for r in readers()][: len(BUILTIN)] == BUILTIN
    for name in BUILTIN:
        assert name in READERS._entry_points()  # the same group a plug-in uses
        assert get_reader(name).description


def test_each_file_is_recognised_by_exactly_one_builtin(tmp_path: Path) -> None:
    for fmt, path in samples(tmp_path).items():
        head = read_head(path)
        accepting = [r.name for r in readers() if r.sniff(path, head)]
        assert accepting == [fmt], path
        assert detect_reader(path).name == fmt


def test_a_letta_core_memory_set_is_recognised_before_native_jsonl() -> None:
    for name in ("core_memory_read.jsonl", "core_memory_update.jsonl"):
        path = seed_file("letta-core-memory", name)
        assert detect_reader(path).name == "letta-core-memory"
        ds = load_dataset(path)
        assert len(ds.queries) == 1100 and ds.info.licence == "Apache-2.0"


def test_a_jsonl_file_without_the_suffix_is_sniffed_from_its_first_line(tmp_path: Path) -> None:
    path = save_dataset(load_dataset("demo-zh"), tmp_path / "d.jsonl")
    renamed = path.rename(tmp_path / "d.data")
    assert detect_reader(renamed).name == "native-jsonl"
    assert load_dataset(renamed).info.content_hash == load_dataset("demo-zh").info.content_hash


def test_explicit_format_is_used_without_sniffing(tmp_path: Path) -> None:
    path = save_dataset(load_dataset("demo-en"), tmp_path / "d.txt")
    assert load_dataset(path, format="native-json").info.name == "demo-en"
    with pytest.raises(
        DatasetError, match=r"locomo10\.json: not a dataset: expected a JSON object"
    ):
        load_dataset(seed_file("locomo", "locomo10.json"), format="memtest")
    with pytest.raises(DatasetError, match=r"not LoCoMo: expected a JSON list"):
        load_dataset(path, format="locomo")


def test_unknown_format_name_says_did_you_mean_and_lists_formats() -> None:
    with pytest.raises(
        DatasetError,
        match=r"unknown dataset format 'locomoo' \(did you mean 'locomo'\?\); known: .*longmemeval",
    ):
        load_dataset("demo-en", format="locomoo")


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("x.json", "[1, 2, 3]"),
        ("x.json", '{"rows": [{"a": 1}]}'),
        ("x.csv", "id,text\n1,hello\n"),
        ("x.txt", ""),
    ],
)
def test_unrecognised_file_lists_the_known_formats(tmp_path: Path, name: str, content: str) -> None:
    p = tmp_path / name
    p.write_text(content)
    with pytest.raises(DatasetError) as e:
        load_dataset(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}: not a dataset in any known format (known: ")
    assert all(fmt in msg for fmt in BUILTIN) and "format=" in msg


@pytest.mark.parametrize(
    ("content", "where"), [('[\n {"question": "q",\n  oops}\n]', "3:3"), ("not json", "1:1")]
)
def test_unrecognised_malformed_json_names_line_and_column(
    tmp_path: Path, content: str, where: str
) -> None:
    p = tmp_path / "x.json"
    p.write_text(content)
    with pytest.raises(DatasetError, match=rf"x\.json:{where}: malformed JSON"):
        load_dataset(p)


def test_memtest_file_with_native_info_points_at_the_native_format(tmp_path: Path) -> None:
    # A hand-written native file whose "info" comes after 64 KiB of memories.
    memories = [{"id": f"m{i}", "text": "x" * 100} for i in range(1000)]
    p = tmp_path / "late.json"
    p.write_text(json.dumps({"memories": memories, "info": {"name": "late"}}))
    assert b'"info"' not in read_head(p)
    with pytest.raises(DatasetError, match="load it with format='native-json'"):
        load_dataset(p)
    assert len(load_dataset(p, format="native-json").memories) == 1000


def test_in_process_reader_wins_by_order_and_must_return_a_dataset(
    tmp_path: Path, registered
) -> None:
    path = save_dataset(load_dataset("demo-en"), tmp_path / "d.json")
    tiny = Dataset(info=DatasetInfo(name="tiny"), memories=[Memory(id="a", text="a")])
    registered(Reader("always", "accepts anything", lambda p, h: True, lambda p: tiny, order=1))
    assert load_dataset(path).info.name == "tiny"
    assert load_dataset(path).info.content_hash == tiny.compute_hash()
    registered(Reader("liar", "returns a dict", lambda p, h: False, lambda p: {"info": {}}))
    with pytest.raises(DatasetError, match="format 'liar' returned dict, not a Dataset"):
        load_dataset(path, format="liar")


def test_reader_output_is_checked_like_a_native_file(tmp_path: Path, registered) -> None:
    bad = Dataset(info=DatasetInfo(name="bad"), memories=[Memory(id="a", text="a")] * 2)
    registered(Reader("dup", "repeats ids", lambda p, h: False, lambda p: bad))
    p = tmp_path / "x"
    p.write_text("anything")
    with pytest.raises(DatasetError, match=r"x: memories\.1\.id: repeated memory id 'a'"):
        load_dataset(p, format="dup")


def test_a_sniff_that_raises_is_a_warning_not_a_dead_load(tmp_path: Path, registered) -> None:
    def explode(path: Path, head: bytes) -> bool:
        raise ValueError("boom")

    registered(Reader("exploding", "sniff raises", explode, lambda p: None, order=1))
    path = save_dataset(load_dataset("demo-en"), tmp_path / "d.json")
    with pytest.warns(UserWarning, match="'exploding': sniff failed: boom"):
        assert load_dataset(path).info.name == "demo-en"


def test_duplicate_reader_name_is_refused() -> None:
    with pytest.raises(MnemometerError, match="'locomo' is already registered"):
        register_reader(Reader("locomo", "again", lambda p, h: False, lambda p: None))


def test_list_readers_shows_every_builtin_with_its_description() -> None:
    res = invoke_cli("list", "readers")
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert [line.split()[0] for line in lines[: len(BUILTIN)]] == BUILTIN
    assert "Letta" in lines[0] and "MemoryAgentBench" in lines[1]
    assert "LoCoMo" in lines[5] and "LongMemEval" in lines[6]


def test_plugin_reader_through_entry_points(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(plugins.install(tmp_path / "plug", readers=True)))
    listed = subprocess.run(
        [MNEMOMETER, "list", "readers"], capture_output=True, text=True, env=env
    )
    assert listed.returncode == 0, listed.stderr
    assert "qa-tsv" in listed.stdout and "question<TAB>fact pairs" in listed.stdout
    # A broken plug-in is a warning naming it, never a dead listing.
    assert "broken-reader  (broken: " in listed.stdout and "RuntimeError" in listed.stderr
    assert "not-a-reader   (broken: " in listed.stdout
    data = tmp_path / "facts.qa.tsv"
    data.write_text("Where does Ana live?\tAna lives in Lisbon.\nWho is Ben?\tBen is a cook.\n")
    code = (
        "import sys; from mnemometer.datasets import load_dataset\n"
        "ds = load_dataset(sys.argv[1]); print(len(ds.queries), ds.queries[1].relevant_ids)\n"
        "print(load_dataset('demo-en', format='native-json').info.name)"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code, str(data)], capture_output=True, text=True, env=env
    )
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.splitlines() == ["2 ['m2']", "demo-en"]
    assert "broken-reader" in loaded.stderr  # sniffing met it, warned, and went on


def test_readers_skip_a_broken_plugin_with_a_warning(registered) -> None:
    registered(Reader("fine", "ok", lambda p, h: False, lambda p: None))
    READERS.register("not-a-reader", lambda: None)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            names = [r.name for r in readers()]
        assert "fine" in names and "not-a-reader" not in names
        assert any("'not-a-reader' is not a Reader" in str(w.message) for w in caught)
    finally:
        READERS.unregister("not-a-reader")
