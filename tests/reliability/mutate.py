"""A seeded mutator for input files: the same seed always yields the same cases.

Each case is ``(label, bytes)``. Byte-level cases work on any file (truncation, a flipped
byte, invalid UTF-8, a byte-order mark, CRLF line ends, an empty file, a very long line);
structural cases parse the seed (JSON, JSON lines or TOML), change one value (a missing
key, a wrong type, NaN, a huge number, deep nesting) and write it back. Issue 30 added four
kinds: strings holding a lone surrogate (valid JSON, no Unicode text), TOML nested 10,000
deep, odd paths in the fields that name files (a NUL byte, a name too long, a FIFO, a
device), and the file itself as something other than a regular file (:class:`Special`:
a FIFO, a directory, a symlink loop), which :func:`make` creates in place of the bytes.
"""

from __future__ import annotations

import copy
import json
import os
import random
import shutil
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DEEP = 100_000
"""Nesting depth of the deep-nesting value (far past Python's recursion limit)."""

_WEIRD: list[Any] = [
    None,
    "",
    "x",
    0,
    -1,
    10**40,
    1e308,
    float("nan"),
    float("inf"),
    True,
    [],
    {},
    [1, "a", None],
    {"a": {"b": 1}},
    "\u0000\ud7ff\U0010ffff",
]


def _paths(obj: Any, prefix: tuple = ()) -> Iterator[tuple]:
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:3]):  # the first few stand for the rest
            yield from _paths(v, (*prefix, i))


def _change(doc: Any, rng: random.Random) -> tuple[Any, str]:
    doc = copy.deepcopy(doc)
    paths = [p for p in _paths(doc) if p]
    if not paths:
        return rng.choice(_WEIRD), "root replaced"
    path = rng.choice(paths)
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    where = ".".join(map(str, path))
    if isinstance(parent, dict) and rng.random() < 0.3:
        del parent[path[-1]]
        return doc, f"{where} removed"
    value = rng.choice(_WEIRD)
    parent[path[-1]] = value
    return doc, f"{where} = {value!r}"[:120]


def _dump(doc: Any, kind: str) -> bytes:
    if kind == "jsonl":
        rows = doc if isinstance(doc, list) else [doc]
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
    if kind == "toml":
        return _toml(doc).encode()
    return json.dumps(doc, ensure_ascii=False, indent=1).encode()


def _toml(doc: Any) -> str:
    """Enough TOML for the mutated tables: inline values, wrong types written as strings."""
    if not isinstance(doc, dict):
        return f"value = {json.dumps(str(doc))}\n"
    flat, tables = [], []
    for k, v in doc.items():
        (tables if isinstance(v, dict) and v else flat).append((k, v))
    out = [f"{json.dumps(k)} = {_toml_value(v)}" for k, v in flat]
    for k, v in tables:
        out.append(f"[{json.dumps(k)}]")
        out += [f"{json.dumps(kk)} = {_toml_value(vv)}" for kk, vv in v.items()]
    return "\n".join(out) + "\n"


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "nan" if v != v else ("inf" if v == float("inf") else repr(v))
    if isinstance(v, int):
        return str(v) if abs(v) < 2**63 else json.dumps(str(v))
    if v is None:
        return '""'
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(x)}" for k, x in v.items()) + "}"
    return json.dumps(v, ensure_ascii=False)


def _parse(seed: bytes, kind: str) -> Any:
    text = seed.decode("utf-8")
    if kind == "jsonl":
        lines = [line for line in text.splitlines() if line.strip()]
        return [json.loads(line) for line in lines if not line.startswith("#")]
    if kind == "toml":
        return tomllib.loads(text)
    return json.loads(text)


