"""Reading and writing datasets: native JSON / JSONL, MemTest JSON, built-in names."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mnemometer._jsonl import json_objects
from mnemometer.datasets._models import Dataset, DatasetInfo, Memory, Query
from mnemometer.errors import DatasetError, did_you_mean

BUILTIN = {
    "demo-en": "demo_en.json",
    "demo-zh": "demo_zh.json",
}
"""Built-in datasets, written for this package (English and Chinese)."""


def builtin_datasets() -> list[str]:
    """Names of the datasets shipped inside the package."""
    return sorted(BUILTIN)


def load_dataset(path_or_name: str | Path) -> Dataset:
    """Load a dataset from a file (any supported format) or a built-in name.

    The reader is chosen from the content: native JSON (``info`` + ``memories`` +
    ``queries``), native JSONL (one record per line with a ``kind``), or MemTest JSON (every
    variant the MemTest seed shipped). The content hash is computed on load.

    Raises:
        DatasetError: the file is missing, malformed or violates the schema; the message
            names the file and the line/column or the field path.
    """
    path = _resolve(path_or_name)
    if path.suffix == ".jsonl":
        return _check(_load_jsonl(path), path).with_hash()
    raw = _read_json(path)
    if isinstance(raw, dict) and "info" in raw and "memories" in raw:
        return _check(_validate(Dataset, raw, path), path).with_hash()
    if isinstance(raw, dict) and isinstance(raw.get("memories"), list):
        from mnemometer.datasets._memtest import from_memtest

        return from_memtest(raw, path).with_hash()
    raise DatasetError(
        f"{path}: not a dataset: expected a JSON object with 'info' and 'memories' "
        "(native) or 'memories' and 'queries' (MemTest)"
    )


def save_dataset(dataset: Dataset, path: str | Path) -> Path:
    """Write a dataset as native JSON or JSONL (chosen by the file extension)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".jsonl":
        write_jsonl(path, dataset.info, dataset.memories, dataset.queries)
    else:
        path.write_text(dataset.model_dump_json(indent=1, exclude_none=True) + "\n", "utf-8")
    return path


def write_jsonl(
    path: Path,
    info: DatasetInfo,
    memories: Iterable[Memory | str],
    queries: Iterable[Query | str],
) -> None:
    """Stream a dataset to JSONL: an info line, then memories, then queries.

    Memories and queries may be models or already-serialised JSON objects (``str``), so
    a generator can stream millions of records without building pydantic objects.
    """
    with open(path, "w", encoding="utf-8") as f:
        for kind, items in (("info", [info]), ("memory", memories), ("query", queries)):
            for item in items:
                body = _body(item)
                f.write(f'{{"kind":"{kind}",{body[1:]}\n')


def write_json_stream(
    path: Path,
    info: DatasetInfo,
    memories: Iterable[Memory | str],
    queries: Iterable[Query | str],
) -> None:
    """Stream a dataset to native JSON (``info``, ``memories``, ``queries``), one record a line."""
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"info":' + _body(info))
        for key, items in (("memories", memories), ("queries", queries)):
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


def _check(ds: Dataset, path: Path) -> Dataset:
    """Native datasets must be internally consistent: ids unique, no dangling ids."""
    ids: set[str] = set()
    for i, m in enumerate(ds.memories):
        if m.id in ids:
            raise DatasetError(f"{path}: memories.{i}.id: repeated memory id {m.id!r}")
        ids.add(m.id)
    qids: set[str] = set()
    for i, q in enumerate(ds.queries):
        if q.id in qids:
            raise DatasetError(f"{path}: queries.{i}.id: repeated query id {q.id!r}")
        qids.add(q.id)
        missing = [x for x in q.relevant_ids if x not in ids]
        if missing:
            raise DatasetError(
                f"{path}: queries.{i}.relevant_ids: {missing[0]!r} is not a memory id"
            )
    return ds


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


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise DatasetError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise DatasetError(f"{path}: cannot read: {e.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise DatasetError(f"{path}:{e.lineno}:{e.colno}: malformed JSON: {e.msg}") from None


def _validate(model: type, raw: Any, path: Path, line: int | None = None) -> Any:
    try:
        return model.model_validate(raw)
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "<root>"
        where = f"{path}:{line}" if line else str(path)
        more = f" (and {len(e.errors()) - 1} more)" if len(e.errors()) > 1 else ""
        raise DatasetError(f"{where}: {loc}: {err['msg']}{more}") from None


def _iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise DatasetError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise DatasetError(f"{path}: cannot read: {e.strerror}") from None
    yield from json_objects(text, path, DatasetError, what="a record")


def _load_jsonl(path: Path) -> Dataset:
    info: DatasetInfo | None = None
    memories: list[Memory] = []
    queries: list[Query] = []
    models = {"info": DatasetInfo, "memory": Memory, "query": Query}
    for lineno, rec in _iter_jsonl(path):
        kind = rec.pop("kind", None)
        if kind not in models:
            raise DatasetError(
                f"{path}:{lineno}: kind: expected one of 'info', 'memory', 'query', got {kind!r}"
            )
        obj = _validate(models[kind], rec, path, lineno)
        if kind == "info":
            if info is not None:
                raise DatasetError(f"{path}:{lineno}: a second 'info' record")
            info = obj
        elif kind == "memory":
            memories.append(obj)
        else:
            queries.append(obj)
    if info is None:
        raise DatasetError(f"{path}: no 'info' record (the first line should have kind 'info')")
    return Dataset(info=info, memories=memories, queries=queries)
