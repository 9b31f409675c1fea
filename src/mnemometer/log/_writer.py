"""Durable writing of run directories."""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

from pydantic_core import to_json

from mnemometer import _env
from mnemometer.log._reader import items_digest
from mnemometer.log._schema import (
    HEADER_FILE,
    ITEMS_FILE,
    SUMMARY_FILE,
    ItemResult,
    RunHeader,
    Summary,
)


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` so a crash leaves the old file or the new one, never half of one.

    Secrets (the API keys known here, anything shaped like a key) are scrubbed first: they
    never reach a run directory.
    """
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(_env.scrub(text), "utf-8")
    os.replace(tmp, path)


def compact_items(run_dir: Path, items: list[ItemResult]) -> bool:
    """Rewrite ``items.jsonl`` as exactly ``items`` when it holds more lines than they are.

    ``items`` are what the reader kept (the latest complete attempt of each item): a
    retried failure's old lines go, so the file says what the run's numbers say. Written
    beside the log and moved over it: a crash leaves the old log or the new one.
    Returns whether the file was rewritten.
    """
    path = run_dir / ITEMS_FILE
    if not path.exists():
        return False
    lines = sum(1 for line in path.read_bytes().split(b"\n") if line.strip())
    if lines <= len(items):
        return False
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        for item in items:
            f.write(_line(item) + b"\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return True


def write_header(run_dir: Path, header: RunHeader) -> None:
    """Write the header atomically."""
    atomic_write(run_dir / HEADER_FILE, header.model_dump_json(indent=1) + "\n")


def write_summary(run_dir: Path, summary: Summary) -> None:
    """Write ``summary.json`` atomically, with the digest of the log it summarises.

    ``summary.items_sha256`` is set (on the caller's object too: what is returned as the
    run's summary is what the file holds).
    """
    summary.items_sha256 = items_digest(run_dir)
    atomic_write(run_dir / SUMMARY_FILE, summary.model_dump_json(indent=1) + "\n")


class ItemWriter:
    """Appends item results, one line each, handed to the OS as soon as they finish.

    Every line reaches the kernel before the next item is reported, so a killed process
    (even SIGKILL) loses nothing it reported; ``fsync=True`` also survives power loss, at
    the cost of a disk flush per item.
    """

    def __init__(self, run_dir: Path, fsync: bool = False) -> None:
        path = run_dir / ITEMS_FILE
        _drop_partial_tail(path)
        self._f: IO[bytes] = open(path, "ab", buffering=0)
        self._fsync = fsync
        # An error message may quote a key (an SDK echoing its request), an answer may echo
        # one: every line is scrubbed of the keys known here and of anything key-shaped.
        self._secrets = [s.encode() for s in _env.secret_values()]

    def write(self, item: ItemResult | dict[str, Any]) -> None:
        """Append one result: a model, or plain data shaped like one (validated on read).

        Plain data skips building a model per item, the largest part of the harness's
        per-item cost; every line is validated when the log is read.
        """
        self.write_many([item])

    def write_many(self, items: list[ItemResult | dict[str, Any]]) -> None:
        """Append the results of one item (a multi-step item's steps) in one write."""
        data = b"".join(_line(item) + b"\n" for item in items)
        data = _env.scrub_bytes(data, self._secrets)
        view = memoryview(data)
        while view:  # an unbuffered write may be short; finish it
            n = self._f.write(view)
            view = view[n or 0 :]
        if self._fsync:
            os.fsync(self._f.fileno())

    def close(self) -> None:
        """Close the file (fsyncing it once)."""
        try:
            os.fsync(self._f.fileno())
        finally:
            self._f.close()


def _line(item: ItemResult | dict[str, Any]) -> bytes:
    if isinstance(item, dict):
        return to_json(item)
    return item.model_dump_json(exclude_defaults=True).encode()


def _drop_partial_tail(path: Path) -> None:
    """Cut a last line left unterminated by a crash, so appends start on a clean line."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(path, "r+b") as f:
            f.truncate(data.rfind(b"\n") + 1)
