"""A store's index saved in the run directory, so a resumed run loads it instead of indexing.

A suite saves the index of a ``Persistent`` store once indexing finishes (``store-index/``,
written whole: a temporary directory renamed into place) beside a key: the dataset's
content hash, the store's name, class and options, the suite's versions setting, the ids
the store was given (``suites/_store_ids.py``), and the mnemometer version. A resume loads it only when the key matches and every file still has
the checksum it was saved with; anything else (missing, torn, corrupt, another option)
means indexing again, never different results. Nothing that reports a run reads it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from mnemometer._env import package_version
from mnemometer._jsonl import open_regular
from mnemometer.datasets._models import Dataset
from mnemometer.stores._protocol import ListableStore, Persistent

INDEX_DIR = "store-index"
KEY_FILE = "key.json"
_FORMAT = 1


def index_key(store: Any, dataset: Dataset, system: Any, versions: str, ids: str) -> str | None:
    """What a saved index must have been built from; ``None`` when it cannot be told.

    ``ids``: the digest of the ids the store was given (:meth:`StoreIds.digest`).
    """
    if not isinstance(store, Persistent) or not dataset.info.content_hash:
        return None
    parts = [
        _FORMAT,
        package_version(),
        dataset.info.content_hash,
        getattr(system, "name", None),
        # As the header records them (given, resolved, secrets hidden): a resume's spec is
        # rebuilt from that record, so its raw options differ from the first session's.
        system.ref(store).options if hasattr(system, "ref") else None,
        f"{type(store).__module__}.{type(store).__qualname__}",
        versions,
        ids,
    ]
    blob = json.dumps(parts, sort_keys=True, default=repr)
    return hashlib.sha256(blob.encode()).hexdigest()


def load_index(store: Any, given: set[str], run_dir: Path, key: str | None) -> bool:
    """Load the saved index into ``store`` when its key and checksums match.

    ``given``: the ids the store was given for the dataset's memories.
    """
    path = Path(run_dir) / INDEX_DIR
    if key is None or not (path / KEY_FILE).is_file():
        return False
    try:
        doc = json.loads((path / KEY_FILE).read_text("utf-8"))
        files = doc["files"]
        if doc["key"] != key or not files:
            return False
        if any(_digest(path / name) != digest for name, digest in files.items()):
            return False
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False
    if not store.load(path / "index"):
        return False
    if isinstance(store, ListableStore):  # belt and braces: the memories it holds
        return set(map(str, store.list_ids())) == given
    return True


def save_index(store: Any, run_dir: Path, key: str | None) -> None:
    """Save ``store``'s index under ``key`` (whole or not at all).

    A failure to save only costs a resume its shortcut, so it is not an error.
    """
    if key is None:
        return
    final = Path(run_dir) / INDEX_DIR
    tmp = final.with_name(INDEX_DIR + ".tmp")
    try:
        shutil.rmtree(tmp, ignore_errors=True)
        store.save(tmp / "index")
        files = {
            p.relative_to(tmp).as_posix(): _digest(p)
            for p in sorted((tmp / "index").rglob("*"))
            if p.is_file()
        }
        (tmp / KEY_FILE).write_text(json.dumps({"key": key, "files": files}), "utf-8")
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    # A FIFO in place of a saved file would block the resume: refused (OSError) unopened.
    with open_regular(path, OSError, "saved index file") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def discard_index(run_dir: Path) -> None:
    """Remove a finished run's saved index (never resumed; about 6 MB per 10k memories)."""
    shutil.rmtree(Path(run_dir) / INDEX_DIR, ignore_errors=True)
