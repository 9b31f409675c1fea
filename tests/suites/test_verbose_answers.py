"""Verbose answers are visible: the reader's cap holds, and a run says when answers hit it.

The audit's shotgun reader answered every question with every 1-3-word phrase of its
context (median 1,525 words, the 64-token cap not enforced) and got LoCoMo multi-hop F1
50.9. The official scorer agrees on such a list, so the rule stays; the cap is what changed.
"""

from __future__ import annotations

import math
from pathlib import Path

from benchmark_helpers import MINI

import mnemometer
from mnemometer.llm import counter_for, resolve_settings
from mnemometer.log import read_items
from mnemometer.runner import RunSettings
from mnemometer.suites.benchmarks._pipeline import READER_MAX_TOKENS
from mnemometer.testing import FakeLLMServer
from mnemometer.testing.llm_server import echo_memories


def shotgun(body: dict) -> str:
    """Every 1-, 2- and 3-word phrase of the context the reader was given."""
    words = echo_memories(body).split()
    return "; ".join(" ".join(words[i : i + n]) for n in (1, 2, 3) for i in range(len(words)))


def test_a_shotgun_reader_is_cut_to_the_cap_and_the_run_says_so(tmp_path: Path):
    with FakeLLMServer(default=shotgun) as srv:
        r = mnemometer.run(
            "longmemeval",
            "bm25",
            dataset=str(MINI),
            out=tmp_path / "r",
            settings=RunSettings(llm=resolve_settings(srv.base_url, srv.model)),
        )
    items = read_items(r.path)
    long = [i for i in items if i.extra["answer_tokens"] > READER_MAX_TOKENS]
    assert len(long) == 3  # the abstention question's context is empty: a short answer
    assert all(i.extra.get("answer_cut") for i in long)
    assert all(math.ceil(len(i.output) / 4) <= READER_MAX_TOKENS for i in items)
    overall = {(m.name, m.percentile): m.value for m in r.summary.overall}
    assert overall[("answers_cut", None)] == 0.75
    assert overall[("answer_tokens", 50.0)] > READER_MAX_TOKENS
    assert any(n.startswith("VERBOSE ANSWERS: 3 of 4") for n in r.summary.notes)


def test_the_cap_cuts_at_a_word_and_leaves_short_answers_alone():
    cap_answer = counter_for("fake-llm").cut  # no tokenizer: the 4-characters estimate
    assert cap_answer("Paris", 64) == ("Paris", 2, False)
    text = " ".join(f"w{i:03d}" for i in range(200))  # 999 characters: 250 tokens
    cut, tokens, was_cut = cap_answer(text, 64)
    assert was_cut and tokens == 250 and text.startswith(cut)
    assert math.ceil(len(cut) / 4) <= 64 < math.ceil((len(cut) + 5) / 4)
