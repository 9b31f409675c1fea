"""Reader for LongMemEval (xiaowu0162/LongMemEval: ``longmemeval_s/m/oracle.json``).

Written from the documented format; the data is on the Hugging Face hub only, so this
reader is tested on a hand-written fixture (``tests/data/longmemeval_mini.json``), never on
the real files. The file is a JSON list of questions, each with ``question_id``,
``question_type``, ``question``, ``answer``, ``question_date``, ``haystack_session_ids``,
``haystack_dates``, ``haystack_sessions`` (lists of ``{role, content}`` turns, with
``has_answer: true`` on evidence turns) and ``answer_session_ids``. Question ids ending in
``_abs`` are abstention questions: nothing in the haystack answers them.

Questions do not share haystacks, so each question's haystack becomes its own
:class:`Conversation` (id = question id); turn ids are ``<question_id>/<session_id>/<n>``.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mnemometer._jsonl import json_document, open_regular
from mnemometer.config import explain
from mnemometer.datasets._models import Conversation, Dataset, DatasetInfo, Query, Session, Turn
from mnemometer.datasets._readers import Reader, head_keys, head_starts_with
from mnemometer.datasets._stream import iter_json_array, read_bytes
from mnemometer.errors import DatasetError

LICENCE = "MIT"
"""LongMemEval's licence, as its repository states it."""

# "2023/05/20 (Sat) 02:21"; the weekday is ignored (strptime's %a depends on the locale).
_DATE = re.compile(
    r"^\s*(\d{4})/(\d{1,2})/(\d{1,2})(?:\s*\([A-Za-z]+\))?(?:\s+(\d{1,2}):(\d{2}))?\s*$"
)
_TURN_OWN = {"role", "content", "has_answer"}
_QUESTION_OWN = {
    "question_id",
    "question_type",
    "question",
    "answer",
    "question_date",
    "haystack_session_ids",
    "haystack_dates",
    "haystack_sessions",
    "answer_session_ids",
}


def parse_longmemeval_date(text: str) -> datetime | None:
    """Parse ``2023/05/20 (Sat) 02:21`` (weekday and time optional); None if it is not one."""
    m = _DATE.match(text)
    if not m:
        return None
    y, mo, d, h, mi = m.groups()
    try:
        return datetime(int(y), int(mo), int(d), int(h or 0), int(mi or 0))
    except ValueError:
        return None


def _sniff(path: Path, head: bytes) -> bool:
    if not head_starts_with(head, "["):
        return False
    keys = head_keys(head)
    return "question_id" in keys and bool({"haystack_session_ids", "haystack_sessions"} & keys)


def read_longmemeval(path: Path) -> Dataset:
    """Read a LongMemEval file: one conversation (the haystack) per question.

    Evidence is turn-level: the turns marked ``has_answer``. An abstention question
    (``_abs``) has no relevant turns (retrieval suites score it as a negative query); the
    turns its source marks are kept in ``metadata['has_answer_turn_ids']``. The file is
    parsed one question at a time (:func:`iter_json_array`); the result holds every
    haystack, so for the 2.7 GB M file use :func:`longmemeval_index` instead.

    Raises:
        DatasetError: the file is not LongMemEval's shape; the message names the question
            and the key.
    """
    conversations: list[Conversation] = []
    queries: list[Query] = []
    counts = _counts()
    for i, (_, _, item) in enumerate(_elements(path)):
        conv, query = _question(item, f"{path}: [{i}]", counts)
        conversations.append(conv)
        queries.append(query)
    return Dataset(info=_info(path, counts), conversations=conversations, queries=queries)


def longmemeval_index(path: Path) -> Dataset:
    """A LongMemEval file's questions, in constant memory: haystacks stay in the file.

    Streams the file once; each question's haystack is parsed (and checked) and then
    dropped. Each conversation of the result is a stub without sessions whose metadata
    holds the haystack's byte ``offset`` and ``length``, its ``sha256`` (so the content
    hash covers every haystack) and its ``sessions`` and ``turns`` counts; load one with
    :func:`load_haystack`. Memory is bounded by the largest question, not the file.

    Raises:
        DatasetError: as :func:`read_longmemeval`.
    """
    import hashlib

    conversations: list[Conversation] = []
    queries: list[Query] = []
    counts = _counts()
    with open_regular(path, DatasetError, "dataset") as f:
        for i, (offset, length, item) in enumerate(_elements(path)):
            conv, query = _question(item, f"{path}: [{i}]", counts)
            f.seek(offset)
            digest = hashlib.sha256(f.read(length)).hexdigest()
            stub = Conversation(
                id=conv.id,
                speakers=conv.speakers,
                metadata={
                    "offset": offset,
                    "length": length,
                    "sha256": digest,
                    "sessions": len(conv.sessions),
                    "turns": sum(len(s.turns) for s in conv.sessions),
                },
            )
            conversations.append(stub)
            queries.append(query)
    return Dataset(info=_info(path, counts), conversations=conversations, queries=queries)


def load_haystack(path: Path, stub: Conversation) -> tuple[Conversation, Query]:
    """The full conversation and question behind a stub of :func:`longmemeval_index`.

    Raises:
        DatasetError: the bytes changed since the file was indexed (their SHA-256 differs).
    """
    import hashlib

    meta = stub.metadata
    offset, length = int(meta["offset"]), int(meta["length"])
    data = read_bytes(path, offset, length)
    if hashlib.sha256(data).hexdigest() != meta["sha256"]:
        raise DatasetError(
            f"{path}: haystack {stub.id} (bytes {offset}-{offset + length}) changed since the "
            "file was indexed; start a new run"
        )
    item = json_document(data, path, DatasetError)
    return _question(item, f"{path}: {stub.id}", _counts())


