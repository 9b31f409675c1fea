"""One reader for JSON files, with one error format.

Line-oriented files (datasets, scenarios, suite items, seeds) and whole documents (run
headers, experiment plans, config files).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


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
        try:
            obj = json.loads(s)
        except json.JSONDecodeError as e:
            raise error(f"{path}:{n}:{e.colno}: malformed JSON: {e.msg}") from None
        if not isinstance(obj, dict):
            raise error(f"{path}:{n}: {what} must be a JSON object")
        yield n, obj


def json_document(text: str | bytes, path: str | Path, error: type[Exception]) -> Any:
    """The parsed JSON document ``text`` of ``path``.

    Raises:
        error: malformed JSON, naming the place as ``path:line:column``.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise error(f"{path}:{e.lineno}:{e.colno}: malformed JSON: {e.msg}") from None
