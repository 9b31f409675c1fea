"""Dataset readers: a format name, a sniff and a read, registered through entry points.

Every format (native JSON and JSONL, MemTest JSON, LoCoMo, LongMemEval, a plug-in's own)
is a :class:`Reader` registered in the ``mnemometer.readers`` entry-point group; built-ins
register there exactly as a plug-in does::

    [project.entry-points."mnemometer.readers"]
    my-format = "my_package.reader:READER"

:func:`~mnemometer.datasets.load_dataset` uses the reader it is told to, or else the first
one (in :attr:`Reader.order`) whose sniff accepts the file.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mnemometer._jsonl import decode, json_document, json_objects, open_regular, read_file
from mnemometer._registry import Registry
from mnemometer.datasets._models import Dataset
from mnemometer.errors import DatasetError, MnemometerError

HEAD_BYTES = 64 * 1024
"""How much of the start of a file a sniff sees."""


@dataclass(frozen=True)
class Reader:
    """One dataset format: how to recognise a file and how to read it.

    ``sniff`` must be cheap and must not raise: it sees the path and the first
    :data:`HEAD_BYTES` bytes. ``read`` returns the dataset; it raises
    :class:`~mnemometer.errors.DatasetError` naming the file and the field for bad input,
    and writes everything it changed on the way in to ``info.notes``. Consistency checks
    and the content hash are :func:`~mnemometer.datasets.load_dataset`'s job.
    """

    name: str
    """Format name, lowercase-kebab (``locomo``); ``load_dataset(path, format=name)``."""
    description: str
    """One line for ``mnemometer list readers``."""
    sniff: Callable[[Path, bytes], bool]
    """``sniff(path, head)``: does this file look like this format?"""
    read: Callable[[Path], Dataset]
    """``read(path)``: the dataset in the file."""
    order: int = 100
    """Sniffing tries readers in ascending order, then by name; built-ins use 10-30."""
    checks: bool = False
    """``read`` already runs :func:`~mnemometer.datasets.check_dataset` (so its messages can
    name lines); ``load_dataset`` then does not check a second time."""


READERS = Registry("mnemometer.readers", "dataset format")
"""Format name → :class:`Reader`, from the ``mnemometer.readers`` entry-point group;
:func:`register_reader` adds one in-process."""


def register_reader(reader: Reader) -> None:
    """Register a reader in-process (tests, notebooks)."""
    READERS.register(reader.name, reader)  # type: ignore[arg-type]


def get_reader(name: str) -> Reader:
    """The reader registered as ``name``.

    Raises:
        DatasetError: no such format (with "did you mean" and the known ones), a broken
            plug-in, or a registration that is not a :class:`Reader`.
    """
    try:
        found = READERS.load(name)
    except MnemometerError as e:  # unknown name (with "did you mean") or a broken plug-in
        raise DatasetError(str(e)) from None
    if not isinstance(found, Reader):
        raise DatasetError(f"dataset format {name!r} is not a Reader: {found!r}")
    return found


def readers() -> list[Reader]:
    """Every loadable reader in sniffing order; a broken plug-in is a warning, skipped."""
    out: list[Reader] = []
    for name in READERS.names():
        try:
            out.append(get_reader(name))
        except DatasetError as e:
            warnings.warn(str(e), stacklevel=2)
    return sorted(out, key=lambda r: (r.order, r.name))


def detect_reader(path: Path) -> Reader | None:
    """The first reader whose sniff accepts ``path``, or None."""
    head = read_head(path)
    for r in readers():
        try:
            if r.sniff(path, head):
                return r
        except Exception as e:  # a sniff must not take the others down with it
            warnings.warn(f"dataset format {r.name!r}: sniff failed: {e}", stacklevel=2)
    return None


# --- helpers for readers -------------------------------------------------------------


def read_head(path: Path, size: int = HEAD_BYTES) -> bytes:
    """The first ``size`` bytes of ``path``.

    Raises:
        DatasetError: the file cannot be read.
    """
    with open_regular(path, DatasetError, "dataset") as f:
        try:
            return f.read(size)
        except OSError as e:
            raise DatasetError(f"{path}: cannot read: {e.strerror}") from None


_KEY = re.compile(rb'"([A-Za-z_][A-Za-z0-9_-]*)"\s*:')


def head_keys(head: bytes) -> set[str]:
    """Every ``"key":`` that appears in a JSON head, at any depth."""
    return {m.decode() for m in _KEY.findall(head)}


def head_starts_with(head: bytes, char: str) -> bool:
    """True when the first non-blank character (after a byte-order mark) is ``char``."""
    return head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1] == char.encode()


def read_text(path: Path) -> str:
    """The file as UTF-8 text.

    Raises:
        DatasetError: missing, a directory, unreadable or not UTF-8 (naming the byte).
    """
    return decode(read_file(path, DatasetError, "dataset"), path, DatasetError)


def read_json(path: Path) -> Any:
    """The parsed JSON document.

    Raises:
        DatasetError: unreadable, not UTF-8, or malformed (naming line and column).
    """
    return json_document(read_text(path), path, DatasetError)


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line of a JSONL file.

    Raises:
        DatasetError: unreadable, malformed (naming line and column), or a non-object line.
    """
    yield from json_objects(read_text(path), path, DatasetError, what="a record")


def validate_record(model: type, raw: Any, path: Path, line: int | None = None) -> Any:
    """Validate ``raw`` as ``model``; errors name the file (and line) and the field path.

    Raises:
        DatasetError: ``path[:line]: field.path: message``.
    """
    try:
        return model.model_validate(raw)
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "<root>"
        where = f"{path}:{line}" if line else str(path)
        more = f" (and {len(e.errors()) - 1} more)" if len(e.errors()) > 1 else ""
        raise DatasetError(f"{where}: {loc}: {err['msg']}{more}") from None
