"""Loading and saving datasets: the reader registry, native JSON / JSONL, built-in names."""

from __future__ import annotations

import os
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mnemometer._gc import paused
from mnemometer._jsonl import read_file
from mnemometer.config import explain, list_adapter
from mnemometer.datasets._check import check_dataset
from mnemometer.datasets._models import Conversation, Dataset, DatasetInfo, Memory, Query
from mnemometer.datasets._readers import (
    Reader,
    detect_reader,
    get_reader,
    head_keys,
    head_starts_with,
    iter_jsonl,
    read_head,
    read_json,
    readers,
    validate_record,
)
from mnemometer.errors import DatasetError, did_you_mean

BUILTIN = {
    "demo-en": "demo_en.json",
    "demo-zh": "demo_zh.json",
}
"""Built-in datasets, written for this package (English and Chinese)."""


def builtin_datasets() -> list[str]:
    """Names of the datasets shipped inside the package."""
    return sorted(BUILTIN)


def load_dataset(path_or_name: str | Path, format: str | None = None) -> Dataset:
    """Load a dataset from a file (any registered format) or a built-in name.

    The reader is the one named by ``format``, or else the first whose sniff accepts the
    file (``mnemometer list readers`` shows them: native JSON and JSONL, MemTest JSON,
    LoCoMo, LongMemEval, and any plug-in's). The dataset is then checked for consistency
    (unique ids, nothing dangling); its content hash is computed when first read.

    Args:
        path_or_name: a dataset file or a built-in dataset name.
        format: a registered format name (``native-json``, ``locomo``, ...); None sniffs.

    Raises:
        DatasetError: the file is missing, in no known format, malformed or inconsistent;
            the message names the file and the line/column or the field path.
    """
    path = _resolve(path_or_name)
    if format is None and str(path_or_name) in BUILTIN:
        format = NATIVE_JSON.name
    reader = get_reader(format) if format is not None else detect_reader(path)
    if reader is None:
        raise _unrecognised(path)
    with paused():  # every record is a few objects, none in a cycle
        try:
            ds = reader.read(path)
        except ValidationError as e:  # a reader built a model from a value it refuses
            raise DatasetError(f"{path}: {explain(e)}") from None
        if not isinstance(ds, Dataset):
            raise DatasetError(
                f"{path}: dataset format {reader.name!r} returned {type(ds).__name__}, "
                "not a Dataset"
            )
        return (ds if reader.checks else check_dataset(ds, path)).with_lazy_hash()


def _unrecognised(path: Path) -> DatasetError:
    head = read_head(path)
    if path.suffix == ".json" or head_starts_with(head, "{") or head_starts_with(head, "["):
        read_json(path)  # a malformed JSON file gets its line and column
    known = ", ".join(r.name for r in readers())
    return DatasetError(
        f"{path}: not a dataset in any known format (known: {known}); if it is one of "
        "them, name it explicitly (format=NAME)"
    )


