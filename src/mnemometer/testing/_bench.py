"""A deterministic reader and judge for benchmark plumbing (``python -m mnemometer.testing``).

As a **reader** it echoes the context lines the prompt gives (``- ...``), joined by ``; ``:
a perfect reader of whatever was retrieved, so a run measures the memory alone.

As a **judge** (a request whose ``response_format`` carries a JSON schema with one enum
property) it answers with a label of that enum, by fixed rules over the prompt's question,
gold answer and response, so the whole judge path (pinning, raw replies, parsing, caching,
agreement) runs without a model. The rules mimic the judge families' documented stances,
never their quality:

* abstention prompts ("unanswerable"): correct when the response says the information is
  not there;
* lenient prompts ("generous"): correct when at least half of the gold answer's tokens
  occur in the response (same topic);
* strict prompts ("strict grader"): correct when every gold token occurs, the response is
  at most twice the gold's length plus six tokens (no lists of candidates) and it has no
  negation;
* any other (LongMemEval's, Letta's rubric): correct when every gold token occurs.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mnemometer.scoring.qa import answer_tokens
from mnemometer.testing.llm_server import echo_memories, last_user_message

_GOLD = re.compile(
    r"^(?:Gold answer|Correct Answer|Gold target|Rubric|Explanation):\s*(.*?)\s*$", re.M
)
_RESPONSE = re.compile(
    r"^(?:Generated answer|Model Response|Predicted answer|Response):\s*(.*?)\s*$", re.M
)
_NEGATION = {"not", "no", "never", "didnt", "doesnt", "isnt", "wasnt", "nt", "none", "neither"}
_ABSENT = ("not mentioned", "no information", "don't know", "do not know", "unanswerable")


def _verdict(prompt: str) -> bool:
    # The last of each: a prompt's worked examples come before the case itself.
    golds, responses = _GOLD.findall(prompt), _RESPONSE.findall(prompt)
    gold = golds[-1] if golds else ""
    response = responses[-1] if responses else ""
    if "unanswerable question" in prompt:
        return any(p in response.lower() for p in _ABSENT)
    want, have = answer_tokens(gold), answer_tokens(response)
    if not want:
        return False
    found = sum(t in set(have) for t in want)
    if "generous" in prompt:
        return found * 2 >= len(want)
    if found < len(want):
        return False
    if "strict grader" in prompt:
        words = set(re.findall(r"[a-z]+", response.lower().replace("'", "")))
        return len(have) <= 2 * len(want) + 6 and not (words & _NEGATION)
    return True


def _verdict_enum(body: dict[str, Any]) -> tuple[str, list[Any]] | None:
    fmt = body.get("response_format") or {}
    schema = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema")
    props = (schema or {}).get("properties") or {}
    enum = [(k, v["enum"]) for k, v in props.items() if isinstance(v, dict) and v.get("enum")]
    return enum[0] if enum else None


def is_judge_request(body: dict[str, Any]) -> bool:
    """A request whose response schema has a property with an ``enum`` (a judge's verdict).

    ``python -m mnemometer.testing`` routes these to :func:`benchmark_reply` ahead of its
    structured-output mode, which would otherwise answer with the enum's first label (a
    judge that says CORRECT to everything).
    """
    return _verdict_enum(body) is not None


def benchmark_reply(body: dict[str, Any]) -> str:
    """The fake server's reply: a judge's JSON verdict, or the reader's echo of the context."""
    enum = _verdict_enum(body)
    if enum is None:
        return echo_memories(body)
    key, labels = enum
    ok = _verdict(last_user_message(body))
    return json.dumps({key: labels[0] if ok else labels[-1]})
