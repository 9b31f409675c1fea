"""Typed reading of run directories, with migration of older schema versions."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mnemometer._gc import paused
from mnemometer._jsonl import json_document, open_regular, read_file
from mnemometer.errors import RunLogError
from mnemometer.log._migrate import HEADER_STEPS, ITEM_STEPS, ITEMS_UNCHANGED_SINCE
from mnemometer.log._schema import (
    HEADER_FILE,
    ITEMS_FILE,
    LOG_SCHEMA_VERSION,
    SUMMARY_FILE,
    ItemResult,
    RunHeader,
    Summary,
)


@dataclass(frozen=True)
class RunLog:
    """A run's header, its item results in plan order, and its stored summary (if any)."""

    path: Path
    header: RunHeader
    items: list[ItemResult]
    summary: Summary | None = None

    def to_pandas(self) -> Any:
        """One row per item result (needs ``pip install 'mnemometer[analysis]'``)."""
        from mnemometer.log._frame import items_frame

        h = self.header
        return items_frame(
            self.items,
            run_id=h.run_id,
            suite=h.suite,
            system=h.system.name,
            condition=h.system.condition or h.system.name,
            repeat=h.repeat,
        )


def _raw_header(run_dir: str | Path) -> dict[str, Any]:
    path = Path(run_dir) / HEADER_FILE
    if not path.exists():
        raise RunLogError(f"{run_dir}: not a run directory (no {HEADER_FILE})")
    raw = json_document(read_file(path, RunLogError, "run header"), path, RunLogError)
    version = raw.get("schema_version") if isinstance(raw, dict) else None
    if not isinstance(version, int) or version < 1:
        raise RunLogError(f"{path}: no integer schema_version")
    if version > LOG_SCHEMA_VERSION:
        raise RunLogError(
            f"{path}: run-log schema {version} is newer than this mnemometer reads "
            f"({LOG_SCHEMA_VERSION}); upgrade mnemometer"
        )
    return raw


def _migrate_header(raw: dict[str, Any]) -> dict[str, Any]:
    version = raw["schema_version"]
    while version < LOG_SCHEMA_VERSION:
        raw = HEADER_STEPS[version](raw)
        version += 1
    return raw


