"""Stream the elements of a huge top-level JSON array in constant memory.

LongMemEval's M file is a 2.7 GB JSON list of 500 questions. :func:`iter_json_array` reads
it in chunks and decodes one element at a time with the C decoder
(:meth:`json.JSONDecoder.raw_decode`), keeping only the element in hand and one chunk, so
memory is bounded by the largest element, never by the file. Each element comes with its
byte offset and length, so :func:`read_element` can fetch it again later by seeking.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mnemometer._jsonl import DECODER, lone_surrogate, open_regular, surrogate_message
from mnemometer.errors import DatasetError

CHUNK = 1 << 20
"""Bytes read at a time."""

_WS = " \t\r\n"


class _Reader:
    """A UTF-8 text window over a binary file that knows the byte offset of its start."""

    def __init__(self, f: Any, path: Path) -> None:
        self.f = f
        self.path = path
        self.buf = ""
        self.pos = 0  # index into buf
        self.base = 0  # byte offset of buf[0]
        self.eof = False
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.lines = 1  # line number of buf[0]

    def more(self, size: int = CHUNK) -> bool:
        if self.eof:
            return False
        data = self.f.read(size)
        try:
            text = self.decoder.decode(data, final=not data)
        except UnicodeDecodeError as e:
            raise DatasetError(f"{self.path}: not UTF-8 text ({e.reason})") from None
        if not data:
            self.eof = True
        self.buf += text
        return bool(data) or bool(text)

    def drop(self) -> None:
        """Forget the consumed part of the window (advancing the byte offset)."""
        gone = self.buf[: self.pos]
        self.base += len(gone.encode("utf-8"))
        self.lines += gone.count("\n")
        self.buf = self.buf[self.pos :]
        self.pos = 0

    def skip_ws(self) -> str:
        """The next non-blank character ("" at the end of the file)."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in _WS:
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            self.drop()
            if not self.more():
                return ""

    def where(self, index: int) -> str:
        line = self.lines + self.buf.count("\n", 0, index)
        col = index - (self.buf.rfind("\n", 0, index) + 1) + 1
        return f"{self.path}:{line}:{col}"


def iter_json_array(path: str | Path, chunk: int = CHUNK) -> Iterator[tuple[int, int, Any]]:
    """``(byte offset, byte length, element)`` for every element of a top-level JSON array.

    Raises:
        DatasetError: the file is not a JSON array, or is malformed (naming line and
            column).
    """
    p = Path(path)
    f = open_regular(p, DatasetError, "dataset")
    try:
        r = _Reader(f, p)
        r.more(chunk)
        if r.buf.startswith("\ufeff"):
            r.pos = 1
        if r.skip_ws() != "[":
            raise DatasetError(f"{r.where(r.pos)}: expected a JSON list ('[')")
        r.pos += 1
        first = True
        while True:
            c = r.skip_ws()
            if c == "]":
                return
            if not first:
                if c != ",":
                    raise DatasetError(f"{r.where(r.pos)}: malformed JSON: expected ',' or ']'")
                r.pos += 1
                c = r.skip_ws()
            if c == "":
                raise DatasetError(f"{r.where(r.pos)}: malformed JSON: the list never ends")
            r.drop()
            grow = chunk
            while True:
                try:
                    obj, end = DECODER.raw_decode(r.buf, r.pos)
                except json.JSONDecodeError as e:
                    # Cut short by the window, or really malformed? An error well inside
                    # the window is real (an unterminated string can only be the window's
                    # edge); otherwise read more and retry, doubling the read so a big
                    # element costs a few passes, not one per chunk.
                    inside = e.pos < len(r.buf) - 64 and not e.msg.startswith("Unterminated")
                    if not inside and r.more(grow):
                        grow *= 2
                        continue
                    raise DatasetError(f"{r.where(e.pos)}: malformed JSON: {e.msg}") from None
                except RecursionError:
                    raise DatasetError(
                        f"{r.where(r.pos)}: malformed JSON: nested too deeply"
                    ) from None
                except ValueError as e:  # NaN, Infinity, a number too long to convert
                    raise DatasetError(f"{r.where(r.pos)}: malformed JSON: {e}") from None
                if end == len(r.buf) and not r.eof and r.more(chunk):
                    continue  # a number at the window's edge may go on
                break
            if (lone := lone_surrogate(r.buf, r.pos, end)) is not None:
                raise DatasetError(f"{r.where(lone[0])}: {surrogate_message(lone[1])}")
            length = len(r.buf[r.pos : end].encode("utf-8"))
            yield r.base, length, obj
            r.pos = end
            first = False
    finally:
        f.close()


def read_bytes(path: str | Path, offset: int, length: int) -> bytes:
    """``length`` bytes of ``path`` from ``offset`` (an element an index points at).

    Raises:
        DatasetError: the file cannot be read.
    """
    with open_regular(path, DatasetError, "dataset") as f:
        try:
            f.seek(offset)
            return f.read(length)
        except OSError as e:
            raise DatasetError(f"{path}: cannot read: {e.strerror}") from None


def read_element(path: str | Path, offset: int, length: int) -> Any:
    """The JSON element at ``offset`` (``length`` bytes) of ``path``.

    Raises:
        DatasetError: the bytes are not one JSON value (the file changed since it was
            indexed).
    """
    p = Path(path)
    data = read_bytes(p, offset, length)
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise DatasetError(
            f"{p}: bytes {offset}-{offset + length} are not one JSON value: the file changed "
            "since it was indexed"
        ) from None
