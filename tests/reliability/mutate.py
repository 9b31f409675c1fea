"""A seeded mutator for input files: the same seed always yields the same cases.

Each case is ``(label, bytes)``. Byte-level cases work on any file (truncation, a flipped
byte, invalid UTF-8, a byte-order mark, CRLF line ends, an empty file, a very long line);
structural cases parse the seed (JSON, JSON lines or TOML), change one value (a missing
key, a wrong type, NaN, a huge number, deep nesting) and write it back.
"""

from __future__ import annotations

import copy
import json
import random
import tomllib
from collections.abc import Iterator
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
