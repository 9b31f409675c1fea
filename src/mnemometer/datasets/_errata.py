"""Errata: per-question corrections of a benchmark's ground truth, applied at load.

Benchmarks ship wrong gold answers (LoCoMo's audit counts 99 of 1,540; LongMemEval fixed
several in a cleaned release). An errata file corrects or excludes questions without
editing the benchmark: a JSON list, or JSON lines, of objects::

    {"question_id": "conv-26/q017", "answer": "7 May 2023", "reason": "session date"}
    {"question_id": "conv-30/q004", "exclude": true, "reason": "gold contradicts D3:5"}

Every entry names a ``question_id`` of the dataset and a ``reason``; it either gives a
corrected ``answer`` or sets ``exclude``. :func:`apply_errata` returns the corrected
dataset, what it changed (one note per change, for the run log) and the file's SHA-256,
which a run records so two runs with different errata never compare silently.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from mnemometer._jsonl import json_document
from mnemometer.datasets._models import Dataset
from mnemometer.datasets._readers import read_text
from mnemometer.errors import DatasetError


def read_errata(path: str | Path) -> tuple[list[tuple[int, dict[str, Any]]], str]:
    """``([(line, entry), ...], sha256)`` of an errata file (JSON list or JSON lines).

    Raises:
        DatasetError: unreadable, malformed, or an entry without ``question_id`` and
            ``reason`` or with neither ``answer`` nor ``exclude``; naming file and line.
    """
    p = Path(path)
    text = read_text(p)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    entries: list[tuple[int, dict[str, Any]]] = []
    stripped = text.lstrip()
    if stripped.startswith("["):
        raw = json_document(text, p, DatasetError)
        entries = [(i + 1, e) for i, e in enumerate(raw)]
        where = "entry"
    else:
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                entries.append((n, json.loads(line)))
            except json.JSONDecodeError as e:
                raise DatasetError(f"{p}:{n}:{e.colno}: malformed JSON: {e.msg}") from None
        where = "line"
    for n, e in entries:
        at = f"{p}: {where} {n}" if where == "entry" else f"{p}:{n}"
        if not isinstance(e, dict):
            raise DatasetError(f"{at}: expected an object with question_id and reason")
        for key in ("question_id", "reason"):
            if not isinstance(e.get(key), str) or not e[key].strip():
                raise DatasetError(f"{at}: {key}: missing (every erratum says which and why)")
        if ("answer" in e) == bool(e.get("exclude")):
            raise DatasetError(f"{at}: give either a corrected 'answer' or 'exclude': true")
    return entries, digest


def apply_errata(dataset: Dataset, path: str | Path) -> tuple[Dataset, list[str], str]:
    """Apply an errata file: ``(corrected dataset, notes, sha256 of the file)``.

    The corrected dataset's queries keep the original answer in
    ``metadata['original_answer']`` and the reason in ``metadata['erratum']``; excluded
    questions are dropped. Its content hash is recomputed.

    Raises:
        DatasetError: a bad file, or an entry naming a question the dataset does not have
            (a typo would otherwise silently change nothing).
    """
    entries, digest = read_errata(path)
    by_id = {q.id: q for q in dataset.queries}
    corrected: dict[str, dict[str, Any]] = {}
    excluded: dict[str, str] = {}
    for n, e in entries:
        qid = e["question_id"]
        if qid not in by_id:
            raise DatasetError(
                f"{path}:{n}: question_id {qid!r} is not a question of {dataset.info.name}"
            )
        if e.get("exclude"):
            excluded[qid] = e["reason"]
        else:
            corrected[qid] = e
    queries = []
    for q in dataset.queries:
        if q.id in excluded:
            continue
        if q.id in corrected:
            e = corrected[q.id]
            q = q.model_copy(deep=True)
            q.metadata["original_answer"] = q.answer
            q.metadata["erratum"] = e["reason"]
            q.answer = str(e["answer"])
        queries.append(q)
    notes = [
        f"errata {Path(path).name} (sha256 {digest[:12]}): {len(corrected)} answers "
        f"corrected, {len(excluded)} questions excluded"
    ]
    notes += [
        f"erratum {qid}: answer {by_id[qid].answer!r} -> {e['answer']!r} ({e['reason']})"
        for qid, e in corrected.items()
    ]
    notes += [f"erratum {qid}: excluded ({why})" for qid, why in excluded.items()]
    info = dataset.info.model_copy(deep=True)
    info.notes = [*info.notes, *notes]
    out = Dataset(
        info=info, memories=dataset.memories, conversations=dataset.conversations, queries=queries
    )
    return out.with_hash(), notes, digest