def byte_cases(seed: bytes, rng: random.Random, n: int) -> Iterator[tuple[str, bytes]]:
    """``n`` byte-level mutations of ``seed`` (the fixed ones first)."""
    fixed: list[tuple[str, bytes]] = [
        ("empty file", b""),
        ("only whitespace", b" \n\n"),
        ("byte-order mark", b"\xef\xbb\xbf" + seed),
        ("CRLF line ends", seed.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")),
        ("invalid UTF-8 at the start", b"\xff\xfe" + seed),
        ("deep nesting", b"[" * DEEP + b"]" * DEEP),
    ]
    yield from fixed[:n]
    for _ in range(n - len(fixed)):
        i = rng.randrange(max(len(seed), 1))
        match rng.randrange(3):
            case 0:
                yield f"truncated at byte {i}", seed[:i]
            case 1:
                flipped = bytes([seed[i] ^ (1 << rng.randrange(8))]) if seed else b""
                yield f"byte {i} flipped", seed[:i] + flipped + seed[i + 1 :]
            case _:
                yield f"invalid UTF-8 at byte {i}", seed[:i] + b"\xc3\x28" + seed[i:]


def tree_cases(seed: bytes, kind: str, rng: random.Random, n: int) -> Iterator[tuple[str, bytes]]:
    """``n`` structural mutations: one value changed, removed or nested deeply."""
    doc = _parse(seed, kind)
    for _ in range(n):
        changed, label = _change(doc, rng)
        yield label, _dump(changed, kind)


def huge_line(seed: bytes, kind: str, size: int = 50 * 2**20) -> tuple[str, bytes]:
    """The seed with one string value grown to ``size`` bytes (a single 50 MB line)."""
    doc = _parse(seed, kind)
    paths = [p for p in _paths(doc) if p]
    target = doc
    for p in paths:  # the first string value
        node = doc
        for k in p:
            node = node[k]
        if isinstance(node, str):
            target = p
            break
    else:
        return "a 50 MB line", b"x" * size
    parent = doc
    for k in target[:-1]:
        parent = parent[k]
    parent[target[-1]] = "x" * size
    data = _dump(doc, kind).replace(b"\n", b" ") if kind == "json" else _dump(doc, kind)
    return f"{'.'.join(map(str, target))} is a 50 MB line", data


def cases(seed: bytes, kind: str, seed_number: int, n: int) -> list[tuple[str, bytes]]:
    """``n`` cases for ``seed``: half byte-level, half structural, all from ``seed_number``."""
    rng = random.Random(seed_number)
    half = n // 2
    return [*byte_cases(seed, rng, half), *tree_cases(seed, kind, rng, n - half)]


# ---- issue 30: surrogates, deep TOML, odd paths, special files -----------------------

SURROGATES = ["\ud800", "\udfff", "a\udc00b\ud800", "\ud83d"]
"""Strings with a lone surrogate half (``json.dumps`` writes them as ``\\uXXXX``)."""

DEEP_TOML = 10_000
"""Nesting depth of the deep TOML cases (tomllib recurses once per level)."""


def _strings(doc: Any) -> list[tuple]:
    """Paths to every string value (and to every key's parent, for a key case)."""
    out = []
    for p in _paths(doc):
        node = doc
        for k in p:
            node = node[k]
        if isinstance(node, str):
            out.append(p)
    return out


def _set(doc: Any, path: tuple, value: Any) -> Any:
    doc = copy.deepcopy(doc)
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    parent[path[-1]] = value
    return doc


def surrogate_cases(seed: bytes, kind: str, rng: random.Random, n: int) -> list[tuple[str, bytes]]:
    """``n`` cases with a string (or a key) holding a lone surrogate: valid JSON."""
    doc = _parse(seed, kind)
    targets = _strings(doc) or [()]
    out = []
    for i in range(n):
        bad = SURROGATES[i % len(SURROGATES)]
        path = rng.choice(targets)
        if i % 4 == 3 and isinstance(doc, dict | list):  # a key, not a value
            changed = {bad: 1, **doc} if isinstance(doc, dict) else [{bad: 1}, *doc]
            label = f"a key holds the lone surrogate {bad!r}"
        else:
            changed = _set(doc, path, bad) if path else bad
            label = f"{'.'.join(map(str, path)) or 'root'} = {bad!r}"
        out.append((label, _dump_ascii(changed, kind)))
    return out


def _dump_ascii(doc: Any, kind: str) -> bytes:
    """Like :func:`_dump`, with non-ASCII escaped (so a lone surrogate is ``\\ud800``)."""
    if kind == "jsonl":
        rows = doc if isinstance(doc, list) else [doc]
        return "".join(json.dumps(r) + "\n" for r in rows).encode()
    if kind == "toml":
        return _toml(doc).encode("utf-8", "backslashreplace")
    return json.dumps(doc, indent=1).encode()


def deep_toml_cases(seed: bytes) -> list[tuple[str, bytes]]:
    """TOML nested :data:`DEEP_TOML` deep: arrays, inline tables, and dotted table names."""
    head = seed.decode("utf-8").rstrip() + "\n" if seed.strip() else ""
    n = DEEP_TOML
    return [
        ("TOML: an array nested 10,000 deep", f"deep = {'[' * n}{']' * n}\n".encode()),
        (
            "TOML: an inline table nested 10,000 deep",
            ("deep = " + "{a = " * n + "1" + "}" * n + "\n").encode(),
        ),
        (
            "TOML: the seed, then a table name 10,000 keys deep",
            (head + "[" + ".".join(["a"] * n) + "]\nb = 1\n").encode(),
        ),
        (
            "TOML: the seed, then an array of arrays 10,000 deep at its end",
            (head + "zz = " + "[" * n + "1" + "]" * n + "\n").encode(),
        ),
    ]


PATH_KEYS = {"path", "fixture", "items", "memories", "conditions_file", "file", "errata"}
"""Fields whose value names a file: the odd-path cases replace these."""


def odd_paths(fifo: Path) -> list[tuple[str, str]]:
    """Path values no loader may trip over; ``fifo`` is an existing FIFO to point at."""
    return [
        ("a NUL byte", "data\u0000.json"),
        ("a NUL byte after ..", "../data\u0000.json"),
        ("a name of 300 bytes", "x" * 300 + ".json"),
        ("a path of 4,000 bytes", "a/" * 2000 + "x.json"),
        ("a line break", "data\n.json"),
        ("a FIFO", str(fifo)),
        ("a directory", "."),
        ("empty", ""),
    ]


def odd_path_cases(seed: bytes, kind: str, fifo: Path) -> list[tuple[str, bytes]]:
    """The seed with each field in :data:`PATH_KEYS` set to each of :func:`odd_paths`."""
    doc = _parse(seed, kind)
    fields = [p for p in _paths(doc) if p and p[-1] in PATH_KEYS]
    return [
        (f"{'.'.join(map(str, f))} is {label}", _dump(_set(doc, f, value), kind))
        for f in fields
        for label, value in odd_paths(fifo)
    ]


class Special(str):
    """A case whose file is not bytes but a kind of file: :func:`make` creates it."""


FIFO, DIRECTORY, LOOP, DANGLING = (
    Special("fifo"),
    Special("directory"),
    Special("loop"),
    Special("dangling"),
)


def special_cases() -> list[tuple[str, Special]]:
    """The file is a FIFO, a directory, a symlink loop, a link to nothing."""
    return [
        ("the file is a FIFO (a named pipe)", FIFO),
        ("the file is a directory", DIRECTORY),
        ("the file is a symlink loop", LOOP),
        ("the file is a link to nothing", DANGLING),
    ]


def make(path: Path, data: bytes | Special) -> None:
    """Write ``data`` at ``path``, or make the special file it names."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.is_symlink() or path.exists():
        path.unlink()
    if data is FIFO:
        os.mkfifo(path)
    elif data is DIRECTORY:
        path.mkdir()
    elif data is LOOP:
        path.symlink_to(path.name)
    elif data is DANGLING:
        path.symlink_to(path.with_name("nothing-here"))
    else:
        path.write_bytes(data)


def unblock(fifos: list[Path]) -> None:
    """Give a reader blocked on any of ``fifos`` its end of file (a hung case then ends)."""
    for f in fifos:
        try:
            os.close(os.open(f, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:  # no reader waiting (ENXIO), or gone
            pass


class Tally:
    """Cases tried, held and failed, by format: printed at the end of the test run."""

    def __init__(self) -> None:
        self.counts: dict[str, list[int]] = {}

    def record(self, name: str, failure: str | None) -> None:
        """Count one case of ``name``; ``failure`` is None when it held."""
        tried_failed = self.counts.setdefault(name, [0, 0])
        tried_failed[0] += 1
        tried_failed[1] += failure is not None

    def lines(self) -> list[str]:
        """One line a format and a total; empty when no case ran."""
        if not self.counts:
            return []
        out = [
            f"  {name}: {tried} tried, {tried - failed} held, {failed} failed"
            for name, (tried, failed) in sorted(self.counts.items())
        ]
        tried = sum(t for t, _ in self.counts.values())
        failed = sum(f for _, f in self.counts.values())
        return [f"fuzz: {tried} cases tried, {tried - failed} held, {failed} failed", *out]


TALLY = Tally()