def read_header(run_dir: str | Path) -> RunHeader:
    """Read and migrate a run's header.

    Raises:
        RunLogError: missing, corrupt or from a newer mnemometer.
    """
    raw = _migrate_header(_raw_header(run_dir))
    try:
        return RunHeader.model_validate(raw)
    except ValidationError as e:
        err = e.errors()[0]
        where = Path(run_dir) / HEADER_FILE
        raise RunLogError(f"{where}: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None


def read_items(run_dir: str | Path) -> list[ItemResult]:
    """Read item results, the last complete attempt per item winning, in plan order.

    A multi-step item logs one result per step (``step``, with ``steps`` on each); a
    resumed item logs again. An item's latest attempt replaces every earlier one (a retried
    failure leaves no stale error behind), and an attempt with fewer step lines than its
    ``steps`` (cut short by a crash) is ignored: it is redone on resume.

    A final line cut short by a crash is ignored (it is redone on resume); a corrupt line
    anywhere else is an error.
    """
    path = Path(run_dir) / ITEMS_FILE
    if not path.exists():
        return []
    raw_header = _raw_header(run_dir)
    version = raw_header["schema_version"]
    with paused():  # tens of thousands of small models, none in a cycle
        return _read_items(path, version, raw_header)


def _read_items(path: Path, version: int, raw_header: dict[str, Any]) -> list[ItemResult]:
    lines = read_file(path, RunLogError, "run log").split(b"\n")
    current: dict[str, list[ItemResult]] = {}  # the attempt being read, per item
    steps: dict[str, set[str | None]] = {}  # the steps that attempt holds
    complete: dict[str, list[ItemResult]] = {}  # the last complete attempt, per item
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            if version >= ITEMS_UNCHANGED_SINCE:
                item = ItemResult.model_validate_json(line)
            else:
                item = ItemResult.model_validate(_migrate_item(line, version, raw_header))
        except (ValidationError, ValueError) as e:
            if n == len(lines):  # an unterminated last line: a write cut by a kill
                break
            msg = e.errors()[0]["msg"] if isinstance(e, ValidationError) else str(e)
            raise RunLogError(f"{path}:{n}: corrupt item result: {msg}") from None
        attempt = current.get(item.item_id)
        if (
            attempt is None
            or item.step is None
            or attempt[-1].step is None
            or item.step in steps[item.item_id]
        ):
            attempt = current[item.item_id] = []  # a new attempt at this item
            steps[item.item_id] = set()
        attempt.append(item)
        steps[item.item_id].add(item.step)
        if item.step is None or item.steps is None or len(attempt) >= item.steps:
            complete[item.item_id] = list(attempt)
    out = [r for attempt in complete.values() for r in attempt]
    return sorted(out, key=lambda r: r.index)


def _migrate_item(line: bytes, version: int, raw_header: dict[str, Any]) -> dict[str, Any]:
    raw = json.loads(line)
    header = raw_header
    while version < LOG_SCHEMA_VERSION:
        raw = ITEM_STEPS[version](raw, header)
        header = HEADER_STEPS[version](header)
        version += 1
    return raw


def count_results(run_dir: str | Path) -> int:
    """How many result lines ``items.jsonl`` holds, without parsing them.

    A result redone on resume counts twice here and once in :func:`read_items`; a line cut
    short by a crash counts too. So when this equals a summary's ``results`` (the distinct
    results it was computed from), the log has not grown since: an append-only log that
    grew has more lines than distinct results before it. Any other count means "read the
    items to know".
    """
    path = Path(run_dir) / ITEMS_FILE
    n, last = 0, b"\n"
    if not path.exists():
        return 0
    with open_regular(path, RunLogError, "run log") as f:
        while chunk := f.read(1 << 22):
            n += chunk.count(b"\n")
            last = chunk[-1:]
    return n + (last != b"\n")


def items_digest(run_dir: str | Path) -> str | None:
    """SHA-256 of ``items.jsonl`` (``None`` when there is none): what a summary records."""
    path = Path(run_dir) / ITEMS_FILE
    if not path.exists():
        return None
    with open_regular(path, RunLogError, "run log") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def summary_is_current(run_dir: str | Path, summary: Summary) -> bool:
    """Whether ``summary`` still describes the run's log, so its items need no reading.

    A summary that recorded the log's digest is current while the log is byte for byte
    the same: a corrupt line anywhere (or any edit) sends the reader to the items, which
    name it. An older summary is trusted while the line count matches (cheaper, blind to
    a line changed in place).
    """
    if summary.items_sha256 is not None:
        return summary.items_sha256 == items_digest(run_dir)
    return summary.results == count_results(run_dir)


def read_summary(run_dir: str | Path) -> Summary | None:
    """The stored summary, or ``None`` when there is none (unfinished or older runs).

    Raises:
        RunLogError: the file is corrupt, or belongs to another run.
    """
    path = Path(run_dir) / SUMMARY_FILE
    if not path.exists():
        return None
    try:
        summary = Summary.model_validate_json(read_file(path, RunLogError, "run summary"))
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(map(str, err["loc"]))
        raise RunLogError(f"{path}: {loc + ': ' if loc else ''}{err['msg']}") from None
    run_id = read_header(run_dir).run_id
    if summary.run_id and summary.run_id != run_id:
        raise RunLogError(f"{path}: summarises run {summary.run_id}, not {run_id}")
    return summary


def upgrade(run_dir: str | Path) -> bool:
    """Rewrite an older run directory in the current schema (before it is resumed).

    Item lines are migrated and replaced atomically first, then the header; a crash in
    between leaves items that migrate again to the same values. Returns whether anything
    changed.
    """
    import os

    raw = _raw_header(run_dir)
    if raw["schema_version"] == LOG_SCHEMA_VERSION:
        return False
    items = Path(run_dir) / ITEMS_FILE
    if items.exists():
        lines = [r.model_dump_json(exclude_defaults=True) for r in read_items(run_dir)]
        tmp = items.with_name(ITEMS_FILE + ".tmp")
        tmp.write_text("".join(line + "\n" for line in lines), "utf-8")
        os.replace(tmp, items)
    header = read_header(run_dir)
    tmp = Path(run_dir) / (HEADER_FILE + ".tmp")
    tmp.write_text(header.model_dump_json(indent=1) + "\n", "utf-8")
    os.replace(tmp, Path(run_dir) / HEADER_FILE)
    return True


def read_log(run_dir: str | Path) -> RunLog:
    """Read a whole run directory."""
    return RunLog(Path(run_dir), read_header(run_dir), read_items(run_dir), read_summary(run_dir))
