"""Reader for MemoryAgentBench (HUST-AI-HYZ/MemoryAgentBench; data ``ai-hyz/MemoryAgentBench``).

Written from the published format; the data is on the Hugging Face hub only, so this reader
is tested on hand-written files in exactly that shape, never on the real ones. The hub
holds one Parquet file per split (``Accurate_Retrieval``, ``Test_Time_Learning``,
``Long_Range_Understanding``, ``Conflict_Resolution``); each row is::

    {"context": "<the long text>",
     "questions": ["...", ...],
     "answers": [["gold", "alias", ...], ...],      # one list of accepted answers each
     "metadata": {"source": "ruler_qa1_197K", "qa_pair_ids": ["...", ...],
                  "question_ids": [...], "question_types": [...], ...}}

Read here: the Parquet file itself (needs ``pyarrow``), the rows as JSON Lines (what
``datasets``' ``to_json`` writes) or as one JSON list. The benchmark feeds the context to
the agent in chunks, "inject once, query many": each row becomes one
:class:`Conversation` whose single session holds the context cut into chunks (turns) of
at most :data:`CHUNK_WORDS` words, at line boundaries where it can, its line breaks
turned into spaces (each chunk is one excerpt line of the pinned reader prompt). The
benchmark chunks by model tokens (512 for its RAG agents); words are a tokenizer-free
stand-in. Questions
keep their row's source as their ``type`` and every accepted answer in
``metadata['answers']``; the benchmark has no evidence labels, so retrieval metrics do not
apply.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mnemometer._jsonl import json_document
from mnemometer.datasets._models import Conversation, Dataset, DatasetInfo, Query, Session, Turn
from mnemometer.datasets._readers import (
    HEAD_BYTES,
    Reader,
    head_keys,
    iter_jsonl,
    read_head,
    read_json,
)
from mnemometer.errors import DatasetError

LICENCE = "MIT"
"""MemoryAgentBench's licence, as its repository states it (the reused sets keep theirs)."""

CHUNK_WORDS = 400
"""Words per chunk (about 512 tokens of English, the benchmark's RAG chunk size)."""

SPLITS = {
    "accurate_retrieval": "AR",
    "test_time_learning": "TTL",
    "long_range_understanding": "LRU",
    "conflict_resolution": "CR",
}
"""The four splits (file-name stems on the hub) and their competency codes."""

_ROW_KEYS = {"context", "questions", "answers"}
_ROW_START = re.compile(rb'\{\s*"context"\s*:')


def competency(source: str, path: Path) -> str:
    """The competency of a row: from the file name, else from its source."""
    stem = path.stem.lower()
    for split, code in SPLITS.items():
        if split in stem:
            return code
    low = source.lower()
    if low.startswith("factconsolidation"):
        return "CR"
    if low.startswith(("icl_", "recsys")):
        return "TTL"
    if low.startswith(("infbench_sum", "detective")):
        return "LRU"
    return "AR"


def _sniff(path: Path, head: bytes) -> bool:
    if head.startswith(b"PAR1"):
        return "memoryagentbench" in path.name.lower() or any(
            s in path.name.lower() for s in SPLITS
        )
    # Rows start with their context, which can be megabytes: the keys after it may lie
    # beyond the head, so a row that opens with "context" is enough.
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip().removeprefix(b"[").lstrip()
    keys = head_keys(head)
    return _ROW_START.match(text) is not None and (_ROW_KEYS <= keys or len(head) >= HEAD_BYTES)


def chunk(text: str, words: int = CHUNK_WORDS) -> list[str]:
    """``text`` cut into pieces of at most ``words`` words, at line ends where possible.

    Each piece is one line: the lines it holds are joined by spaces.
    """
    out: list[str] = []
    cur: list[str] = []
    n = 0
    for line in text.splitlines():
        w = line.split()
        if not w:
            continue
        while len(w) > words:  # one very long line: cut it by words
            if cur:
                out.append(" ".join(cur))
                cur, n = [], 0
            out.append(" ".join(w[:words]))
            w = w[words:]
        if n + len(w) > words and cur:
            out.append(" ".join(cur))
            cur, n = [], 0
        cur.append(" ".join(w))
        n += len(w)
    if cur:
        out.append(" ".join(cur))
    return out


def _rows(path: Path) -> list[tuple[str, Any]]:
    if path.suffix.lower() == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise DatasetError(
                f"{path}: reading Parquet needs pyarrow (pip install pyarrow), or give the "
                "rows as JSON Lines"
            ) from None
        try:
            table = pq.read_table(path)
        except Exception as e:  # noqa: BLE001 - pyarrow's errors have no common base
            raise DatasetError(f"{path}: not a readable Parquet file: {e}") from None
        return [(f"row {i}", r) for i, r in enumerate(table.to_pylist())]
    first = read_head(path, 4096).lstrip(b"\xef\xbb\xbf").lstrip()[:1]
    if first == b"[":
        data = read_json(path)
        return [(f"[{i}]", r) for i, r in enumerate(data)]
    return [(f"line {n}", r) for n, r in iter_jsonl(path)]


