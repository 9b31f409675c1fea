"""How each protocol writes the reader's prompt: the memories, their dates, the question.

A layout (:data:`mnemometer.protocols.LAYOUTS`) is the transcription of one harness's
prompt assembly; the protocol supplies its prompt texts and decoding. :func:`choose` picks
the turns the reader sees from a store's ranking, :func:`render` writes the chat messages,
:func:`finish` reads the reply back as the answer (LoCoMo's category-5 choice). The
``mnemometer`` layout is the reader every run had before protocols, unchanged.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

from mnemometer.datasets._models import Conversation, Query, Session
from mnemometer.llm import TokenCounter, counter_for
from mnemometer.protocols import ProtocolSpec
from mnemometer.suites.benchmarks import _pipeline as P

NOT_MENTIONED = "Not mentioned in the conversation"
"""LoCoMo's category-5 option that is right (gpt_utils.py; its F1 rule looks for it)."""


@dataclass
class ReaderCall:
    """The reader's request for one question, and what it showed.

    Attributes:
        messages: the chat messages.
        shown: the turns in the context (evidence recall reads them).
        context_tokens: the context's size in the reader model's tokens.
        choices: LoCoMo's category-5 options by letter, when the question became a choice.
    """

    messages: list[dict[str, str]]
    shown: list[P.TurnRef]
    context_tokens: int
    choices: dict[str, str] = field(default_factory=dict)


def depth(protocol: ProtocolSpec, top_k: int) -> int:
    """How deep to search for ``top_k`` memories (mem0's: ``top_k`` per speaker, two)."""
    return 2 * top_k if protocol.layout == "mem0" else top_k


def choose(
    protocol: ProtocolSpec,
    ranked: Sequence[P.TurnRef],
    top_k: int,
    budget: int | None,
    counter: TokenCounter | None = None,
) -> tuple[list[P.TurnRef], int]:
    """The turns the reader sees from a ranking (deduplicated), and how many the budget cut.

    Every layout keeps the store's rank order (LongMemEval's sorts by date when it
    writes); mem0's takes ``top_k`` per speaker.
    """
    if protocol.layout == "mem0":
        per: dict[str, int] = {}
        top = []
        for r in ranked:
            n = per.get(r.turn.speaker, 0)
            if n < top_k:
                per[r.turn.speaker] = n + 1
                top.append(r)
    else:
        top = list(ranked[:top_k])
    return P.select_context(top, budget, counter)


def date_text(style: str, session: Session) -> str:
    """A session's date in a protocol's style (the raw text when it could not be read)."""
    d = session.date
    if d is None:
        return str(session.metadata.get("date", "undated"))
    if style == "locomo":
        hour = d.hour % 12 or 12
        return f"{hour}:{d.minute:02d} {'am' if d.hour < 12 else 'pm'} on {d.day} {d:%B}, {d.year}"
    if style == "longmemeval":
        return d.strftime("%Y/%m/%d (%a) %H:%M")
    if style == "iso":
        return d.replace(tzinfo=UTC).isoformat()
    return P.render_date(d)


def _asked(q: Query) -> str:
    if q.asked_at is not None:
        return q.asked_at.strftime("%Y/%m/%d (%a) %H:%M")
    return str(q.metadata.get("question_date", ""))


def render(
    protocol: ProtocolSpec,
    q: Query,
    context: Sequence[P.TurnRef],
    conv: Conversation,
    count: Callable[[str], int] | None = None,
) -> ReaderCall:
    """The reader's messages for question ``q`` over ``context``.

    ``count`` counts the context's tokens (the reader model's tokenizer; by default the
    labelled estimate of four characters per token).
    """
    count = count or counter_for(None).count
    return _LAYOUTS[protocol.layout](protocol, q, list(context), conv, count)


def _mnemometer(
    protocol: ProtocolSpec,
    q: Query,
    context: list[P.TurnRef],
    conv: Conversation,
    count: Callable[[str], int],
) -> ReaderCall:
    prompt = P.reader_prompt(q.text, context, q.asked_at, protocol.text("prompt"))
    tokens = sum(count(r.line()) + 1 for r in context)
    return ReaderCall([{"role": protocol.role, "content": prompt}], context, tokens)


def _locomo(
    protocol: ProtocolSpec,
    q: Query,
    context: list[P.TurnRef],
    conv: Conversation,
    count: Callable[[str], int],
) -> ReaderCall:
    # get_rag_context (dialog mode): "DATE: Speaker said, \"text\"", one a line, rank order.
    lines = []
    for r in context:
        said = f'{r.turn.speaker} said, "{r.turn.text}"'
        if r.turn.caption:
            said += f" and shared {r.turn.caption}"
        lines.append(f"{date_text(protocol.dates, r.session)}: {said}")
    text = "\n".join(lines)
    category = q.metadata.get("category")
    question, template, choices = q.text, protocol.text("prompt"), {}
    if category == 2:
        question += protocol.text("suffix_cat2")
    elif category == 5:
        other = q.adversarial_answer or q.answer or ""
        first = hashlib.sha256(q.id.encode()).digest()[0] < 128
        choices = {"a": NOT_MENTIONED, "b": other} if first else {"a": other, "b": NOT_MENTIONED}
        question += protocol.text("choice_cat5").format(choices["a"], choices["b"])
        template = protocol.text("prompt_cat5")
    prompt = text + "\n\n" + template.format(question)
    messages = [{"role": protocol.role, "content": prompt}]
    return ReaderCall(messages, context, count(text), choices)


