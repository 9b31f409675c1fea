"""Bad input is refused clearly: every input format, mutated by a seeded mutator.

Each case is one mutated file (see ``mutate.py``: truncation, flipped bytes, invalid UTF-8,
a byte-order mark, CRLF, an empty file, wrong types, missing keys, NaN, huge numbers, deep
nesting; since issue 30 also lone surrogates, TOML nested 10,000 deep, odd paths in the
fields that name files, and the file as a FIFO, a directory or a bad link). A loader
either reads it or raises a :class:`MnemometerError` whose one line names the file;
nothing else may escape, and no case may hang: each runs in a thread that must return
within :data:`HANG` seconds (then its FIFOs are opened from the other end, so the test
ends and says so). What a loader accepts must also hash (a dataset's content hash). A
file that is not strict JSON (checked here by an independent parse) must never be read as
if it were, and a byte-order mark or CRLF line ends must read exactly as the plain file
does. The fast group runs 30 cases a format plus the issue-30 kinds; the ``slow`` group
300, plus a 50 MB line for each. The tally is printed at the end of the run.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, seed_file
from mutate import (
    TALLY,
    Special,
    cases,
    deep_toml_cases,
    huge_line,
    make,
    odd_path_cases,
    special_cases,
    surrogate_cases,
    unblock,
)

from mnemometer.comparison import load_policy
from mnemometer.datasets import load_dataset, save_dataset
from mnemometer.datasets._errata import read_errata
from mnemometer.errors import MnemometerError
from mnemometer.llm import find_settings
from mnemometer.runner._conditions import load_conditions
from mnemometer.suites.items import ItemsSuite, load_suite
from mnemometer.suites.scenarios import load_scenario
from mnemometer.workflows import sweep

TEAM = REPO / "examples" / "suites" / "team-memory"
DEMO = REPO / "src" / "mnemometer" / "datasets" / "builtin" / "demo_en.json"
SAMPLE = ("memtest", "sample_db_100.json")
FAST, SLOW = 30, 300
HANG = 20.0
"""Seconds a case may take before it counts as a hang (a FIFO read blocks forever)."""


def _locomo() -> bytes:
    """The first LoCoMo conversation, cut to two sessions and eight questions."""
    first = json.loads(seed_file("locomo", "locomo10.json").read_text("utf-8"))[0]
    conv = {
        k: v
        for k, v in first["conversation"].items()
        if not k.startswith("session_") or k.split("_")[1] in ("1", "2")
    }
    return json.dumps([{"qa": first["qa"][:8], "conversation": conv}]).encode()


def _letta() -> bytes:
    path = seed_file("letta-core-memory", "core_memory_read.jsonl")
    return b"".join(path.read_bytes().splitlines(True)[:10])


def _native_jsonl(tmp: Path) -> bytes:
    return save_dataset(load_dataset("demo-en"), tmp / "demo.jsonl").read_bytes()


def _in_suite(path: Path) -> Any:
    """Load the copy of the team-memory suite that holds the mutated ``path`` (and hash it)."""
    loaded = load_suite(path.parent)
    ItemsSuite(str(path.parent)).dataset()  # its content hash: what a run records
    return loaded


def _dataset(load: Callable[[Path], Any]) -> Callable[[Path], Any]:
    """``load``, then the dataset's content hash (computed when a run first reads it)."""

    def hashed(path: Path) -> Any:
        ds = load(path)
        ds.info.resolve_hash()
        return ds

    return hashed


TINY = {
    "info": {"name": "tiny"},
    "memories": [
        {"id": "m1", "text": "Deploys go out on Tuesdays."},
        {"id": "m2", "text": "The shipments database is Postgres."},
    ],
    "queries": [{"id": "q1", "text": "When do deploys go out?", "relevant_ids": ["m1"]}],
}
SWEEP = b"""suite = "retrieval"
suite_options = { top_k = 5 }
conditions = ["fast"]
conditions_file = "conditions.toml"

[[systems]]
store = "keyword"

[[datasets]]
path = "tiny.json"
name = "tiny"

[[compare]]
baseline = "keyword"
candidate = "fast"
"""
LLM_CONFIG = b"""[llm]
base_url = "http://127.0.0.1:9/v1"
model = "fake-llm"
timeout = 30
max_retries = 1
"""


def _sweep(path: Path) -> Any:
    """Run the mutated sweep (one tiny dataset, two systems: about 40 ms) to its end."""
    (path.parent / "tiny.json").write_text(json.dumps(TINY))
    (path.parent / "conditions.toml").write_bytes(CONDITIONS)
    return sweep(path, path.parent / f"out-{uuid.uuid4().hex[:8]}")


