"""A deterministic stand-in for a model that keeps its own memory blocks (Letta, MemGPT).

:func:`remember` is a tool rule: every statement the user makes is appended to a memory
block with ``memory_insert``. :func:`recall` is a reply: a question is answered with the
lines of that block, read from the system message the agent sent, that share a word with
the question; a statement gets "Noted.". Together they make a perfect but literal
memory-keeper: what it answers after a session break is exactly what its memory block
holds, so a scenario run measures the agent's memory plumbing, not a model.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from mnemometer.testing._schema import stop_words
from mnemometer.testing._tools import ToolCall, ToolRule, message_text, user_turn

_QUESTION_WORDS = frozenset(
    "what which who whom whose when where why how do does did is are am can could would will "
    "should list tell name recall remind".split()
)


_EMPTY_FIELD = re.compile(r"^\s*[\w ]+:\s*$")  # a template line such as "Name:"


def is_question(text: str) -> bool:
    """A message that asks: it ends with "?" or starts with a question word."""
    words = re.findall(r"[\w']+", text.lower())
    return text.rstrip().endswith("?") or bool(words and words[0] in _QUESTION_WORDS)


def memory_block(body: dict[str, Any], label: str = "human") -> str:
    """The value of memory block ``label`` in the request's system message ("" if absent).

    Letta renders each block as ``<label>`` ... ``<value>`` lines ``</value>``.
    """
    for m in body.get("messages") or []:
        if m.get("role") != "system":
            continue
        found = re.search(
            rf"<{re.escape(label)}>.*?<value>\n?(.*?)\n?</value>", message_text(m), re.S
        )
        if found:
            return found.group(1)
    return ""


def _words(text: str) -> set[str]:
    stop = stop_words()
    return {w.rstrip("s") for w in re.findall(r"[\w'@.-]+", text.lower()) if w not in stop}


def remember(label: str = "human", tool: str = "memory_insert") -> ToolRule:
    """A tool rule: insert every statement (not a question) into block ``label``."""

    def statement(body: dict[str, Any]) -> bool:
        text = user_turn(body)[0]
        return bool(text.strip()) and not is_question(text)

    def arguments(body: dict[str, Any]) -> dict[str, Any]:
        return {"label": label, "new_string": user_turn(body)[0].strip()}

    return ToolRule(statement, [ToolCall(tool, arguments)])


def recall(label: str = "human", unknown: str = "I don't know.") -> Callable[[dict[str, Any]], str]:
    """A reply: the lines of block ``label`` sharing a word with the question.

    Statements get "Noted."; a question nothing in the block matches gets ``unknown``.
    """

    def reply(body: dict[str, Any]) -> str:
        question = user_turn(body)[0]
        if not is_question(question):
            return "Noted."
        wanted = _words(question)
        lines = [
            ln.strip()
            for ln in memory_block(body, label).splitlines()
            if ln.strip() and not _EMPTY_FIELD.match(ln) and _words(ln) & wanted
        ]
        return " ".join(lines) if lines else unknown

    return reply