def read_memoryagentbench(path: Path) -> Dataset:
    """Read a MemoryAgentBench split: one chunked conversation per row.

    Raises:
        DatasetError: a row without ``context``/``questions``/``answers``, or with
            questions and answers of different lengths; the message names the row and key.
    """
    conversations: list[Conversation] = []
    queries: list[Query] = []
    seen: set[str] = set()
    for i, (where, row) in enumerate(_rows(path)):
        at = f"{path}: {where}"
        conv, qs = _row(row, i, at, path)
        if conv.id in seen:
            conv = conv.model_copy(update={"id": f"{conv.id}#{i}"})
            qs = [q.model_copy(update={"conversation_id": conv.id}) for q in qs]
        seen.add(conv.id)
        conversations.append(conv)
        queries.extend(qs)
    if not conversations:
        raise DatasetError(f"{path}: no rows")
    return Dataset(
        info=DatasetInfo(
            name=path.stem,
            language="en",
            source=f"MemoryAgentBench: {path.name}",
            licence=LICENCE,
            notes=[f"contexts cut into chunks of at most {CHUNK_WORDS} words"],
        ),
        conversations=conversations,
        queries=queries,
    )


def _row(row: Any, i: int, at: str, path: Path) -> tuple[Conversation, list[Query]]:
    if not isinstance(row, dict):
        raise DatasetError(f"{at}: expected an object with 'context', 'questions', 'answers'")
    for key in ("context", "questions", "answers"):
        if key not in row:
            raise DatasetError(f"{at}.{key}: missing")
    context, questions, answers = row["context"], row["questions"], row["answers"]
    meta = row.get("metadata") or {}
    if isinstance(meta, str):  # some exports keep it as a JSON string: parsed strictly
        meta = json_document(meta, f"{at}.metadata", DatasetError)
    if not isinstance(context, str) or not context.strip():
        raise DatasetError(f"{at}.context: expected non-empty text")
    if not isinstance(questions, list) or not isinstance(answers, list):
        raise DatasetError(f"{at}: 'questions' and 'answers' must be lists")
    if len(questions) != len(answers):
        raise DatasetError(
            f"{at}: {len(questions)} questions but {len(answers)} answers (one list each)"
        )
    if not isinstance(meta, dict):
        raise DatasetError(f"{at}.metadata: expected an object")
    source = str(meta.get("source") or "unknown")
    listed = meta.get("qa_pair_ids") or []
    if not isinstance(listed, list):
        raise DatasetError(f"{at}.metadata.qa_pair_ids: expected a list")
    ids = [str(x) for x in listed]
    if ids and len(ids) != len(questions):
        raise DatasetError(
            f"{at}.metadata.qa_pair_ids: {len(ids)} ids for {len(questions)} questions"
        )
    cid = ids[0].rsplit("_no", 1)[0] if ids else f"{source}-{i}"
    turns = [
        Turn(id=f"{cid}/c{k + 1}", speaker="context", text=t) for k, t in enumerate(chunk(context))
    ]
    conv = Conversation(
        id=cid,
        speakers=["context"],
        sessions=[Session(id="context", turns=turns)],
        metadata={"source": source},
    )
    comp = competency(source, path)
    per_question = {
        k[:-1]: v
        for k, v in meta.items()
        if k.endswith("s")
        and isinstance(v, list)
        and len(v) == len(questions)
        and k != "qa_pair_ids"
    }
    qs = []
    for j, (question, gold) in enumerate(zip(questions, answers, strict=True)):
        golds = [str(a) for a in gold] if isinstance(gold, list) else [str(gold)]
        if not str(question).strip() or not golds:
            raise DatasetError(f"{at}: question {j} has no text or no answer")
        extra = {
            k: v[j] for k, v in per_question.items() if isinstance(v[j], str | int | float | bool)
        }
        qs.append(
            Query(
                id=ids[j] if ids else f"{cid}/q{j + 1}",
                text=str(question),
                type=source,
                conversation_id=cid,
                answer=golds[0],
                metadata={"answers": golds, "competency": comp, "source": source, **extra},
            )
        )
    return conv, qs


MEMORYAGENTBENCH = Reader(
    name="memoryagentbench",
    description="MemoryAgentBench (AR, TTL, LRU, CR splits): one chunked context per row",
    sniff=_sniff,
    read=read_memoryagentbench,
    order=9,  # before native JSONL, which takes any .jsonl; the sniff is specific
)