CONDITIONS = b'[fast]\nstore = "bm25"\ndescription = "words"\n[deep]\nstore = "hybrid"\n'
ERRATA = (
    b'{"question_id": "q1", "reason": "typo in the answer", "answer": "Tuesday"}\n'
    b'{"question_id": "q2", "reason": "the evidence contradicts it", "exclude": true}\n'
)

# format -> (structure, seed, file suffix, loader). A seed is bytes or a function of tmp;
# a loader of None means the file is one of the team-memory suite's.
FORMATS: dict[str, tuple[str, Any, str, Callable[[Path], Any] | None]] = {
    "native-json": ("json", lambda tmp: DEMO.read_bytes(), ".json", _dataset(load_dataset)),
    "native-jsonl": ("jsonl", _native_jsonl, ".jsonl", _dataset(load_dataset)),
    "memtest": (
        "json",
        lambda tmp: seed_file(*SAMPLE).read_bytes(),
        ".json",
        _dataset(load_dataset),
    ),
    "locomo": ("json", lambda tmp: _locomo(), ".json", _dataset(load_dataset)),
    "longmemeval": (
        "json",
        lambda tmp: (REPO / "tests" / "data" / "longmemeval_mini.json").read_bytes(),
        ".json",
        _dataset(load_dataset),
    ),
    "letta-core-memory": (
        "jsonl",
        lambda tmp: _letta(),
        ".jsonl",
        _dataset(lambda p: load_dataset(p, "letta-core-memory")),
    ),
    "memoryagentbench": (
        "jsonl",
        lambda tmp: (REPO / "tests/data/memoryagentbench/Accurate_Retrieval.jsonl").read_bytes(),
        ".jsonl",
        _dataset(lambda p: load_dataset(p, "memoryagentbench")),
    ),
    "scenario": (
        "jsonl",
        lambda tmp: (
            REPO / "src/mnemometer/suites/scenarios/data/cross_session_recall.jsonl"
        ).read_bytes(),
        ".jsonl",
        load_scenario,
    ),
    "suite.toml": ("toml", lambda tmp: (TEAM / "suite.toml").read_bytes(), ".toml", None),
    "items.jsonl": ("jsonl", lambda tmp: (TEAM / "items.jsonl").read_bytes(), ".jsonl", None),
    "memories.jsonl": (
        "jsonl",
        lambda tmp: (TEAM / "memories.jsonl").read_bytes(),
        ".jsonl",
        None,
    ),
    "gate policy": ("toml", lambda tmp: (TEAM / "gate.toml").read_bytes(), ".toml", load_policy),
    "conditions": ("toml", lambda tmp: CONDITIONS, ".toml", load_conditions),
    "errata": ("jsonl", lambda tmp: ERRATA, ".jsonl", read_errata),
    "sweep": ("toml", lambda tmp: SWEEP, ".toml", _sweep),
    "llm config": ("toml", lambda tmp: LLM_CONFIG, ".toml", lambda p: find_settings(config_file=p)),
}


def _loader(name: str) -> Callable[[Path], Any]:
    load = FORMATS[name][3]
    return load if load is not None else _in_suite


def _target(name: str, tmp: Path) -> Path:
    """Where a case of ``name`` is written: a fresh copy of the suite for the suite's files."""
    if FORMATS[name][3] is not None:
        return tmp / f"case{FORMATS[name][2]}"
    suite = tmp / "suite"
    shutil.rmtree(suite, ignore_errors=True)
    shutil.copytree(TEAM, suite)
    return suite / name


def strict_json(data: bytes, kind: str) -> bool:
    """Independent oracle: is ``data`` strict JSON (or JSON lines) in UTF-8?"""

    def refuse(name: str) -> Any:
        raise ValueError(name)

    try:
        text = data.decode("utf-8-sig")
        docs = [text] if kind == "json" else text.splitlines()
        for doc in docs:
            if doc.strip() and not doc.lstrip().startswith("#"):
                json.loads(doc, parse_constant=refuse)
    except (ValueError, RecursionError):
        return False
    return True


def try_case(name: str, label: str, data: bytes | Special, tmp: Path) -> str | None:
    """Load one mutated file; the reason it broke the contract, or None when it held."""
    kind = FORMATS[name][0]
    path = _target(name, tmp)
    make(path, data)
    outcome: list[BaseException | None] = []

    def load() -> None:
        try:
            _loader(name)(path)
            outcome.append(None)
        except BaseException as e:  # handed to the test thread
            outcome.append(e)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(HANG)
    if worker.is_alive():  # blocked, on a FIFO most likely: free it, then say so
        unblock([f for f in tmp.rglob("*") if f.is_fifo()])
        worker.join(HANG)
        return f"{label}: hung (still reading after {HANG:g} s)"
    error = outcome[0]
    if isinstance(error, MnemometerError):
        message = str(error)
        if "\n" in message.strip():
            return f"{label}: a message of several lines: {message[:200]!r}"
        if path.name not in message and "suite" not in message:
            return f"{label}: the message does not name the file: {message[:200]!r}"
        return None
    if error is not None:  # the contract: nothing but a MnemometerError escapes
        return f"{label}: {type(error).__name__}: {str(error)[:200]}"
    if isinstance(data, Special):
        return f"{label}: read without an error"
    if kind != "toml" and not strict_json(data, kind):
        return f"{label}: a file that is not JSON was read without an error"
    return None


