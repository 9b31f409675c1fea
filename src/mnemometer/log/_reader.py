"""Typed reading of run directories, with migration of older schema versions."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mnemometer.errors import RunLogError
from mnemometer.log._schema import (
    HEADER_FILE,
    ITEMS_FILE,
    LOG_SCHEMA_VERSION,
    ItemResult,
    RunHeader,
)


@dataclass(frozen=True)
class RunLog:
    """A run's header and its item results in plan order."""

    path: Path
    header: RunHeader
    items: list[ItemResult]


def read_header(run_dir: str | Path) -> RunHeader:
    """Read and migrate a run's header.

    Raises:
        RunLogError: missing, corrupt or from a newer mnemometer.
    """
    path = Path(run_dir) / HEADER_FILE
    if not path.exists():
        raise RunLogError(f"{run_dir}: not a run directory (no {HEADER_FILE})")
    try:
        raw = json.loads(path.read_text("utf-8"))
    except json.JSONDecodeError as e:
        raise RunLogError(f"{path}:{e.lineno}:{e.colno}: malformed JSON: {e.msg}") from None
    version = raw.get("schema_version") if isinstance(raw, dict) else None
    if not isinstance(version, int):
        raise RunLogError(f"{path}: no integer schema_version")
    if version > LOG_SCHEMA_VERSION:
        raise RunLogError(
            f"{path}: run-log schema {version} is newer than this mnemometer reads "
            f"({LOG_SCHEMA_VERSION}); upgrade mnemometer"
        )
    raw = _migrate(raw)
    try:
        return RunHeader.model_validate(raw)
    except ValidationError as e:
        err = e.errors()[0]
        raise RunLogError(f"{path}: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None


def read_items(run_dir: str | Path) -> list[ItemResult]:
    """Read item results, last result per item id (and step) winning, in plan order.

    An item may log sub-results (a build sequence's steps, ``extra.step``) next to itself.

    A final line cut short by a crash is ignored (it is redone on resume); a corrupt line
    anywhere else is an error.
    """
    path = Path(run_dir) / ITEMS_FILE
    if not path.exists():
        return []
    lines = path.read_bytes().split(b"\n")
    by_id: dict[tuple[str, str], ItemResult] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = ItemResult.model_validate_json(line)
        except ValidationError as e:
            if n == len(lines):  # an unterminated last line: a write cut by a kill
                break
            raise RunLogError(f"{path}:{n}: corrupt item result: {e.errors()[0]['msg']}") from None
        by_id[(item.item_id, str(item.extra.get("step", "")))] = item
    return sorted(by_id.values(), key=lambda r: r.index)


def read_log(run_dir: str | Path) -> RunLog:
    """Read a whole run directory."""
    return RunLog(Path(run_dir), read_header(run_dir), read_items(run_dir))


def _migrate(raw: dict[str, Any]) -> dict[str, Any]:
    # Version 1 is the first; future versions add steps here, keyed on schema_version.
    return raw