_JINJA = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def mem0_fields(
    protocol: ProtocolSpec, q: Query, context: Sequence[P.TurnRef], conv: Conversation
) -> dict[str, str]:
    """The fields of mem0's ANSWER_PROMPT (search.py), by name.

    Each speaker's memories, written ``timestamp: memory``, as ``json.dumps(indent=4)``;
    the speakers' names; the question.
    """
    values: dict[str, str] = {"question": q.text}
    for n, who in enumerate((list(conv.speakers) + ["", ""])[:2], start=1):
        lines = [
            f"{date_text(protocol.dates, r.session)}: {r.turn.memory_text()}"
            for r in context
            if r.turn.speaker == who
        ]
        values[f"speaker_{n}_user_id"] = who
        values[f"speaker_{n}_memories"] = json.dumps(lines, indent=4)
    return values


def _mem0(
    protocol: ProtocolSpec,
    q: Query,
    context: list[P.TurnRef],
    conv: Conversation,
    count: Callable[[str], int],
) -> ReaderCall:
    values = mem0_fields(protocol, q, context, conv)
    # The prompt is a Jinja template with plain {{name}} fields only: rendered the same.
    prompt = _JINJA.sub(lambda m: values.get(m.group(1), ""), protocol.text("prompt"))
    speakers = (values["speaker_1_user_id"], values["speaker_2_user_id"])
    shown = [r for r in context if r.turn.speaker in speakers]
    size = sum(count(values[f"speaker_{n}_memories"]) for n in (1, 2))
    return ReaderCall([{"role": protocol.role, "content": prompt}], shown, size)


def _zep(
    protocol: ProtocolSpec,
    q: Query,
    context: list[P.TurnRef],
    conv: Conversation,
    count: Callable[[str], int],
) -> ReaderCall:
    # zep_locomo_search.py's facts, each turn as zep_locomo_ingestion.py sent it.
    facts = [
        f"  - {r.turn.speaker}: {r.turn.text} (event_time: {date_text(protocol.dates, r.session)})"
        for r in context
    ]
    text = protocol.text("context").format(facts="\n".join(facts), entities="")
    prompt = protocol.text("prompt").format(context=text, question=q.text)
    messages = [
        {"role": "system", "content": protocol.text("system")},
        {"role": protocol.role, "content": prompt},
    ]
    return ReaderCall(messages, context, count("\n".join(facts)))


def _longmemeval(
    protocol: ProtocolSpec,
    q: Query,
    context: list[P.TurnRef],
    conv: Conversation,
    count: Callable[[str], int],
) -> ReaderCall:
    # run_generation.py, flat-turn: each hit with the turn after it (a round), sorted by
    # date, each round as JSON under "### Session N:".
    chunks: list[tuple[str, list[dict[str, Any]]]] = []
    shown: list[P.TurnRef] = []
    for r in context:
        turns = r.session.turns
        at = next(i for i, t in enumerate(turns) if t.id == r.turn.id)
        round_ = turns[at : at + 2]
        shown += [P.TurnRef(r.session, t) for t in round_]
        entry = [{"role": t.speaker, "content": t.text} for t in round_]
        chunks.append((date_text(protocol.dates, r.session), entry))
    chunks.sort(key=lambda c: c[0])
    history = ""
    for i, (day, entry) in enumerate(chunks):
        history += f"\n### Session {i + 1}:\nSession Date: {day}\nSession Content:\n\n{json.dumps(entry)}\n"
    prompt = protocol.text("prompt").format(history, _asked(q), q.text)
    return ReaderCall([{"role": protocol.role, "content": prompt}], shown, count(history))


_LAYOUTS = {
    "mnemometer": _mnemometer,
    "locomo-rag": _locomo,
    "mem0": _mem0,
    "zep": _zep,
    "longmemeval": _longmemeval,
}


def finish(call: ReaderCall, reply: str) -> str:
    """The answer a reply gives (LoCoMo's get_cat_5_answer for a category-5 choice)."""
    if not call.choices:
        return reply.strip()
    text = reply.strip().lower()
    if len(text) == 1:
        return call.choices["a" if "a" in text else "b"]
    if len(text) == 3:
        return call.choices["a" if "(a)" in text else "b"]
    return text
