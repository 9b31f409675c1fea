"""Protocols as pinned records: shipped as data, hashed like judges, prompts read from a copy.

The quoted prompts are checked against the SHA-256 of the upstream text at the pinned
commit (computed from the peer's file when the protocol was written); the unshipped ones
(LoCoMo's CC BY-NC code, zep-papers' CC BY-NC-SA) are read here from stand-in files of the
same shape, written below in our own words: the real text never enters this repository.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from mnemometer.errors import MnemometerError, UnknownNameError
from mnemometer.protocols import PROTOCOL_NAMES, get_protocol, protocols
from mnemometer.protocols._upstream import Place, extract, sha256_text
from mnemometer.scoring.judges import LENIENT_PROMPT
from mnemometer.suites.benchmarks import READER_PROMPT, READER_SHA256

# Same shape as LoCoMo's task_eval/gpt_utils.py, none of its words.
GPT_UTILS = '''
QA_PROMPT = """
STAND-IN QA PROMPT. Question: {} Short answer:
"""

QA_PROMPT_CAT_5 = """
STAND-IN CATEGORY-5 PROMPT. Question: {} Short answer:
"""


def get_gpt_answers(in_data, out_data, prediction_key, args):
    for qa in in_data["qa"]:
        if qa['category'] == 2:
            questions.append(qa['question'] + ' STAND-IN DATE HINT.')
        elif qa['category'] == 5:
            question = qa['question'] + " STAND-IN CHOICE: (a) {} (b) {}. "
'''

# Same shape as zep-papers' locomo_eval scripts, none of their words.
ZEP_RESPONSES = '''
async def locomo_response(llm_client, context: str, question: str) -> str:
    system_prompt = """
        STAND-IN ZEP SYSTEM PROMPT.
        """
    prompt = f"""
    STAND-IN ZEP PROMPT {{literal}}.
    Context:
    {context}
    Question: {question}
    Answer:
    """
'''
ZEP_SEARCH = '''
TEMPLATE = """
STAND-IN FACTS:
{facts}
STAND-IN ENTITIES:
{entities}
"""
'''
ZEP_EVAL = '''
async def locomo_grader(llm_client, question: str, gold_answer: str, response: str) -> bool:
    system_prompt = """
        STAND-IN GRADER SYSTEM PROMPT.
        """
    ACCURACY_PROMPT = f"""
    STAND-IN GRADER. Question: {question}
    Gold answer: {gold_answer}
    Generated answer: {response}
    """
'''


def locomo_checkout(root: Path) -> Path:
    """A stand-in LoCoMo checkout: ``task_eval/gpt_utils.py`` beside ``data/``."""
    (root / "task_eval").mkdir(parents=True)
    (root / "task_eval" / "gpt_utils.py").write_text(GPT_UTILS, encoding="utf-8")
    return root


def zep_checkout(root: Path) -> Path:
    """A stand-in zep-papers checkout with the three locomo_eval scripts."""
    d = root / "kg_architecture_agent_memory" / "locomo_eval"
    d.mkdir(parents=True)
    for name, text in (
        ("zep_locomo_responses.py", ZEP_RESPONSES),
        ("zep_locomo_search.py", ZEP_SEARCH),
        ("zep_locomo_eval.py", ZEP_EVAL),
    ):
        (d / name).write_text(text, encoding="utf-8")
    return root


def test_at_least_five_protocols_ship_each_with_its_sources():
    ps = protocols()
    assert [p.name for p in ps] == list(PROTOCOL_NAMES) and len(ps) >= 5
    for p in ps:
        assert p.title and p.layout and p.top_k >= 1
        if p.name == "mnemometer":
            assert p.sources == ()  # its own
            continue
        assert p.sources and p.notes
        for s in p.sources:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+", s.repository)
            assert re.fullmatch(r"[0-9a-f]{40}", s.commit) and s.path and s.licence
        # Quoted exactly when the licence allows: MIT and Apache-2.0 ship, NC ones do not.
        assert all(s.quoted == (s.licence in ("MIT", "Apache-2.0")) for s in p.sources)


def test_every_shipped_prompt_is_the_upstream_text_at_the_pinned_commit():
    for p in protocols():
        for slot, t in p.texts.items():
            if p.shipped(slot):
                assert t.text is not None and sha256_text(t.text) == t.sha256, (p.name, slot)
                assert t.verbatim
            else:
                assert t.text is None and t.place, (p.name, slot)  # read from your copy
    assert get_protocol("mem0").verbatim and get_protocol("locomo-official").verbatim is None


def test_the_default_protocol_is_todays_reader():
    p = get_protocol("mnemometer")
    assert p.text("prompt") == READER_PROMPT
    assert p.reader_sha256 == READER_SHA256
    assert (p.top_k, p.reader_budget, p.max_tokens, p.judges) == (10, 4000, 64, ())


def test_the_lenient_judge_is_mem0s_prompt_at_the_pinned_commit():
    # mem0's metrics/llm_judge.py ACCURACY_PROMPT (its fields renamed to the judge's).
    upstream = LENIENT_PROMPT.replace("{gold}", "{gold_answer}").replace(
        "{response}", "{generated_answer}"
    )
    assert sha256_text(upstream) == (
        "62395dd312a631dfd9355026a0b69cc936018274c3198b6365b5c2a5c9bca9e0"
    )
    assert "lenient" in get_protocol("mem0").judges


def test_a_prompt_changed_by_one_character_changes_the_hash():
    p = get_protocol("mem0")
    t = p.texts["prompt"]
    assert t.text is not None
    changed = replace(p, texts={"prompt": replace(t, text=t.text.replace("5-6", "5-7", 1))})
    assert changed.sha256 != p.sha256 and changed.reader_sha256 != p.reader_sha256
    assert changed.verbatim is False
    # mnemometer's own prompt too (its reader hash is READER_SHA256 unchanged otherwise).
    m = get_protocol("mnemometer")
    edited = replace(
        m, texts={"prompt": replace(m.texts["prompt"], text=READER_PROMPT.replace(".", "!", 1))}
    )
    assert edited.sha256 != m.sha256 and edited.reader_sha256 != READER_SHA256


def test_every_setting_is_in_the_hash_and_the_prose_is_not():
    p = get_protocol("mem0")
    for change in (
        {"top_k": 10},
        {"reader_budget": 4000},
        {"max_tokens": 64},
        {"temperature": 0.5},
        {"role": "user"},
        {"dates": "mnemometer"},
        {"judges": ("strict",)},
        {"judge_model": "gpt-4o"},
        {"exclude": {}},
        {"sources": p.sources[1:]},
    ):
        assert replace(p, **change).sha256 != p.sha256, change
    assert replace(p, title="x", notes=()).sha256 == p.sha256
    assert replace(p, top_k=10).reader_sha256 == p.reader_sha256  # top-k is its own option
    assert len({q.sha256 for q in protocols()}) == len(PROTOCOL_NAMES)


def test_unshipped_prompts_are_read_from_a_copy_and_hashed_as_read(tmp_path):
    pinned = get_protocol("locomo-official")
    with pytest.raises(
        MnemometerError, match=r"snap-research/LoCoMo.*task_eval/gpt_utils.py.*3eb6f2c"
    ):
        pinned.resolve([tmp_path])
    read = pinned.resolve([locomo_checkout(tmp_path / "LoCoMo")])
    assert read.text("prompt") == "\nSTAND-IN QA PROMPT. Question: {} Short answer:\n"
    assert read.text("suffix_cat2") == " STAND-IN DATE HINT."
    assert read.text("choice_cat5") == " STAND-IN CHOICE: (a) {} (b) {}. "
    # Not the pinned text: accepted, and hashed over what was read.
    assert read.verbatim is False and read.sha256 != pinned.sha256
    assert read.reader_sha256 != pinned.reader_sha256
    # The file itself, or the folder holding it, serves as well as the checkout.
    file = tmp_path / "LoCoMo" / "task_eval" / "gpt_utils.py"
    assert pinned.resolve([file]).sha256 == pinned.resolve([file.parent]).sha256 == read.sha256


def test_f_strings_read_as_templates_and_fields_are_renamed(tmp_path):
    root = zep_checkout(tmp_path)
    read = get_protocol("zep").resolve([root])
    prompt = read.text("prompt")
    assert "{context}" in prompt and "{question}" in prompt and "{{literal}}" in prompt
    assert prompt.format(context="C", question="Q").count("{literal}") == 1
    assert "{gold}" in read.text("judge_prompt") and "{gold_answer}" not in read.text(
        "judge_prompt"
    )
    assert read.texts["judge_prompt"].text is not None
    assert "{gold_answer}" in read.texts["judge_prompt"].text  # hashed as read


def test_a_place_that_is_not_in_the_file_is_an_error(tmp_path):
    f = tmp_path / "gpt_utils.py"
    f.write_text("QA_PROMPT = 'x'\n", encoding="utf-8")
    assert extract(f, Place("QA_PROMPT")) == "x"
    with pytest.raises(MnemometerError, match="no string at 'QA_PROMPT_CAT_5'"):
        extract(f, Place("QA_PROMPT_CAT_5"))
    with pytest.raises(MnemometerError, match="no function 'get_gpt_answers'"):
        extract(f, Place("get_gpt_answers: qa['category'] == 2"))
    f.write_text("def broken(:\n", encoding="utf-8")
    with pytest.raises(MnemometerError, match="cannot read it as Python source"):
        extract(f, Place("QA_PROMPT"))


def test_an_unknown_protocol_says_what_there_is():
    with pytest.raises(UnknownNameError, match="did you mean 'mem0'"):
        get_protocol("mem1")


def test_a_record_holds_every_field_and_every_prompt():
    r = get_protocol("mem0").record()
    assert r["sha256"] == get_protocol("mem0").sha256
    assert r["texts"]["prompt"]["text"].startswith("\n    You are an intelligent memory")
    assert r["texts"]["prompt"]["shipped"] and r["top_k"] == 30
    assert r["judges"] == ["lenient"] and r["judge_model"] == "gpt-4o-mini"
    assert {s["path"] for s in r["sources"]} >= {"evaluation/prompts.py"}
