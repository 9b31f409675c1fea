"""What leaves the generator: lines back in id order, and a record's byte-exact JSON.

Memories are generated in an order with structure and written in id order (a seeded
permutation, so ids carry no label); :class:`IdOrder` does the reordering through temporary
files so a million memories never sit in memory at once.
"""

from __future__ import annotations

import json
import tempfile
from array import array
from collections.abc import Iterator
from typing import Any


class IdOrder:
    """Lines put in any order, read back in id order, through temporary files.

    Ids are cut into at most 256 contiguous ranges of at least 4,096; each range has a
    temporary file that its lines are appended to (in batches), and the slot of each line
    in its range is kept. Reading loads one range at a time and puts it in order, so memory
    holds one range, not the dataset (a million memories are about 800 MB of JSON). A
    dataset that fits in one range is kept in memory.
    """

    min_span = 1 << 12
    """Smallest id range per temporary file (a test lowers it to cover many files)."""
    batch = 128
    """Lines held per range before they are appended to its file."""

    def __init__(self, n: int, tmpdir: str | None) -> None:
        self.span = max(self.min_span, -(-n // 256))
        self.n = n
        self.tmpdir = tmpdir
        ranges = -(-n // self.span)
        self.files: list[Any] = [None] * ranges
        self.pending: list[list[str]] = [[] for _ in range(ranges)]
        self.slots: list[array[int]] = [array("i") for _ in range(ranges)]
        self.count = 0

    def __enter__(self) -> IdOrder:
        return self

    def __exit__(self, *exc: object) -> None:
        for f in self.files:
            if f is not None:
                f.close()

    def put(self, j: int, line: str) -> None:
        """Add the line of the memory with id number ``j`` (0-based)."""
        b, slot = divmod(j, self.span)
        self.slots[b].append(slot)
        pending = self.pending[b]
        pending.append(line)
        if len(pending) >= self.batch and len(self.files) > 1:
            self._flush(b)  # one range (up to min_span ids) stays in memory
        self.count += 1

    def _flush(self, b: int) -> None:
        if not self.pending[b]:
            return
        f = self.files[b]
        if f is None:
            f = self.files[b] = tempfile.TemporaryFile(
                "w+", encoding="utf-8", newline="\n", dir=self.tmpdir, prefix="mnemometer-"
            )
        f.write("\n".join(self.pending[b]))
        f.write("\n")
        self.pending[b] = []

    def lines(self) -> Iterator[str]:
        """Every line put, in id order (each id must have been put exactly once)."""
        if self.count != self.n:
            raise RuntimeError(f"{self.count} lines for {self.n} ids")
        for b, f in enumerate(self.files):
            if f is None:
                got = self.pending[b]
            else:
                self._flush(b)
                f.seek(0)
                got = f.read().split("\n")
                got.pop()  # after the last newline
                f.close()
                self.files[b] = None
            out: list[str] = [""] * len(got)
            for slot, line in zip(self.slots[b], got, strict=True):
                out[slot] = line
            if "" in out:
                raise RuntimeError(f"id range {b}: an id was put twice, another never")
            self.pending[b] = []
            self.slots[b] = array("i")
            yield from out


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_STR = json.encoder.encode_basestring  # the C string escaper behind ensure_ascii=False


def dumps(rec: dict[str, Any]) -> str:
    """Compact JSON for one record (UTF-8 text, no spaces: stable bytes).

    Memory records are assembled by hand (a third faster than encoding the nested dict);
    the bytes are exactly what ``json.dumps(rec, ensure_ascii=False, separators=(",", ":"))``
    gives, which a test checks.
    """
    if "versions" not in rec:
        return _ENCODER.encode(rec)
    v = rec["versions"]
    return (
        f'{{"id":"{rec["id"]}","text":{_STR(rec["text"])},"versions":['
        + ",".join(f'{{"style":"{x["style"]}","text":{_STR(x["text"])}}}' for x in v)
        + f'],"timestamp":"{rec["timestamp"]}","metadata":{_ENCODER.encode(rec["metadata"])}}}'
    )
