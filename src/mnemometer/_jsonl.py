r"""One reader for JSON files, with one error format.

Line-oriented files (datasets, scenarios, suite items, seeds) and whole documents (run
headers, experiment plans, config files, errata). Input is parsed strictly: ``NaN`` and
``Infinity`` (which Python's ``json`` accepts but JSON does not), nesting deeper than
Python can recurse, numbers too long to convert and strings holding a lone surrogate
(``"\ud800"``: valid JSON, but no Unicode text, so nothing could write or hash it) are all
refused with the file and line, never a traceback.

Every reader opens its file through :func:`open_regular`: a FIFO where a file is expected
would block the reader until a writer came (maybe never), and a device (``/dev/zero``)
never ends, so both are refused before they are opened.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


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


_KINDS = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


_CONTROL = {i: f"\\x{i:02x}" for i in (*range(32), 127)} | {
    0: "\\0",
    9: "\\t",
    10: "\\n",
    13: "\\r",
}


def shown(path: str | Path) -> str:
    r"""``path`` as a one-line message shows it: a NUL byte as ``\0``, a line break as ``\n``."""
    return str(path).translate(_CONTROL)


def open_regular(
    path: str | Path, error: type[Exception], what: str, *, missing: str | None = None
) -> IO[bytes]:
    """Open ``path`` for reading when it is a regular file; refuse anything else unopened.

    The type is read with ``stat`` before the file is opened, so a FIFO (which would block
    the reader until a writer comes, maybe never) or a device is never opened for reading;
    it is checked again on the open descriptor, in case the path changed in between.

    Args:
        path: the file (links are followed).
        error: the exception type to raise (the caller's own error family).
        what: what the file is, for messages (``suite manifest``, ``items file``).
        missing: the message for a file that does not exist (default ``no such <what>``).

    Raises:
        error: one line naming the file: missing, not a regular file, or unreadable.
    """
    p = Path(path)
    try:
        refuse = _not_regular(p, os.stat(p).st_mode, what)  # before any open: a FIFO blocks
        if refuse is None:
            fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            refuse = _not_regular(p, os.fstat(fd).st_mode, what)
            if refuse is not None:
                os.close(fd)
    except FileNotFoundError:
        raise error(f"{shown(p)}: {missing or 'no such ' + what}") from None
    except ValueError:  # a NUL byte: no file has that name
        raise error(f"{shown(p)}: a path with a NUL byte names no file") from None
    except OSError as e:
        raise error(f"{shown(p)}: cannot read the {what}: {e.strerror}") from None
    if refuse is not None:
        raise error(refuse)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def check_regular(
    path: str | Path, error: type[Exception], what: str, *, missing: str | None = None
) -> Path:
    """``path`` when it is a regular file, checked without reading it (:func:`open_regular`).

    Raises:
        error: missing, not a regular file, or a path no file can have.
    """
    with open_regular(path, error, what, missing=missing):
        return Path(path)


def _not_regular(p: Path, mode: int, what: str) -> str | None:
    """Why a file of ``mode`` is refused as the ``what`` (``None``: a regular file)."""
    if stat.S_ISREG(mode):
        return None
    article = "an" if what[:1] in ("a", "e", "i", "o", "u") else "a"
    if stat.S_ISDIR(mode):
        return f"{shown(p)}: is a directory, expected {article} {what}"
    kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
    return f"{shown(p)}: is {kind}, not a regular file (the {what} must be one)"


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
        error: one line naming the file: missing, not a regular file (a directory, a
            FIFO, a device), or unreadable.
    """
    with open_regular(path, error, what, missing=missing) as f:
        try:
            return f.read()
        except OSError as e:
            raise error(f"{path}: cannot read the {what}: {e.strerror}") from None


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
        doc = DECODER.decode(text)
    except json.JSONDecodeError as e:
        at = f"{line}:{e.colno}" if line is not None else f"{e.lineno}:{e.colno}"
        raise error(f"{path}:{at}: malformed JSON: {e.msg}") from None
    except RecursionError:
        at = f":{line}" if line is not None else ""
        raise error(f"{path}{at}: malformed JSON: nested too deeply") from None
    except ValueError as e:  # NaN/Infinity, or an integer longer than Python converts
        at = f":{line}" if line is not None else ""
        raise error(f"{path}{at}: malformed JSON: {str(e).split(';')[0]}") from None
    if (lone := lone_surrogate(text)) is not None:
        i, escape = lone
        row = line if line is not None else text.count("\n", 0, i) + 1
        col = i - text.rfind("\n", 0, i)
        raise error(f"{path}:{row}:{col}: {surrogate_message(escape)}")
    return doc


# A \\u escape of a surrogate (not itself escaped: an even run of backslashes before it),
# with the low half that may follow it. Decoded UTF-8 holds no surrogate, so an escape is
# the only way one reaches a parsed string; the decoder joins a high half followed by a low
# one into one character, and leaves any other surrogate alone in the string.
_SURROGATE_ESCAPE = re.compile(
    r"(?<!\\)(?:\\\\)*\\u([dD][89a-fA-F][0-9a-fA-F]{2})(\\u[dD][c-fC-F][0-9a-fA-F]{2})?"
)


def lone_surrogate(text: str, start: int = 0, end: int | None = None) -> tuple[int, str] | None:
    r"""Where valid JSON ``text[start:end]`` escapes a lone surrogate (``"\ud800"``), if it does.

    Such a string is valid JSON but no Unicode text: nothing could write it as UTF-8 or
    hash it. One C-speed scan; only surrogate escapes are looked at.

    Returns:
        ``(index of the escape, the escape)``, or ``None``.
    """
    stop = len(text) if end is None else end
    for m in _SURROGATE_ESCAPE.finditer(text, start, stop):
        high = int(m.group(1), 16) < 0xDC00
        if not (high and m.group(2)):
            return m.start(1) - 2, f"\\u{m.group(1).lower()}"
    return None


def surrogate_message(escape: str) -> str:
    """The refusal of a string holding the lone surrogate ``escape``."""
    return (
        f"malformed JSON: a string holds a lone surrogate {escape} (not Unicode text: write "
        "the character itself, or both halves of its pair)"
    )


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