def _elements(path: Path) -> Any:
    try:
        yield from iter_json_array(path)
    except DatasetError as e:
        if "expected a JSON list" in str(e):
            raise DatasetError(
                f"{path}: not LongMemEval: expected a JSON list of questions"
            ) from None
        raise


def _counts() -> dict[str, int]:
    return {"renamed": 0, "bad_dates": 0, "no_evidence": 0, "abstention": 0}


def _info(path: Path, counts: dict[str, int]) -> DatasetInfo:
    notes = []
    if counts["abstention"]:
        notes.append(
            f"{counts['abstention']} abstention questions ('_abs') have no relevant turns; "
            "their marked turns are in metadata['has_answer_turn_ids']"
        )
    if counts["no_evidence"]:
        notes.append(f"{counts['no_evidence']} other questions have no turn marked has_answer")
    if counts["renamed"]:
        notes.append(
            f"{counts['renamed']} repeated session ids in a haystack made unique with '#<n>'"
        )
    if counts["bad_dates"]:
        notes.append(
            f"{counts['bad_dates']} dates not understood (kept as text in metadata['date'])"
        )
    return DatasetInfo(
        name=path.stem,
        language="en",
        source=f"LongMemEval JSON: {path.name}",
        licence=LICENCE,
        notes=notes,
    )


def _question(item: Any, where: str, counts: dict[str, int]) -> tuple[Conversation, Query]:
    try:
        return _build_question(item, where, counts)
    except ValidationError as e:  # a value the models refuse (an empty session id, ...)
        raise DatasetError(f"{where}: {explain(e)}") from None


def _build_question(item: Any, where: str, counts: dict[str, int]) -> tuple[Conversation, Query]:
    if not isinstance(item, dict):
        raise DatasetError(
            f"{where}: expected an object with 'question_id' and 'haystack_sessions'"
        )
    for key in ("question_id", "question"):
        if not item.get(key):
            raise DatasetError(f"{where}.{key}: missing")
    qid = str(item["question_id"])
    ids, dates, sessions, answer_ids = (
        item.get(k) or []
        for k in (
            "haystack_session_ids",
            "haystack_dates",
            "haystack_sessions",
            "answer_session_ids",
        )
    )
    for key, value in (
        ("answer_session_ids", answer_ids),
        ("haystack_session_ids", ids),
        ("haystack_dates", dates),
        ("haystack_sessions", sessions),
    ):
        if not isinstance(value, list):
            raise DatasetError(f"{where}.{key}: expected a list")
    if not len(ids) == len(dates) == len(sessions):
        raise DatasetError(
            f"{where}: haystack_session_ids, haystack_dates and haystack_sessions differ in "
            f"length ({len(ids)}, {len(dates)}, {len(sessions)})"
        )
    marked: list[str] = []
    built: list[Session] = []
    seen: dict[str, int] = {}
    for j, (sid, date_text, turns) in enumerate(zip(ids, dates, sessions, strict=True)):
        sid = str(sid)
        if sid in seen:
            seen[sid] += 1
            counts["renamed"] += 1
            sid = f"{sid}#{seen[sid]}"
        else:
            seen[sid] = 1
        if not isinstance(turns, list):
            raise DatasetError(f"{where}.haystack_sessions.{j}: expected a list of turns")
        date = parse_longmemeval_date(str(date_text))
        meta: dict[str, Any] = {}
        if date is None:
            meta["date"] = date_text
            counts["bad_dates"] += 1
        out: list[Turn] = []
        for k, t in enumerate(turns):
            if not isinstance(t, dict) or "role" not in t or "content" not in t:
                raise DatasetError(
                    f"{where}.haystack_sessions.{j}.{k}: expected a turn with 'role' and 'content'"
                )
            turn = Turn(
                id=f"{qid}/{sid}/{k + 1}",
                speaker=str(t["role"]),
                text=str(t["content"]),
                metadata={key: v for key, v in t.items() if key not in _TURN_OWN},
            )
            if t.get("has_answer") is True:
                marked.append(turn.id)
            out.append(turn)
        built.append(Session(id=sid, date=date, turns=out, metadata=meta))
    speakers = sorted({t.speaker for s in built for t in s.turns})
    conv = Conversation(id=qid, speakers=speakers, sessions=built)

    abstention = qid.endswith("_abs")
    meta_q: dict[str, Any] = {
        "answer_session_ids": [str(x) for x in answer_ids],
    }
    if abstention:
        counts["abstention"] += 1
        meta_q["abstention"] = True
        meta_q["has_answer_turn_ids"] = marked
    elif not marked:
        counts["no_evidence"] += 1
    meta_q.update({k: v for k, v in item.items() if k not in _QUESTION_OWN})
    asked_text = item.get("question_date")
    asked = parse_longmemeval_date(str(asked_text)) if asked_text is not None else None
    if asked is None and asked_text is not None:
        meta_q["question_date"] = asked_text
        counts["bad_dates"] += 1
    answer = item.get("answer")
    query = Query(
        id=qid,
        text=str(item["question"]),
        type=str(item.get("question_type") or "unspecified"),
        conversation_id=qid,
        relevant_ids=[] if abstention else marked,
        answer=None if answer is None else str(answer),
        asked_at=asked,
        metadata=meta_q,
    )
    return conv, query


LONGMEMEVAL = Reader(
    name="longmemeval",
    description="LongMemEval (S, M, oracle): one haystack conversation per question",
    sniff=_sniff,
    read=read_longmemeval,
    order=30,
)
