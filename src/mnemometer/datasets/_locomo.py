"""Reader for LoCoMo (snap-research/LoCoMo, ``data/locomo10.json``; CC BY-NC 4.0).

The file is a JSON list of samples. Each has ``sample_id``; ``conversation`` with
``speaker_a``, ``speaker_b``, ``session_N`` (turns: ``speaker``, ``dia_id`` such as ``D3:12``,
``text``, and for a shared image ``blip_caption``, ``img_url``, ``query``) and
``session_N_date_time`` ("1:56 pm on 8 May, 2023"); and ``qa`` (``question``, ``answer``,
``evidence`` dialogue ids, ``category``; category 5 carries ``adversarial_answer``). The
generated annotations (``event_summary``, ``observation``, ``session_summary``) are not read.

Each sample becomes a :class:`Conversation` whose turn ids are ``<sample_id>/<dia_id>``
(dialogue ids repeat across samples) and each question a :class:`Query` with id
``<sample_id>/q<n>``. Evidence that is malformed or names no turn is repaired where that is
unambiguous and otherwise dropped, and every case is counted in ``info.notes``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from mnemometer.datasets._models import Conversation, Dataset, DatasetInfo, Query, Session, Turn
from mnemometer.datasets._readers import Reader, head_keys, head_starts_with, read_json
from mnemometer.errors import DatasetError

LOCOMO_CATEGORIES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
"""LoCoMo's ``category`` codes, as the words that become :attr:`Query.type`.

Neither the README nor the paper gives them. This is ``CATEGORY_MAPPING`` in the official
scoring code (snap-research/LoCoMo ``task_eval/evaluation_stats.py``), as confirmed in
LoCoMo issues #6 and #29. Several harnesses shipped a different map (mem0 #2609, memobase
#79, supermemory memorybench PR #90), so ``tests/datasets_/test_locomo.py`` checks it against facts
in the data: category 5 is exactly the questions with an ``adversarial_answer``; category
4 evidence stays in one session (all but 1 of 841) while category 1 evidence nearly always
spans several; most category 2 questions ask "When"; only category 3 asks what someone
"would", "might" or "likely" does.
"""

LICENCE = "CC BY-NC 4.0"
"""LoCoMo's licence (data and code): non-commercial; never bundle the file."""

_SESSION = re.compile(r"^session_(\d+)$")
_DIA_ID = re.compile(r"^D(\d+):(\d+)$")
# A piece of a malformed evidence string: "D9:17", or "D:11:26" with a stray colon.
_DIA_PIECE = re.compile(r"^D:?(\d+):(\d+)$")
_DATE = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$", re.I
)
_MONTHS = {
    m: i
    for i, m in enumerate(
        "january february march april may june july august september october november "
        "december".split(),
        1,
    )
}
_TURN_OWN = {"speaker", "dia_id", "text", "blip_caption"}
_QA_OWN = {"question", "answer", "adversarial_answer", "evidence", "category"}
_NOT_READ = ("event_summary", "observation", "session_summary")


def parse_locomo_date(text: str) -> datetime | None:
    """Parse a LoCoMo session date such as ``1:56 pm on 8 May, 2023``; None if it is not one."""
    m = _DATE.match(text)
    if not m:
        return None
    hour, minute, ampm, day, month, year = m.groups()
    mon = _MONTHS.get(month.lower())
    h = int(hour) % 12 + (12 if ampm.lower() == "pm" else 0)
    if mon is None or int(minute) > 59 or int(hour) > 12:
        return None
    try:
        return datetime(int(year), mon, int(day), h, int(minute))
    except ValueError:
        return None


