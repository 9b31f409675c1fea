"""The phases of one conversation: ingest, search, answer (one shared reader), evaluate.

Everything a system is given and everything the reader sees is built here, the same for
every system: a store receives each turn as ``Speaker: text`` with its turn id as
``memory_id`` and its session date as ``timestamp``; the reader receives the retrieved turns
(at most ``top_k``, within the token budget) in the store's rank order, each with its
session date.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from mnemometer import deadline
from mnemometer.datasets._models import Conversation, Session, Turn
from mnemometer.llm import TokenCounter, counter_for
from mnemometer.stores._protocol import BatchStore, Flushable, Hit, IngestCosted

READER_PROMPT = """Answer the question using the excerpts of a conversation below (most relevant first, each with the date of its session).

Excerpts:
{context}

{today}Question: {question}
Answer in a short phrase, with the exact words of the excerpts where you can. If the excerpts do not say, answer "Not mentioned in the conversation"."""
"""The one reader prompt every system's retrieved context is answered with."""

READER_MAX_TOKENS = 64
"""The reader's answer cap, in the reader model's tokens (:meth:`TokenCounter.cut`)."""

READER_SHA256 = hashlib.sha256(
    f"{READER_PROMPT}\nmax_tokens={READER_MAX_TOKENS}\ntemperature=0".encode()
).hexdigest()
"""Pins the reader: its prompt, token cap and temperature."""

BASELINES = ("full-context", "no-memory", "oracle")
"""Contexts that need no memory system: the whole conversation (newest turns that fit the
budget), nothing, or exactly the evidence turns."""


def render_date(d: datetime | None) -> str:
    """``8 May 2023`` (``undated`` when unknown)."""
    return f"{d.day} {d:%B %Y}" if d is not None else "undated"


@dataclass(frozen=True, slots=True)
class TurnRef:
    """A turn with the session it belongs to."""

    session: Session
    turn: Turn

    def line(self) -> str:
        """How the reader sees it: ``- [8 May 2023] Caroline: text``."""
        return f"- [{render_date(self.session.date)}] {self.turn.memory_text()}"


class TurnIndex(dict[str, TurnRef]):
    """Turn id -> the turn and its session, in conversation order.

    Also the facts of the conversation that every question's session-level metrics need,
    computed at the first question instead of at each.
    """

    @cached_property
    def session_of(self) -> dict[str, str]:
        """Turn id -> its session's id."""
        return {tid: ref.session.id for tid, ref in self.items()}

    @cached_property
    def session_sizes(self) -> Counter[str]:
        """Session id -> how many of the turns belong to it."""
        return Counter(self.session_of.values())


def turn_index(conv: Conversation) -> TurnIndex:
    """Turn id -> the turn and its session, in conversation order."""
    return TurnIndex((t.id, TurnRef(s, t)) for s, t in conv.turns())


# ---- ingest ---------------------------------------------------------------------------


def ingest_store(store: Any, conv: Conversation) -> float:
    """Give a fresh store every turn of ``conv``; return the milliseconds it took."""
    t0 = time.perf_counter()
    store.reset()
    batch: list[tuple[str, dict[str, Any]]] = []
    for s, t in conv.turns():
        meta: dict[str, Any] = {"memory_id": t.id, "speaker": t.speaker, "session": s.id}
        if s.date is not None:
            meta["timestamp"] = s.date.isoformat()
        batch.append((t.memory_text(), meta))
    if isinstance(store, BatchStore):
        store.store_many(batch)
    else:
        for text, meta in batch:
            deadline.check()  # an abandoned item stops here, not after every turn
            store.store(text, meta)
    if isinstance(store, Flushable):
        store.flush()
    return (time.perf_counter() - t0) * 1000.0


def ingest_agent(agent: Any, conv: Conversation) -> float:
    """Tell an agent the conversation, session by session; return the milliseconds.

    An agent that can ``observe(text, metadata)`` is given each turn without answering;
    any other agent gets each turn as a user message (``[date] Speaker: text``) in a new
    session per conversation session, and its replies are discarded.
    """
    t0 = time.perf_counter()
    observe = getattr(agent, "observe", None)
    for s in conv.sessions:
        if not callable(observe):
            agent.start_session(None)
        for t in s.turns:
            deadline.check()
            text = f"[{render_date(s.date)}] {t.memory_text()}"
            if callable(observe):
                observe(text, {"memory_id": t.id, "speaker": t.speaker, "session": s.id})
            else:
                agent.send(text)
    return (time.perf_counter() - t0) * 1000.0


def ingested(live: Any, memories: int) -> dict[str, Any]:
    """What storing the conversation took: its memories, and a metered store's LLM calls."""
    out: dict[str, Any] = {"ingest_memories": memories}
    if isinstance(live, IngestCosted):
        costs = list(live.ingest_costs())
        out["ingest_llm"] = {
            "calls": sum(c.llm_calls for c in costs),
            "prompt_tokens": sum(c.prompt_tokens for c in costs),
            "completion_tokens": sum(c.completion_tokens for c in costs),
            "seconds": sum(c.llm_seconds for c in costs),
        }
    return out