def save_dataset(dataset: Dataset, path: str | Path) -> Path:
    """Write a dataset as native JSON or JSONL (chosen by the file extension).

    The file is written beside ``path`` and renamed over it, so a process killed while
    saving leaves the previous file (or none), never half a dataset: ``build --merge`` and
    ``clean -o`` over an existing file cannot lose it.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    dataset.info.resolve_hash()  # a saved file records the hash, as it always has
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        if path.suffix == ".jsonl":
            write_jsonl(tmp, dataset.info, dataset.memories, dataset.queries, dataset.conversations)
        else:
            # A dataset without conversations is written exactly as before they existed.
            skip = None if dataset.conversations else {"conversations"}
            text = dataset.model_dump_json(indent=1, exclude_none=True, exclude=skip)
            tmp.write_text(text + "\n", "utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    _remove_stale_temps(path)
    return path


def _remove_stale_temps(path: Path) -> None:
    """Delete the temporary files of earlier saves to ``path`` whose process is gone."""
    for old in path.parent.glob(f".{path.name}.*.tmp"):
        pid = old.name[len(path.name) + 2 : -4]
        if pid.isdigit() and not _running(int(pid)):
            old.unlink(missing_ok=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # someone else's process, or no such call here
        return True
    return True


def write_jsonl(
    path: Path,
    info: DatasetInfo,
    memories: Iterable[Memory | str],
    queries: Iterable[Query | str],
    conversations: Iterable[Conversation | str] = (),
) -> None:
    """Stream a dataset to JSONL: an info line, then memories, conversations and queries.

    Records may be models or already-serialised JSON objects (``str``), so a generator can
    stream millions of records without building pydantic objects. A conversation is one
    line (its sessions and turns inside).
    """
    with open(path, "w", encoding="utf-8") as f:
        for kind, items in (
            ("info", [info.resolve_hash()]),
            ("memory", memories),
            ("conversation", conversations),
            ("query", queries),
        ):
            for item in items:
                body = _body(item)
                f.write(f'{{"kind":"{kind}",{body[1:]}\n')


def write_json_stream(
    path: Path,
    info: DatasetInfo,
    memories: Iterable[Memory | str],
    queries: Iterable[Query | str],
    conversations: Iterable[Conversation | str] | None = None,
) -> None:
    """Stream a dataset to native JSON, one record a line.

    Keys: ``info``, ``memories``, ``conversations`` (only when given), ``queries``.
    """
    sections: list[tuple[str, Iterable[Any]]] = [("memories", memories)]
    if conversations is not None:
        sections.append(("conversations", conversations))
    sections.append(("queries", queries))
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"info":' + _body(info.resolve_hash()))
        for key, items in sections:
            f.write(f',\n"{key}":[')
            sep = "\n"
            for item in items:
                f.write(sep + _body(item))
                sep = ",\n"
            f.write("\n]")
        f.write("}\n")


def _body(item: Any) -> str:
    return item if isinstance(item, str) else item.model_dump_json(exclude_none=True)


def dataset_json_schema() -> dict[str, Any]:
    """The JSON Schema of the native dataset format."""
    return Dataset.model_json_schema()


def _resolve(path_or_name: str | Path) -> Path:
    name = str(path_or_name)
    if name in BUILTIN:
        return Path(str(resources.files("mnemometer.datasets") / "builtin" / BUILTIN[name]))
    path = Path(name)
    if not path.exists():
        hint = did_you_mean(name, list(BUILTIN)) if "/" not in name else ""
        raise DatasetError(
            f"{name}: no such file or built-in dataset{hint}; "
            f"built-ins: {', '.join(builtin_datasets())}"
        )
    if path.is_dir():
        raise DatasetError(f"{name}: is a directory, expected a dataset file")
    return path


# --- the native formats ------------------------------------------------------------


def _sniff_native_json(path: Path, head: bytes) -> bool:
    # A JSONL file also starts with "{" and may hold an "info" key deeper down.
    return path.suffix != ".jsonl" and head_starts_with(head, "{") and "info" in head_keys(head)


def _read_native_json(path: Path) -> Dataset:
    raw = read_json(path)
    if not isinstance(raw, dict) or "info" not in raw:
        raise DatasetError(
            f"{path}: not a dataset: expected a JSON object with 'info' and 'memories' "
            "and/or 'conversations' (native)"
        )
    return validate_record(Dataset, raw, path)


def _sniff_native_jsonl(path: Path, head: bytes) -> bool:
    if path.suffix == ".jsonl":
        return True
    first = head.removeprefix(b"\xef\xbb\xbf").lstrip().split(b"\n", 1)[0]
    return first.startswith(b"{") and "kind" in head_keys(first)


_JSONL_KINDS: dict[str, tuple[type, str]] = {
    "info": (DatasetInfo, ""),
    "memory": (Memory, "memories"),
    "conversation": (Conversation, "conversations"),
    "query": (Query, "queries"),
}


_RUN_BYTES = 256 * 1024
"""About this many bytes of a file are validated per call. pydantic-core parses a call's whole
input into its own tree before it builds models, so one call over 10,000 memories touches
twice the fresh pages of calls over a few hundred (0.100 against 0.064 s CPU in a new
process)."""


def _read_native_jsonl(path: Path) -> Dataset:
    """Read native JSONL: runs of records of one kind validated a few hundred at a time.

    Files as :func:`write_jsonl` writes them (an info line, then ``{"kind":"memory",...``
    lines and so on, one object a line) are validated by pydantic-core straight from the
    file's bytes, with no Python dict per record. Anything else (another layout, blank
    lines, a bad record, bytes that are not UTF-8) is read line by line as before, so every
    error names its line exactly as it did.
    """
    fast = _read_native_jsonl_fast(path)
    return fast if fast is not None else _read_native_jsonl_lines(path)


_LINE_START = {kind: f'{{"kind":"{kind}",'.encode() for kind in _JSONL_KINDS}


def _read_native_jsonl_fast(path: Path) -> Dataset | None:
    data = read_file(path, DatasetError, "dataset").removeprefix(b"\xef\xbb\xbf")
    if not data.startswith(_LINE_START["info"]):
        return None
    pos = data.find(b"\n") + 1 or len(data)
    end = len(data)
    while end > pos and data[end - 1] in b" \t\r\n":
        end -= 1
    lists: dict[str, list[Any]] = {key: [] for _, key in _JSONL_KINDS.values() if key}
    numbers: dict[str, list[int]] = {key: [] for key in lists}
    line = 2
    try:
        info = DatasetInfo.model_validate_json(b"{" + data[len(_LINE_START["info"]) : pos])
        while pos < end:
            kind = next((k for k, p in _LINE_START.items() if data.startswith(p, pos)), None)
            if kind is None or kind == "info":  # another layout, or a second info line
                return None  # the line-by-line reader handles it (and names the line)
            start = _LINE_START[kind]
            marker = b"\n" + start
            stop = data.find(b"\n", pos + _RUN_BYTES, end)
            stop = end if stop < 0 else stop
            body = data[pos + len(start) : stop]
            joined = body.replace(marker, b",{")
            if b"\n" in joined:  # a line of another kind starts here: end the run before it
                cut = body.find(b"\n")
                while body.startswith(marker, cut):
                    cut = body.find(b"\n", cut + 1)
                body, stop = body[:cut], pos + len(start) + cut
                joined = body.replace(marker, b",{")
            model, key = _JSONL_KINDS[kind]
            got = list_adapter(model).validate_json(b"[{" + joined + b"]")
            records = body.count(b"\n") + 1
            if len(got) != records:
                return None  # a line holding more than one record
            lists[key] += got
            numbers[key] += range(line, line + records)
            line += records
            pos = stop + 1
    except (ValidationError, ValueError):
        return None  # the line-by-line reader names the line and the field
    ds = Dataset(info=info, **lists)
    try:
        return check_dataset(ds, path)
    except DatasetError:  # rare: only now map records to lines, so the message names one
        lines = {(key, i): n for key, ns in numbers.items() for i, n in enumerate(ns)}
        return check_dataset(ds, path, lines)


def _read_native_jsonl_lines(path: Path) -> Dataset:
    info: DatasetInfo | None = None
    lists: dict[str, list[Any]] = {"memories": [], "conversations": [], "queries": []}
    lines: dict[tuple[str, int], int] = {}
    for lineno, rec in iter_jsonl(path):
        kind = rec.pop("kind", None)
        if not isinstance(kind, str) or kind not in _JSONL_KINDS:
            raise DatasetError(
                f"{path}:{lineno}: kind: expected one of "
                f"{', '.join(repr(k) for k in _JSONL_KINDS)}, got {kind!r}"
            )
        model, key = _JSONL_KINDS[kind]
        obj = validate_record(model, rec, path, lineno)
        if kind == "info":
            if info is not None:
                raise DatasetError(f"{path}:{lineno}: a second 'info' record")
            info = obj
            continue
        lines[(key, len(lists[key]))] = lineno
        lists[key].append(obj)
    if info is None:
        raise DatasetError(f"{path}: no 'info' record (the first line should have kind 'info')")
    ds = Dataset(info=info, **lists)
    return check_dataset(ds, path, lines)  # here, so errors name the line


NATIVE_JSON = Reader(
    name="native-json",
    description="mnemometer's own JSON: info, memories, conversations, queries",
    sniff=_sniff_native_json,
    read=_read_native_json,
    order=10,
)
NATIVE_JSONL = Reader(
    name="native-jsonl",
    description="mnemometer's own JSONL: one record a line, each with a 'kind'",
    sniff=_sniff_native_jsonl,
    read=_read_native_jsonl,
    order=10,
    checks=True,
)