@dataclass
class _Tally:
    """What the reader changed, for ``info.notes``."""

    references: int = 0
    leading_zero: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)
    repaired_ids: int = 0
    unusable: list[str] = field(default_factory=list)
    dangling: list[str] = field(default_factory=list)
    repeated: list[str] = field(default_factory=list)
    no_evidence: int = 0
    empty_evidence: int = 0
    orphan_dates: dict[str, list[int]] = field(default_factory=dict)
    bad_dates: list[str] = field(default_factory=list)
    unknown_categories: list[str] = field(default_factory=list)
    numeric_answers: int = 0
    adversarial_with_answer: int = 0
    not_read: set[str] = field(default_factory=set)

    def notes(self, questions: int) -> list[str]:
        out = [
            f"{self.references} evidence strings in {questions} questions; "
            "questions whose evidence was changed keep it as written in metadata['evidence']"
        ]
        if self.leading_zero:
            out.append(
                f"{len(self.leading_zero)} evidence ids written with a leading zero read "
                f"without it: {_few(self.leading_zero)}"
            )
        if self.repaired:
            out.append(
                f"{len(self.repaired)} malformed evidence strings split or repaired into "
                f"{self.repaired_ids} turn ids: {_few(self.repaired)}"
            )
        if self.unusable:
            out.append(
                f"{len(self.unusable)} malformed evidence strings name no turn and were "
                f"dropped: {_few(self.unusable)}"
            )
        if self.dangling:
            out.append(
                f"{len(self.dangling)} evidence ids point to turns that do not exist and "
                f"were dropped: {_few(self.dangling)}"
            )
        if self.repeated:
            out.append(
                f"{len(self.repeated)} evidence ids repeated within a question kept once: "
                f"{_few(self.repeated)}"
            )
        if self.no_evidence:
            out.append(
                f"{self.no_evidence} questions have no evidence ({self.empty_evidence} list "
                "none); a retrieval suite scores a query without relevant ids as a negative"
            )
        if self.orphan_dates:
            total = sum(len(v) for v in self.orphan_dates.values())
            where = [f"{sid} {_span(ns)}" for sid, ns in self.orphan_dates.items()]
            out.append(f"{total} session dates without a session ignored: {_few(where)}")
        if self.bad_dates:
            out.append(
                f"{len(self.bad_dates)} session dates not understood (kept as text in the "
                f"session's metadata['date']): {_few(self.bad_dates)}"
            )
        if self.unknown_categories:
            out.append(
                f"{len(self.unknown_categories)} questions with an unknown category typed "
                f"'category-<n>': {_few(self.unknown_categories)}"
            )
        if self.numeric_answers:
            out.append(f"{self.numeric_answers} numeric answers written as text")
        if self.adversarial_with_answer:
            out.append(
                f"{self.adversarial_with_answer} adversarial questions carry an 'answer' "
                "beside the 'adversarial_answer'; both kept"
            )
        if self.not_read:
            out.append(f"not read: {', '.join(sorted(self.not_read))} (generated annotations)")
        return out


def _few(items: list[str], n: int = 6) -> str:
    shown = ", ".join(items[:n])
    return shown + (f", ... ({len(items) - n} more)" if len(items) > n else "")


def _span(numbers: list[int]) -> str:
    ns = sorted(numbers)
    if len(ns) > 1 and ns == list(range(ns[0], ns[-1] + 1)):
        return f"session_{ns[0]} to session_{ns[-1]}"
    return ", ".join(f"session_{n}" for n in ns)


def _sniff(path: Path, head: bytes) -> bool:
    if not head_starts_with(head, "["):
        return False
    keys = head_keys(head)
    return "sample_id" in keys or {"qa", "evidence", "category"} <= keys or "speaker_a" in keys


def read_locomo(path: Path) -> Dataset:
    """Read a LoCoMo file (``locomo10.json``) into conversations and questions.

    Raises:
        DatasetError: the file is not LoCoMo's shape; the message names the sample and key.
    """
    raw = read_json(path)
    if not isinstance(raw, list):
        raise DatasetError(f"{path}: not LoCoMo: expected a JSON list of samples")
    tally = _Tally()
    conversations: list[Conversation] = []
    queries: list[Query] = []
    for i, sample in enumerate(raw):
        conv = _conversation(sample, i, path, tally)
        conversations.append(conv)
        known = {t.id for _, t in conv.turns()}
        queries.extend(_questions(sample, conv.id, known, f"{path}: [{i}]", tally))
    info = DatasetInfo(
        name=path.stem,
        language="en",
        source=f"LoCoMo JSON: {path.name}",
        licence=LICENCE,
        notes=tally.notes(len(queries)),
    )
    return Dataset(info=info, conversations=conversations, queries=queries)


def _conversation(sample: Any, i: int, path: Path, tally: _Tally) -> Conversation:
    where = f"{path}: [{i}]"
    if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
        raise DatasetError(f"{where}: expected an object with 'sample_id', 'conversation', 'qa'")
    if not sample.get("sample_id"):
        raise DatasetError(f"{where}.sample_id: missing")
    sid = str(sample["sample_id"])
    tally.not_read.update(k for k in _NOT_READ if k in sample)
    conv = sample["conversation"]
    speakers = [str(conv[k]) for k in ("speaker_a", "speaker_b") if conv.get(k)]
    numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION.match(k)))
    sessions = [_session(conv, n, sid, f"{where}.conversation", tally) for n in numbers]
    for key in conv:
        m = re.match(r"^session_(\d+)_date_time$", key)
        if m and f"session_{m.group(1)}" not in conv:
            tally.orphan_dates.setdefault(sid, []).append(int(m.group(1)))
    return Conversation(id=sid, speakers=speakers, sessions=sessions)


