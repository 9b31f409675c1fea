"""The LLM client's disk cache: one append-only file of replies keyed by the full request.

Every reply is one line of ``replies.jsonl`` in the cache directory,
``{"key": SHA256, "reply": {...}}``, appended with one unbuffered write as soon as the
reply arrives: a killed process (even SIGKILL) keeps every reply it received, and a resumed
run asks nothing twice. One line per reply costs a few microseconds where a file per reply
(write, rename, a directory entry) cost over a hundred. Memory holds only where each line
is (a large shared cache is indexed a chunk at a time and read back a line at a time).

Crash safety: a line cut by a crash is never read as a reply (it is not valid JSON, or does
not end in a newline); the first append after it starts on a fresh line, so the torn line
stays an ignored line of its own. Several clients and processes may share a directory:
each line goes in one ``O_APPEND`` write, and a miss reads what others appended since
(one ``fstat`` when nothing was). Directories written by earlier versions (a file per
reply, ``ab/ab12....json``) are still read.

What is kept: only replies the client accepted (a chat reply with a message, the JSON asked
for, one vector per text), each scrubbed of every secret :func:`mnemometer._env.scrub`
knows (the keys given to this process, anything shaped like a key, bearer tokens).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import threading
from pathlib import Path
from typing import Any

from mnemometer import _env

CACHE_FILE = "replies.jsonl"
"""The file of cached replies inside the cache directory."""

_KEY = re.compile(rb'\{"key": "([0-9a-f]{64})"')
_CHUNK = 1 << 24  # bytes read at a time when indexing the file


def request_key(base_url: str, path: str, body: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of the full request (never of the API key)."""
    canonical = json.dumps(
        {"url": base_url, "path": path, "body": body},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


class ReplyCache:
    """Replies by request key, in one append-only file under ``directory``; thread-safe.

    Only each reply's place in the file is held in memory; the file is opened (and its
    keys read) at the first lookup, not at construction.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._lock = threading.Lock()
        self._file: io.FileIO | None = None
        self._read_upto = 0  # bytes of the file indexed (whole lines only)
        self._torn = False  # the file ends in a cut line: the next append starts a new one
        self._where: dict[str, tuple[int, int]] = {}  # key -> (offset, length) of its line
        self._legacy = False  # the directory holds entries of the file-per-reply layout

    def get(self, key: str) -> dict[str, Any] | None:
        """The cached reply of ``key`` (a fresh object each time), or ``None``."""
        with self._lock:
            f = self._open()
            where = self._where.get(key)
            if where is None:
                self._read_new()  # another client or process may have asked it meanwhile
                where = self._where.get(key)
            line = _read_at(f, *where) if where is not None else None
        entry = _entry(line) if line is not None else None
        if entry is not None and entry[0] == key:
            return entry[1]
        return self._legacy_get(key) if self._legacy else None  # absent, or a torn line

    def put(self, key: str, reply: dict[str, Any]) -> None:
        """Append ``reply`` under ``key``, scrubbed of secrets: in the kernel's hands on return.

        The client puts only replies it accepted (:meth:`mnemometer.llm.LLMClient._post`).
        """
        # A server may echo the request's key (or another's): none reaches the file.
        text = _env.scrub(json.dumps({"key": key, "reply": reply}, ensure_ascii=False))
        line = text.encode() + b"\n"
        with self._lock:
            f = self._open()
            data = (b"\n" + line) if self._torn else line
            view = memoryview(data)
            while view:  # an unbuffered write may be short; finish it
                view = view[f.write(view) or 0 :]
            self._torn = False
            end = f.tell()  # appends land at the end, whatever was read last
            if end - len(data) == self._read_upto:  # nobody appended in between: known
                self._read_upto = end
            self._where[key] = (end - len(line), len(line))

    def close(self) -> None:
        """Close the file (a later call opens it again)."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
                self._read_upto = 0

    def _open(self) -> io.FileIO:
        if self._file is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            # Unbuffered, O_APPEND: each write is one system call at the end of the file.
            self._file = io.FileIO(self.directory / CACHE_FILE, "a+")
            self._legacy = any(p.is_dir() and len(p.name) == 2 for p in self.directory.iterdir())
            self._read_new()
        return self._file

    def _read_new(self) -> None:
        """Index the whole lines appended since the last read (by anyone), a chunk at a time.

        A line's key is read from its start (how :meth:`put` writes it); the line itself is
        checked when it is looked up.
        """
        f = self._file
        assert f is not None
        size = os.fstat(f.fileno()).st_size
        start, rest = self._read_upto, b""
        while start + len(rest) < size:
            f.seek(start + len(rest))
            data = rest + (f.read(min(_CHUNK, size - start - len(rest))) or b"")
            if len(data) == len(rest):
                break  # the file shrank under us: stop here
            whole = data.rfind(b"\n") + 1
            pos = 0
            while pos < whole:
                end = data.index(b"\n", pos) + 1
                m = _KEY.match(data, pos)
                if m is not None:
                    self._where[m.group(1).decode()] = (start + pos, end - pos)
                pos = end
            start, rest = start + whole, data[whole:]
        self._read_upto = start
        self._torn = bool(rest)

    def _legacy_get(self, key: str) -> dict[str, Any] | None:
        try:
            data = json.loads((self.directory / key[:2] / f"{key}.json").read_bytes())
        except (OSError, ValueError):
            return None  # absent, or a torn entry: ask again
        return data if isinstance(data, dict) else None


def _read_at(f: io.FileIO, offset: int, length: int) -> bytes:
    f.seek(offset)
    return f.read(length) or b""


def _entry(line: bytes) -> tuple[str, dict[str, Any]] | None:
    try:
        doc = json.loads(line)
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    key, reply = doc.get("key"), doc.get("reply")
    if not isinstance(key, str) or len(key) != 64 or not isinstance(reply, dict):
        return None
    return key, reply
