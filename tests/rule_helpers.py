"""A hand-built LoCoMo conversation, one ranking per question, and each peer rule's value on
it worked out by hand from the peer's code (the golden test of ``mnemometer.scoring.rules``).

The conversation (``tiny``, our own words, not LoCoMo's) has three sessions::

    session_1: D1:1 D1:2 D1:3
    session_2: D2:1 D2:2 D2:3 D2:4
    session_3: D3:1 D3:2

A scripted store returns each question's ranking below, so the real LoCoMo suite records it
exactly, and the same ranking can go through the peers' own functions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import mnemometer
from mnemometer.llm import resolve_settings
from mnemometer.runner import RunResult, RunSettings
from mnemometer.stores import register_store, unregister_store
from mnemometer.testing import FakeLLMServer
from mnemometer.testing._bench import benchmark_reply

TEXTS = {
    "D1:1": "Hi Bob, long time no see.",
    "D1:2": "I swam in the lake last weekend.",
    "D1:3": "See you soon.",
    "D2:1": "How was your trip?",
    "D2:2": "It was long but fun.",
    "D2:3": "We went to Paris in June.",
    "D2:4": "The food was great.",
    "D3:1": "I started painting again.",
    "D3:2": "My sister moved to Lisbon.",
}
ALL = ["D2:1", "D1:1", "D1:2", "D2:2", "D3:2", "D3:1", "D2:3", "D2:4", "D1:3"]
SPREAD = ["D2:1", "D2:2", "D2:3", "D2:4", "D1:1", "D1:2", "D3:2", "D1:3", "D3:1"]
SHORT = ["D3:1", "D1:2", "D2:1"]

QUESTIONS: list[dict[str, Any]] = [
    # A: evidence in sessions 1 and 3; D1:2 third, D3:1 sixth.
    {
        "question": "Where did Ann swim?",
        "answer": "lake",
        "evidence": ["D1:2", "D3:1"],
        "category": 1,
        "ranking": ALL,
    },
    # B: evidence D3:2 only; the first five hits are sessions 2 and 1, D3:2 is seventh.
    {
        "question": "Where did the sister move?",
        "answer": "Berlin",
        "evidence": ["D3:2"],
        "category": 4,
        "ranking": SPREAD,
    },
    # C: no evidence at all; the gold answer is in D2:3, seventh.
    {
        "question": "Which city in June?",
        "answer": "Paris",
        "evidence": [],
        "category": 2,
        "ranking": ALL,
    },
    # D: adversarial (category 5); evidence D1:1, second.
    {
        "question": "What did Bob paint?",
        "adversarial_answer": "nothing",
        "evidence": ["D1:1"],
        "category": 5,
        "ranking": ALL,
    },
    # E: a ranking of three hits, both evidence turns among them.
    {
        "question": "What did Ann do in the lake?",
        "answer": "swam",
        "evidence": ["D1:2", "D3:1"],
        "category": 4,
        "ranking": SHORT,
    },
]

KS = (1, 2, 5)
TABLE = """
rule               A        B        C        D        E          (k = 1 2 5 [10])
turn-any           0 0 1    0 0 0    - - -    0 1 1    1 1 1
turn-all           0 0 0    0 0 0    - - -    0 1 1    0 1 1
turn-fraction      0 0 .5 1 0 0 0 1  - - - -  - - - -  .5 1 1 1
raw-any            0 0 1    0 0 0    0 0 0    0 1 1    1 1 1
raw-strict         0 0 0    0 0 0    0 0 0    0 1 1    0 1 1
sess-any           0 1 1    0 0 0    0 0 0    0 1 1    1 1 1
sess-strict        0 0 1    0 0 0    0 0 0    0 1 1    0 1 1
session-hit        0 1 1    0 0 0    - - -    0 1 1    1 1 1
distinct-session   0 1 1    0 0 1    - - -    0 1 1    1 1 1
answer-in-context  0 0 1 1  0 0 0 0  0 0 0 1  - - - -  0 1 1 1
"""
"""Each rule at k = 1, 2, 5 (answer-in-context also at 10), question by question; ``-``: the
rule gives the question no value. Worked out from the peers' code:

* turn-any / turn-all (LongMemEval's recall_any / recall_all): evidence turns among the top
  k ids; a question without evidence (C) has no value.
* turn-fraction (genome-memory ``len(top k & ev) / len(ev)``, categories 1-4): A finds
  D1:2 of its two evidence turns by k=5 and D3:1 by k=10, B its one at k=10 (seventh),
  E D3:1 at k=1 and both at k=2; D is category 5.
* raw-any / raw-strict (infolang-bench ``cumulative_scores`` over raw ids): the same hits,
  but C's empty evidence scores 0.0 (its ``if evidence: ... else: out[...] = 0.0``).
* sess-any / sess-strict (session-expanded keys: a hit stands for its whole session). A's
  top sessions are 2 | 2,1 | 2,1,1,2,3: any from k=2, strict (sessions 1 and 3) at k=5.
* session-hit (memory-core-eval ``set(sids[:k]) & evidence``): C has no evidence session,
  so its LoCoMo loader drops it; category 5 (D) counts.
* distinct-session (engram-search: the first 10 hits' sessions, first appearances kept):
  A and D give 2,1,3; B gives 2,1,3 too (D3:2 is the seventh hit, but session 3 is the
  third distinct session), so B scores at k=5 where every other rule says 0.
* answer-in-context (benchd-harness: the lower-cased gold in the joined texts of the top k;
  category 5 dropped): A "lake" (D1:2, third), B "Berlin" (nowhere), C "Paris" (D2:3,
  seventh), E "swam" (D1:2, second).
"""


def _expected() -> dict[str, dict[str, tuple[float | None, ...]]]:
    out: dict[str, dict[str, tuple[float | None, ...]]] = {}
    for line in TABLE.strip().splitlines()[1:]:
        rule, *cells = line.split()
        width = len(cells) // 5
        values = [None if c == "-" else float(c) for c in cells]
        out[rule] = {q: tuple(values[i * width : (i + 1) * width]) for i, q in enumerate("ABCDE")}
    return out


EXPECTED = _expected()
LETTERS = "ABCDE"


def sample() -> dict[str, Any]:
    """The conversation in LoCoMo's file format (one sample)."""
    conv: dict[str, Any] = {"speaker_a": "Ann", "speaker_b": "Bob"}
    for n, day in ((1, 8), (2, 9), (3, 10)):
        conv[f"session_{n}_date_time"] = f"1:00 pm on {day} May, 2023"
        conv[f"session_{n}"] = [
            {"speaker": "Ann" if int(d.split(":")[1]) % 2 else "Bob", "dia_id": d, "text": t}
            for d, t in TEXTS.items()
            if d.startswith(f"D{n}:")
        ]
    qa = [{k: v for k, v in q.items() if k != "ranking"} for q in QUESTIONS]
    return {"sample_id": "tiny", "conversation": conv, "qa": qa}


def write_file(directory: Path) -> Path:
    """``locomo10.json`` (the name every harness reads) holding the conversation."""
    path = directory / "locomo10.json"
    path.write_text(json.dumps([sample()]), encoding="utf-8")
    return path


def session_of(dia: str) -> str:
    """``D2:3`` -> ``session_2`` (mnemometer's LoCoMo session id)."""
    return f"session_{dia[1:].split(':')[0]}"


class ScriptedStore:
    """A store that answers each question with its ranking above (and knows nothing else)."""

    rankings: ClassVar[dict[str, list[str]]] = {q["question"]: q["ranking"] for q in QUESTIONS}

    def __init__(self) -> None:
        self.ids: list[str] = []

    def reset(self) -> None:
        self.ids = []

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        self.ids.append(metadata["memory_id"])

    def search(self, query: str, top_k: int) -> list[dict[str, Any]]:
        ranking = [f"tiny/{d}" for d in self.rankings[query]][:top_k]
        return [{"memory_id": m, "score": 10.0 - r} for r, m in enumerate(ranking)]


def run_locomo(dataset: Path, out: Path, store: str = "scripted", seed: int = 0) -> RunResult:
    """The LoCoMo suite on ``dataset`` with ``store`` (the scripted one by default), read by
    the test LLM server."""
    if store == "scripted":
        register_store("scripted", ScriptedStore)
    try:
        with FakeLLMServer(default=benchmark_reply) as srv:
            return mnemometer.run(
                "locomo",
                store,
                suite_options={"dataset": str(dataset)},
                out=out,
                settings=RunSettings(llm=resolve_settings(srv.base_url, srv.model), seed=seed),
            )
    finally:
        if store == "scripted":
            unregister_store("scripted")