def _session(conv: dict[str, Any], n: int, sid: str, where: str, tally: _Tally) -> Session:
    key = f"session_{n}"
    turns_raw = conv[key]
    if not isinstance(turns_raw, list):
        raise DatasetError(f"{where}.{key}: expected a list of turns")
    date_text = conv.get(f"{key}_date_time")
    date = parse_locomo_date(date_text) if isinstance(date_text, str) else None
    meta: dict[str, Any] = {}
    if date is None and date_text is not None:
        meta["date"] = date_text
        tally.bad_dates.append(f"{sid} {key} {date_text!r}")
    turns = []
    for k, t in enumerate(turns_raw):
        if not isinstance(t, dict) or "dia_id" not in t or "text" not in t:
            raise DatasetError(f"{where}.{key}.{k}: expected a turn with 'dia_id' and 'text'")
        caption = t.get("blip_caption")
        turns.append(
            Turn(
                id=f"{sid}/{_canonical_dia_id(str(t['dia_id']))}",
                speaker=str(t.get("speaker") or ""),
                text=str(t["text"]),
                caption=str(caption) if caption else None,
                metadata={k2: v for k2, v in t.items() if k2 not in _TURN_OWN},
            )
        )
    return Session(id=key, date=date, turns=turns, metadata=meta)


def _canonical_dia_id(dia_id: str) -> str:
    m = _DIA_ID.match(dia_id.strip())
    return f"D{int(m.group(1))}:{int(m.group(2))}" if m else dia_id


def _questions(
    sample: dict[str, Any], sid: str, known: set[str], where: str, tally: _Tally
) -> Iterable[Query]:
    qa = sample.get("qa") or []
    if not isinstance(qa, list):
        raise DatasetError(f"{where}.qa: expected a list of questions")
    for n, q in enumerate(qa, 1):
        if not isinstance(q, dict) or not q.get("question"):
            raise DatasetError(f"{where}.qa.{n - 1}: expected an object with 'question'")
        code = q.get("category")
        qtype = LOCOMO_CATEGORIES.get(code) if isinstance(code, int) else None
        if qtype is None:
            qtype = f"category-{code}"
            tally.unknown_categories.append(f"{sid}/q{n:03d} {code!r}")
        raw_evidence = q.get("evidence") or []
        if not isinstance(raw_evidence, list):
            raw_evidence = [raw_evidence]
        ids = _evidence(raw_evidence, sid, known, tally)
        if not ids:
            tally.no_evidence += 1
            tally.empty_evidence += not raw_evidence
        meta: dict[str, Any] = {"category": code}
        if [f"{sid}/{e}" for e in raw_evidence] != ids:
            meta["evidence"] = raw_evidence
        meta.update({k: v for k, v in q.items() if k not in _QA_OWN})
        answer, adversarial = q.get("answer"), q.get("adversarial_answer")
        tally.numeric_answers += isinstance(answer, int | float) and not isinstance(answer, bool)
        tally.adversarial_with_answer += answer is not None and adversarial is not None
        yield Query(
            id=f"{sid}/q{n:03d}",
            text=str(q["question"]),
            type=qtype,
            conversation_id=sid,
            relevant_ids=ids,
            answer=None if answer is None else str(answer),
            adversarial_answer=None if adversarial is None else str(adversarial),
            metadata=meta,
        )


def _evidence(raw: list[Any], sid: str, known: set[str], tally: _Tally) -> list[str]:
    """Turn ids for a question's evidence; every repair and drop is tallied."""
    ids: list[str] = []
    for e in raw:
        tally.references += 1
        text = str(e).strip()
        m = _DIA_ID.match(text)
        if m:
            found = [f"D{int(m.group(1))}:{int(m.group(2))}"]
            if found[0] != text:
                tally.leading_zero.append(f"{sid} {text!r} -> {found[0]}")
        else:
            # "D8:6; D9:17", "D9:1 D4:4 D4:6", "D:11:26": split, and read each piece.
            pieces = [p for p in re.split(r"[;,\s]+", text.replace("(", "").replace(")", "")) if p]
            matches = [(p, _DIA_PIECE.match(p)) for p in pieces]
            found = [f"D{int(m.group(1))}:{int(m.group(2))}" for _, m in matches if m]
            if found:
                tally.repaired.append(f"{sid} {text!r}")
                tally.repaired_ids += len(found)
                bad = [p for p, m in matches if not m]
                tally.unusable.extend(f"{sid} {p!r} (in {text!r})" for p in bad)
            else:
                tally.unusable.append(f"{sid} {text!r}")
        for dia in found:
            tid = f"{sid}/{dia}"
            if tid not in known:
                tally.dangling.append(f"{sid} {dia}")
            elif tid in ids:
                tally.repeated.append(f"{sid} {dia}")
            else:
                ids.append(tid)
    return ids


LOCOMO = Reader(
    name="locomo",
    description="LoCoMo (snap-research, locomo10.json): conversations, QA with evidence",
    sniff=_sniff,
    read=read_locomo,
    order=30,
)
