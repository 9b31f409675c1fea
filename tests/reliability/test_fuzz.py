"""Bad input is refused clearly: every input format, mutated by a seeded mutator.

Each case is one mutated file (see ``mutate.py``: truncation, flipped bytes, invalid UTF-8,
a byte-order mark, CRLF, an empty file, wrong types, missing keys, NaN, huge numbers, deep
nesting). A loader either reads it or raises a :class:`MnemometerError` whose one line
names the file; nothing else may escape. A file that is not strict JSON (checked here by an
independent parse) must never be read as if it were, and a byte-order mark or CRLF line
ends must read exactly as the plain file does. The fast group runs 30 cases a format; the
``slow`` group 300, plus a 50 MB line for each. The tally is printed at the end of the run.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, seed_file
from mutate import TALLY, cases, huge_line

from mnemometer.comparison import load_policy
from mnemometer.datasets import load_dataset, save_dataset
from mnemometer.datasets._errata import read_errata
from mnemometer.errors import MnemometerError
from mnemometer.runner._conditions import load_conditions
from mnemometer.suites.items import load_suite
from mnemometer.suites.scenarios import load_scenario

TEAM = REPO / "examples" / "suites" / "team-memory"
DEMO = REPO / "src" / "mnemometer" / "datasets" / "builtin" / "demo_en.json"
SAMPLE = ("memtest", "sample_db_100.json")
FAST, SLOW = 30, 300


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


def _in_suite(name: str) -> Callable[[Path], Any]:
    """Load a copy of the team-memory suite whose file ``name`` is the mutated one."""

    def load(path: Path) -> Any:
        suite = path.parent / "suite"
        shutil.rmtree(suite, ignore_errors=True)
        shutil.copytree(TEAM, suite)
        shutil.copy(path, suite / name)
        return load_suite(suite)

    return load


CONDITIONS = b'[fast]\nstore = "bm25"\ndescription = "words"\n[deep]\nstore = "hybrid"\n'
ERRATA = (
    b'{"question_id": "q1", "reason": "typo in the answer", "answer": "Tuesday"}\n'
    b'{"question_id": "q2", "reason": "the evidence contradicts it", "exclude": true}\n'
)

# format -> (structure, seed, file suffix, loader). A seed is bytes or a function of tmp.
FORMATS: dict[str, tuple[str, Any, str, Callable[[Path], Any]]] = {
    "native-json": ("json", lambda tmp: DEMO.read_bytes(), ".json", load_dataset),
    "native-jsonl": ("jsonl", _native_jsonl, ".jsonl", load_dataset),
    "memtest": ("json", lambda tmp: seed_file(*SAMPLE).read_bytes(), ".json", load_dataset),
    "locomo": ("json", lambda tmp: _locomo(), ".json", load_dataset),
    "longmemeval": (
        "json",
        lambda tmp: (REPO / "tests" / "data" / "longmemeval_mini.json").read_bytes(),
        ".json",
        load_dataset,
    ),
    "letta-core-memory": (
        "jsonl",
        lambda tmp: _letta(),
        ".jsonl",
        lambda p: load_dataset(p, "letta-core-memory"),
    ),
    "memoryagentbench": (
        "jsonl",
        lambda tmp: (REPO / "tests/data/memoryagentbench/Accurate_Retrieval.jsonl").read_bytes(),
        ".jsonl",
        lambda p: load_dataset(p, "memoryagentbench"),
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
}


def _loader(name: str) -> Callable[[Path], Any]:
    load = FORMATS[name][3]
    return load if load is not None else _in_suite(name)


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


def try_case(name: str, label: str, data: bytes, tmp: Path) -> str | None:
    """Load one mutated file; the reason it broke the contract, or None when it held."""
    kind, _, suffix, _ = FORMATS[name]
    path = tmp / f"case{suffix}"
    path.write_bytes(data)
    try:
        _loader(name)(path)
    except MnemometerError as e:
        message = str(e)
        if "\n" in message.strip():
            return f"{label}: a message of several lines: {message[:200]!r}"
        if path.name not in message and "suite" not in message:
            return f"{label}: the message does not name the file: {message[:200]!r}"
        return None
    except Exception as e:  # the contract: nothing but a MnemometerError escapes
        return f"{label}: {type(e).__name__}: {str(e)[:200]}"
    if kind != "toml" and not strict_json(data, kind):
        return f"{label}: a file that is not JSON was read without an error"
    return None


def run_corpus(name: str, n: int, tmp: Path) -> list[str]:
    """Try ``n`` seeded cases of format ``name``; the broken ones, tallied in TALLY."""
    kind, seed, _, _ = FORMATS[name]
    failures = []
    for label, data in cases(seed(tmp), kind, seed_number=20, n=n):
        failure = try_case(name, label, data, tmp)
        TALLY.record(name, failure)
        if failure is not None:
            failures.append(failure)
    return failures


@pytest.mark.parametrize("name", list(FORMATS))
def test_mutated_input_is_read_or_refused_in_one_line(name: str, tmp_path: Path) -> None:
    assert run_corpus(name, FAST, tmp_path) == []


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
        path = tmp_path / f"case{suffix}"
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