def run_corpus(
    name: str, n: int, tmp: Path, corpus: list[tuple[str, bytes | Special]] | None = None
) -> list[str]:
    """Try ``n`` seeded cases of format ``name`` (or ``corpus``); the broken ones, tallied."""
    kind, seed, _, _ = FORMATS[name]
    failures = []
    for label, data in corpus if corpus is not None else cases(seed(tmp), kind, 20, n):
        failure = try_case(name, label, data, tmp)
        TALLY.record(name, failure)
        if failure is not None:
            failures.append(failure)
    return failures


def issue_30_cases(name: str, tmp: Path) -> list[tuple[str, bytes | Special]]:
    """The kinds issue 30 added: surrogates, deep TOML, odd paths, special files."""
    import random

    kind, seed, _, _ = FORMATS[name]
    raw = seed(tmp)
    fifo = tmp / "a-fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    out: list[tuple[str, bytes | Special]] = []
    out += surrogate_cases(raw, kind, random.Random(30), 4)
    out += deep_toml_cases(raw) if kind == "toml" else []
    out += odd_path_cases(raw, kind, fifo)
    out += special_cases()
    return out


@pytest.mark.parametrize("name", list(FORMATS))
def test_mutated_input_is_read_or_refused_in_one_line(name: str, tmp_path: Path) -> None:
    assert run_corpus(name, FAST, tmp_path) == []


@pytest.mark.parametrize("name", list(FORMATS))
def test_surrogates_deep_toml_odd_paths_and_fifos_are_refused_in_one_line(
    name: str, tmp_path: Path
) -> None:
    # Issue 30 §6: a lone surrogate crashed the dataset hash, 10,000-deep TOML raised
    # RecursionError, a FIFO blocked forever; each case here must end in a result or one
    # line, within HANG seconds.
    assert run_corpus(name, 0, tmp_path, issue_30_cases(name, tmp_path)) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", list(FORMATS))
def test_the_large_corpus_and_a_50_mb_line(name: str, tmp_path: Path) -> None:
    failures = run_corpus(name, SLOW, tmp_path)
    kind, seed, _, _ = FORMATS[name]
    label, data = huge_line(seed(tmp_path), kind)
    failure = try_case(name, label, data, tmp_path)
    TALLY.record(name, failure)
    assert [*failures, *([failure] if failure else [])] == []


@pytest.mark.parametrize("name", ["native-json", "memtest", "items.jsonl", "scenario"])
def test_a_byte_order_mark_or_crlf_reads_exactly_as_the_plain_file(
    name: str, tmp_path: Path
) -> None:
    kind, seed, suffix, _ = FORMATS[name]
    plain = seed(tmp_path)
    read = []
    for data in (plain, b"\xef\xbb\xbf" + plain, plain.replace(b"\n", b"\r\n")):
        path = _target(name, tmp_path)
        path.write_bytes(data)
        got = _loader(name)(path)
        read.append(_content(got))
    assert read[1:] == [read[0], read[0]]


def _content(loaded: Any) -> Any:
    """What a loader read, without the file's own hash: a dataset's, a suite's, a scenario's."""
    if hasattr(loaded, "info"):
        return loaded.info.content_hash
    return repr(loaded.items) if hasattr(loaded, "items") else repr(loaded.steps)


def test_the_known_cases_of_issue_20(tmp_path: Path) -> None:
    # A MemTest header that is a string used to end in "'str' object has no attribute
    # 'get'"; NaN and deep nesting in any JSON input used to escape as a traceback.
    raw = json.loads(seed_file(*SAMPLE).read_bytes())
    raw["database_info"] = "MemTest"
    path = tmp_path / "sample.json"
    path.write_text(json.dumps(raw), "utf-8")
    with pytest.raises(MnemometerError, match=r"sample\.json: database_info: expected an object"):
        load_dataset(path)
    path.write_text('{"memories": [{"memory_id": "m", "content": "x", "weight": NaN}]}')
    with pytest.raises(MnemometerError, match=r"NaN is not valid JSON"):
        load_dataset(path, "memtest")
    path.write_bytes(b"[" * 100_000)
    with pytest.raises(MnemometerError, match=r"sample\.json: malformed JSON: nested too deep"):
        load_dataset(path, "native-json")
