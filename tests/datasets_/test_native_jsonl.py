"""Native JSONL: the batch reader reads every layout exactly as the line-by-line reader does.

The batch reader validates runs of one kind a few hundred records at a time straight from
the file's bytes; anything it does not recognise goes to the line-by-line reader, whose
messages name the line. These tests give it layouts write_jsonl never writes, runs cut at
every line, and broken records in later runs, and compare with the line reader.
"""

from __future__ import annotations

import random
import re
from datetime import datetime
from pathlib import Path

import pytest

from mnemometer.datasets import (
    Conversation,
    Dataset,
    DatasetInfo,
    Query,
    Session,
    Turn,
    _io,
    load_dataset,
    save_dataset,
)
from mnemometer.errors import DatasetError


def mixed() -> Dataset:
    """demo-en's memories and queries plus a conversation and a question about it."""
    ds = load_dataset("demo-en")
    turns = [
        Turn(id=f"c1/{n}", speaker="Ann" if n % 2 else "Bo", text=f"turn {n} é") for n in (1, 2, 3)
    ]
    conv = Conversation(
        id="c1",
        speakers=["Ann", "Bo"],
        sessions=[Session(id="s1", date=datetime(2023, 5, 8, 13, 56), turns=turns)],
    )
    question = Query(
        id="c1/q1", text="What did Bo say?", conversation_id="c1", relevant_ids=["c1/2"]
    )
    return Dataset(
        info=DatasetInfo(name="mixed", reference_time=ds.info.reference_time),
        memories=ds.memories,
        conversations=[conv],
        queries=[*ds.queries, question],
    ).with_hash()


def written(tmp_path: Path) -> tuple[Path, list[str]]:
    path = save_dataset(mixed(), tmp_path / "d.jsonl")
    return path, path.read_text("utf-8").splitlines()


def interleaved(lines: list[str]) -> list[str]:
    """Info first, every other line shuffled: runs of one kind are one or a few lines."""
    rest = lines[1:]
    random.Random(7).shuffle(rest)
    return [lines[0], *rest]


LAYOUTS = {
    "as written": (lambda ls: "\n".join(ls) + "\n", True),
    "no final newline": (lambda ls: "\n".join(ls), True),
    "CRLF": (lambda ls: "\r\n".join(ls) + "\r\n", True),
    "byte-order mark": (lambda ls: "\ufeff" + "\n".join(ls) + "\n", True),
    "trailing blank lines": (lambda ls: "\n".join(ls) + "\n\n  \n", True),
    "kinds interleaved": (lambda ls: "\n".join(interleaved(ls)) + "\n", True),
    "a blank line inside": (lambda ls: "\n".join([*ls[:5], "", *ls[5:]]) + "\n", False),
    "an indented line": (lambda ls: "\n".join([*ls[:5], " " + ls[5], *ls[6:]]) + "\n", False),
    "spaces after the kind": (
        lambda ls: "\n".join([*ls[:5], ls[5].replace('"kind":', '"kind": ', 1), *ls[6:]]),
        False,
    ),
    "info not first": (lambda ls: "\n".join([*ls[1:], ls[0]]) + "\n", False),
}


@pytest.mark.parametrize("run_bytes", [1, 300, 256 * 1024])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_layout_reads_as_the_line_reader_does(
    layout: str, run_bytes: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_io, "_RUN_BYTES", run_bytes)  # 1: every line is its own batch
    path, lines = written(tmp_path)
    render, batched = LAYOUTS[layout]
    path.write_text(render(lines), "utf-8")
    expected = _io._read_native_jsonl_lines(path).with_lazy_hash()  # as load_dataset does
    fast = _io._read_native_jsonl_fast(path)
    assert (fast is not None) == batched
    loaded = load_dataset(path)
    assert loaded == expected
    assert loaded.compute_hash() == expected.compute_hash()
    if layout in ("as written", "CRLF", "byte-order mark"):
        assert loaded.compute_hash() == mixed().compute_hash()  # order kept too


@pytest.mark.parametrize("run_bytes", [1, 300, 256 * 1024])
def test_a_problem_in_a_later_run_names_its_line(
    run_bytes: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_io, "_RUN_BYTES", run_bytes)
    path, lines = written(tmp_path)
    lines = interleaved(lines)
    memory_lines = [n for n, s in enumerate(lines, 1) if s.startswith('{"kind":"memory"')]
    query_lines = [n for n, s in enumerate(lines, 1) if s.startswith('{"kind":"query"')]

    # A repeated id is found after every run is validated: the reader maps it back.
    second, first = memory_lines[-1], memory_lines[0]
    copy = list(lines)
    first_id = re.search(r'"id":"([^"]*)"', copy[first - 1]).group(1)
    copy[second - 1] = re.sub(r'"id":"[^"]*"', f'"id":"{first_id}"', copy[second - 1], count=1)
    path.write_text("\n".join(copy) + "\n", "utf-8")
    with pytest.raises(DatasetError, match=rf"d\.jsonl:{second}: id: repeated memory id"):
        load_dataset(path)

    # A field the schema refuses, in the last query line.
    last = query_lines[-1]
    copy = list(lines)
    copy[last - 1] = copy[last - 1].replace('"text":', '"txet":', 1)
    path.write_text("\n".join(copy) + "\n", "utf-8")
    with pytest.raises(DatasetError, match=rf"d\.jsonl:{last}: text: Field required"):
        load_dataset(path)


def test_a_line_holding_two_records_is_refused_not_split(tmp_path: Path) -> None:
    # '{...},{...}' would be two array elements once lines are joined with commas.
    path, lines = written(tmp_path)
    body = lines[2].split(",", 2)[2]  # the memory without its kind and id
    lines[2] = lines[2] + ',{"id":"extra",' + body
    path.write_text("\n".join(lines) + "\n", "utf-8")
    assert _io._read_native_jsonl_fast(path) is None
    with pytest.raises(DatasetError, match=r"d\.jsonl:3:\d+: malformed JSON"):
        load_dataset(path)


def test_bytes_that_are_not_utf8_are_named(tmp_path: Path) -> None:
    path, lines = written(tmp_path)
    raw = "\n".join(lines).encode()
    at = raw.index(b"\n", raw.index(b"\n") + 1) + 30  # inside the second memory line
    path.write_bytes(raw[:at] + b"\xff" + raw[at:] + b"\n")
    with pytest.raises(DatasetError, match=r"d\.jsonl:3: not UTF-8 text"):
        load_dataset(path)


def test_the_first_problem_in_file_order_is_the_one_named(tmp_path: Path) -> None:
    # Ids are checked with sets, but a dangling id in an earlier query still wins over a
    # repeated id in a later one, and a repeated memory id over both.
    from mnemometer.datasets import check_dataset

    ds = load_dataset("demo-en")
    ds.queries[0].relevant_ids = ["nope"]
    ds.queries[2].id = ds.queries[1].id
    with pytest.raises(DatasetError, match=r"queries\.0\.relevant_ids: 'nope' is not a memory id"):
        check_dataset(ds, "d.json")
    ds.queries[0].relevant_ids = []
    with pytest.raises(DatasetError, match=r"queries\.2\.id: repeated query id"):
        check_dataset(ds, "d.json")
    ds.memories[3].id = ds.memories[0].id
    with pytest.raises(DatasetError, match=r"memories\.3\.id: repeated memory id"):
        check_dataset(ds, "d.json")