def check_counter(run_dir: Path, reader: Any) -> None:
    """A resumed run counts the reader's tokens as it started: its budget selects the same turns.

    Raises:
        MnemometerError: the header pinned another counter for the reader's model (the
            tokenizer files were installed or removed since).
    """
    from mnemometer.errors import MnemometerError
    from mnemometer.log._reader import read_header

    cost = read_header(run_dir).cost
    pinned = cost.models.get(reader.model) if cost is not None else None
    now = reader.counter.name
    if pinned is not None and pinned.tokenizer.split(" (")[0] != now:
        raise MnemometerError(
            f"the reader's tokens were counted by {pinned.tokenizer.split(' (')[0]} when this "
            f"run started and would be by {now} now (pip install 'mnemometer[cost]' adds the "
            "tokenizers): its context budget would choose other turns; restore that "
            "environment or start a new run"
        )


# ---- search ---------------------------------------------------------------------------


def search(store: Any, question: str, depth: int) -> tuple[list[Hit], float]:
    """The store's hits (at most ``depth``) and the call's milliseconds."""
    t0 = time.perf_counter()
    raw = store.search(question, depth)
    ms = (time.perf_counter() - t0) * 1000.0
    return [Hit.coerce(h) for h in raw][:depth], ms


def _dcg(relevances: Sequence[int], k: int) -> float:
    """LongMemEval's DCG: the first gain undiscounted, the i-th (0-based) over log2(i + 1)."""
    rel = list(relevances)[:k]
    if not rel:
        return 0.0
    return rel[0] + sum(r / math.log2(i + 1) for i, r in enumerate(rel[1:], start=1))


def _ndcg(ranked_rel: Sequence[int], n_relevant: int, k: int) -> float:
    ideal = _dcg([1] * n_relevant, k)
    return _dcg(ranked_rel, k) / ideal if ideal else 0.0


def retrieval_values(
    ranking: Sequence[str],
    evidence: Sequence[str],
    turns: dict[str, TurnRef],
    turn_ks: Sequence[int],
    session_ks: Sequence[int],
) -> list[dict[str, Any]]:
    """LongMemEval's retrieval metrics at turn and at session level, as plain metric dicts.

    Turn level at each k: ``recall_any`` (some evidence turn in the top k), ``recall_all``
    (every one), ``ndcg_any`` (binary relevance, LongMemEval's DCG). Session level: turns
    map to their sessions and k grows ("effective k") until the top turns cover k distinct
    sessions or the ranking ends; relevance is "the turn's session holds evidence".
    """
    ev = set(evidence)
    out: list[dict[str, Any]] = []
    rel = [1 if t in ev else 0 for t in ranking]
    for k in turn_ks:
        top = set(ranking[:k])
        out += [
            {"name": "recall_any", "k": k, "value": float(any(e in top for e in ev))},
            {"name": "recall_all", "k": k, "value": float(all(e in top for e in ev))},
            {"name": "ndcg_any", "k": k, "value": _ndcg(rel, len(ev), k)},
        ]
    index = turns if isinstance(turns, TurnIndex) else TurnIndex(turns)
    sess_of = index.session_of
    gold = {sess_of[e] for e in ev if e in sess_of}
    ranked_sessions = [sess_of.get(t, t) for t in ranking]
    srel = [1 if s in gold else 0 for s in ranked_sessions]
    in_gold = sum(index.session_sizes[s] for s in gold)  # turns whose session holds evidence
    for k in session_ks:
        eff = k
        while eff <= len(ranked_sessions) and len(set(ranked_sessions[:eff])) < k:
            eff += 1
        top = set(ranked_sessions[:eff])
        out += [
            {"name": "session_recall_any", "k": k, "value": float(any(g in top for g in gold))},
            {"name": "session_recall_all", "k": k, "value": float(all(g in top for g in gold))},
            {"name": "session_ndcg_any", "k": k, "value": _ndcg(srel, in_gold, eff)},
        ]
    return out


# ---- answer ---------------------------------------------------------------------------


def select_context(
    refs: Sequence[TurnRef],
    budget: int | None,
    counter: TokenCounter | None = None,
    *,
    newest_first: bool = False,
) -> tuple[list[TurnRef], int]:
    """The turns that fit ``budget`` tokens (in the given priority), in the order given.

    Tokens are the reader model's (``counter``: its tokenizer, or the estimate of four
    characters per token), one more per line for its newline. Returns the chosen turns
    and how many were dropped for the budget (``None``: no budget, every turn).
    """
    if budget is None:
        return list(refs), 0
    count = (counter or counter_for(None)).count
    order = list(reversed(refs)) if newest_first else list(refs)
    chosen: list[TurnRef] = []
    used = 0
    for r in order:
        cost = count(r.line()) + 1
        if used + cost > budget:
            continue
        chosen.append(r)
        used += cost
    position = {id(r): i for i, r in enumerate(refs)}
    chosen.sort(key=lambda r: position[id(r)])
    return chosen, len(refs) - len(chosen)


def reader_prompt(
    question: str,
    context: Sequence[TurnRef],
    today: datetime | None,
    template: str = READER_PROMPT,
) -> str:
    """The reader's prompt for one question over ``context`` (mnemometer's layout)."""
    lines = "\n".join(r.line() for r in context) if context else "(none)"
    day = f"Today is {render_date(today)}.\n" if today is not None else ""
    return template.format(context=lines, today=day, question=question)
