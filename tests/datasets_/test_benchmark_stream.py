"""Streaming a top-level JSON list: offsets, chunk edges, errors, and constant memory."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import REPO

from mnemometer.datasets import load_dataset
from mnemometer.datasets._longmemeval import load_haystack, longmemeval_index
from mnemometer.datasets._stream import iter_json_array, read_element
from mnemometer.errors import DatasetError

MINI = REPO / "tests/data/longmemeval_mini.json"


def test_elements_come_with_offsets_across_chunk_edges(tmp_path):
    items = [{"i": i, "text": "é" * (i * 7), "n": 10**i} for i in range(12)]
    path = tmp_path / "a.json"
    path.write_text(
        "\ufeff [\n" + ",\n  ".join(json.dumps(x, ensure_ascii=False) for x in items) + "\n]\n",
        encoding="utf-8",
    )
    got = list(iter_json_array(path, chunk=16))  # elements far bigger than a chunk
    assert [x for _, _, x in got] == items
    for offset, length, x in got:
        assert read_element(path, offset, length) == x


def test_bad_json_is_named_by_line_and_column(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('[{"a": 1},\n {"a": 2,, "b": 3}]')
    with pytest.raises(DatasetError, match=r"bad.json:2:\d+: malformed JSON"):
        list(iter_json_array(path, chunk=8))
    path.write_text('{"not": "a list"}')
    with pytest.raises(DatasetError, match="expected a JSON list"):
        list(iter_json_array(path))
    path.write_text('[{"a": 1}')
    with pytest.raises(DatasetError, match="never ends|malformed"):
        list(iter_json_array(path))


def test_the_index_is_the_full_read_without_the_haystacks():
    full = load_dataset(MINI)
    index = longmemeval_index(MINI)
    assert [q.model_dump() for q in index.queries] == [q.model_dump() for q in full.queries]
    assert all(not c.sessions and c.metadata["sha256"] for c in index.conversations)
    for stub, conv in zip(index.conversations, full.conversations, strict=True):
        loaded, query = load_haystack(MINI, stub)
        assert loaded == conv
        assert stub.metadata["turns"] == sum(len(s.turns) for s in conv.sessions)


def test_a_changed_file_is_refused(tmp_path):
    path = tmp_path / "lme.json"
    path.write_bytes(MINI.read_bytes())
    stub = longmemeval_index(path).conversations[0]
    data = path.read_bytes().replace(b"teal", b"pink", 1)
    path.write_bytes(data)
    with pytest.raises(DatasetError, match="changed since the file was indexed"):
        load_haystack(path, stub)


@pytest.mark.slow
def test_a_500_by_50_file_streams_in_constant_memory(tmp_path):
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from bench_longmemeval_stream import probe, write_file
    finally:
        sys.path.pop(0)
    path = tmp_path / "gen.json"
    size_mb = write_file(path, 500, 50, 120) / 2**20
    before, peak, n, _ = probe(path, "index")
    assert n == 500
    grew_mb = (peak - before) / 1024
    assert grew_mb < size_mb / 5, (grew_mb, size_mb)  # one question at a time, not the file
    assert subprocess.run([sys.executable, "-c", "print(1)"]).returncode == 0
