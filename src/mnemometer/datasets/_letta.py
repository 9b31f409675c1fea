"""Reader for Letta's core-memory sets (letta-ai/letta-evals leaderboard; Apache-2.0).

Each JSON line is ``{input: question, ground_truth, agent_args: {extra: {...}}}``. The
**read** set's ``extra`` has ``facts`` (ten statements about fictional people), ``names``,
``facts_context`` and ``question_index``; the **update** set's has ``facts``,
``contradicting_fact``, ``contradicting_answer`` (the updated answer, equal to
``ground_truth``) and ``supporting_fact_indices`` (the facts the update makes stale).

Each line becomes a :class:`Conversation` ``row-NNNN`` (its line number): session ``facts``
holds one turn per fact (speaker ``memory``), and for the update set session ``update``
holds the contradicting fact, given after the facts. The question is ``row-NNNN/q``. In the
update set the evidence is the update turn (what must be found to answer right) and the
stale facts' turn ids are in ``metadata['stale_turn_ids']``; the read set names no
evidence fact, so its questions have none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mnemometer.datasets._models import Conversation, Dataset, DatasetInfo, Query, Session, Turn
from mnemometer.datasets._readers import Reader, head_keys, head_starts_with, iter_jsonl
from mnemometer.errors import DatasetError

LICENCE = "Apache-2.0"
"""letta-evals' licence."""

SPEAKER = "memory"
"""The speaker of a fact turn."""


def _sniff(path: Path, head: bytes) -> bool:
    if not head_starts_with(head, "{"):
        return False
    keys = head_keys(head)
    return {"ground_truth", "agent_args"} <= keys and "facts" in keys


def read_letta(path: Path) -> Dataset:
    """Read a Letta core-memory set (read or update) into one conversation per line.

    Raises:
        DatasetError: a line without ``input``, ``ground_truth`` or ``agent_args.extra.facts``,
            naming the file and line.
    """
    conversations: list[Conversation] = []
    queries: list[Query] = []
    kinds: set[str] = set()
    quoted = 0
    for line, row in iter_jsonl(path):
        where = f"{path}:{line}"
        args = row.get("agent_args") or {}
        if not isinstance(args, dict):
            raise DatasetError(f"{where}: agent_args: expected an object")
        extra = args.get("extra")
        for key, value in (("input", row.get("input")), ("ground_truth", row.get("ground_truth"))):
            if not isinstance(value, str) or not value.strip():
                raise DatasetError(f"{where}: {key}: missing")
        if not isinstance(extra, dict) or not isinstance(extra.get("facts"), list):
            raise DatasetError(f"{where}: agent_args.extra.facts: missing (not a Letta set?)")
        cid = f"row-{line:04d}"
        facts = [str(f) for f in extra["facts"]]
        turns = [Turn(id=f"{cid}/f{i}", speaker=SPEAKER, text=t) for i, t in enumerate(facts)]
        sessions = [Session(id="facts", turns=turns)]
        meta: dict[str, Any] = {}
        evidence: list[str] = []
        if "contradicting_fact" in extra:
            kinds.add("update")
            update, was_quoted = _unquote(str(extra["contradicting_fact"]))
            quoted += was_quoted
            sessions.append(
                Session(id="update", turns=[Turn(id=f"{cid}/u", speaker=SPEAKER, text=update)])
            )
            evidence = [f"{cid}/u"]
            stale = [int(i) for i in extra.get("supporting_fact_indices") or []]
            meta["stale_turn_ids"] = [f"{cid}/f{i}" for i in stale if 0 <= i < len(facts)]
            meta["contradicting_answer"] = extra.get("contradicting_answer")
        else:
            kinds.add("read")
            meta["question_index"] = extra.get("question_index")
        conversations.append(Conversation(id=cid, speakers=[SPEAKER], sessions=sessions))
        queries.append(
            Query(
                id=f"{cid}/q",
                text=str(row["input"]),
                type="update" if evidence else "read",
                conversation_id=cid,
                relevant_ids=evidence,
                answer=str(row["ground_truth"]),
                metadata=meta,
            )
        )
    if not queries:
        raise DatasetError(f"{path}: no rows")
    notes = [f"Letta core-memory {'/'.join(sorted(kinds))} set: one conversation per line"]
    if quoted:
        notes.append(f"{quoted} contradicting facts wrapped in extra quotes read without them")
    if "read" in kinds:
        notes.append("the read set names no evidence fact: retrieval metrics do not apply")
    info = DatasetInfo(
        name=path.stem, source=f"Letta core-memory JSONL: {path.name}", licence=LICENCE, notes=notes
    )
    return Dataset(info=info, conversations=conversations, queries=queries)


def _unquote(text: str) -> tuple[str, bool]:
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] == '"':
        return t[1:-1], True
    return t, False


LETTA = Reader(
    name="letta-core-memory",
    description="Letta core-memory read/update sets (letta-evals): facts, a question, the answer",
    sniff=_sniff,
    read=read_letta,
    order=9,  # before native JSONL, which takes any .jsonl file by its suffix
)
