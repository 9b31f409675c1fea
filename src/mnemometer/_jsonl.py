"""One reader for JSON files, with one error format.

Line-oriented files (datasets, scenarios, suite items, seeds) and whole documents (run
headers, experiment plans, config files, errata). Input is parsed strictly: ``NaN`` and ``Infinity`` (which Python's ``json`` accepts but JSON
does not), nesting deeper than Python can recurse and numbers too long to convert are all
refused with the file and line, never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class _Refused(ValueError):
    """A JSON constant that is not JSON (``NaN``, ``Infinity``)."""


def _constant(name: str) -> Any:
    raise _Refused(f"{name} is not valid JSON (write a number or null)")


DECODER = json.JSONDecoder(parse_constant=_constant)
"""A decoder that refuses ``NaN`` and ``Infinity`` (for ``raw_decode`` over a stream)."""


def decode(raw: bytes, path: str | Path, error: type[Exception]) -> str:
    """``raw`` as UTF-8 text (a leading byte-order mark dropped).

    Raises:
        error: not UTF-8, naming the line and the byte.
    """
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise error(f"{path}:{line}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def read_file(
    path: str | Path, error: type[Exception], what: str, *, missing: str | None = None
) -> bytes:
    """The bytes of the file ``path`` (:func:`decode` makes them text).

    Args:
        path: the file.
        error: the exception type to raise (the caller's own error family).
        what: what the file is, for messages (``suite manifest``, ``items file``).
        missing: the message for a file that does not exist (default ``no such <what>``).

    Raises:
        error: one line naming the file: missing, a directory, or unreadable.
    """
    p = Path(path)
    try:
        return p.read_bytes()
    except FileNotFoundError:
        raise error(f"{p}: {missing or 'no such ' + what}") from None
    except IsADirectoryError:
        article = "an" if what[:1] in ("a", "e", "i", "o", "u") else "a"
        raise error(f"{p}: is a directory, expected {article} {what}") from None
    except OSError as e:
        raise error(f"{p}: cannot read the {what}: {e.strerror}") from None


def json_document(
    text: str | bytes, path: str | Path, error: type[Exception], line: int | None = None
) -> Any:
    """The parsed JSON document ``text`` of ``path``, parsed strictly.

    Args:
        text: the document (bytes are decoded as UTF-8, a byte-order mark dropped).
        path: the file, for messages.
        error: the exception type to raise (the caller's own error family).
        line: the line ``text`` is on, when it is one line of a file.

    Raises:
        error: ``path:line:column: malformed JSON: ...`` for anything that is not JSON.
    """
    if isinstance(text, bytes):
        text = decode(text, path, error)
    try:
        return DECODER.decode(text)
    except json.JSONDecodeError as e:
        at = f"{line}:{e.colno}" if line is not None else f"{e.lineno}:{e.colno}"
        raise error(f"{path}:{at}: malformed JSON: {e.msg}") from None
    except RecursionError:
        at = f":{line}" if line is not None else ""
        raise error(f"{path}{at}: malformed JSON: nested too deeply") from None
    except ValueError as e:  # NaN/Infinity, or an integer longer than Python converts
        at = f":{line}" if line is not None else ""
        raise error(f"{path}{at}: malformed JSON: {str(e).split(';')[0]}") from None


def json_objects(
    text: str,
    path: str | Path,
    error: type[Exception],
    *,
    comments: bool = False,
    what: str = "a line",
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for every non-blank line of ``text``.

    Errors name the place as ``path:line:column`` (malformed JSON) or ``path:line``.

    Args:
        text: the file's content.
        path: the file, for messages.
        error: the exception type to raise (the caller's own error family).
        comments: skip lines starting with ``#``.
        what: how to name one record in the "must be a JSON object" message.
    """
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or (comments and s.startswith("#")):
            continue
        obj = json_document(s, path, error, line=n)
        if not isinstance(obj, dict):
            raise error(f"{path}:{n}: {what} must be a JSON object")
        yield n, obj
