"""Benchmark scoring: LoCoMo's official F1 on tricky predictions, judges, kappa, LongMemEval's
retrieval metrics, errata. Expected values were worked out by hand from the official rules
(snap-research/LoCoMo task_eval/evaluation.py; LongMemEval src/retrieval/eval_utils.py)."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from mnemometer.datasets._models import Conversation, Session, Turn
from mnemometer.errors import DatasetError, MnemometerError
from mnemometer.scoring import judges as J
from mnemometer.scoring import qa
from mnemometer.scoring.agreement import cohen_kappa, raw_agreement
from mnemometer.suites.benchmarks import _pipeline as P

# (prediction, gold, category, official score, why it is tricky)
F1_TABLE = [
    ("The Eiffel Tower", "eiffel tower", 4, 1.0, "articles and case"),
    ("Paris, France", "Paris", 4, 2 / 3, "commas are removed, not split, outside category 1"),
    (
        "painting, swimming",
        "swimming, painting, hiking",
        1,
        2 / 3,
        "multi-hop: best piece per gold piece",
    ),
    ("swimming and painting", "painting, swimming", 1, 2 / 3, "multi-hop without commas"),
    ("She adopted dogs", "adopting a dog", 4, 0.8, "Porter stemming: adopted/adopting, dogs/dog"),
    ("yes", "Likely yes; she loves hiking", 3, 2 / 3, "category 3: gold up to the first ';'"),
    ("yes", "Likely yes; she loves hiking", 4, 1 / 3, "the ';' rule is category 3's alone"),
    ("salt and pepper", "salt pepper", 4, 1.0, "'and' is dropped with the articles"),
    ("dog dog", "dog", 4, 2 / 3, "multisets, not sets (mem0's F1 would say 1.0)"),
    ("7 May, 2023", "7 May 2023", 2, 1.0, "a date's comma"),
    ("the 7th of May", "7 May", 2, 0.4, "7th is not 7"),
    ("In 2022", "2022", 2, 2 / 3, "a numeric answer"),
    ("", "Paris", 4, 0.0, "an empty prediction"),
    ("Not mentioned in the conversation.", "x", 5, 1.0, "category 5: the string rule"),
    ("There is no information available", "x", 5, 1.0, "category 5: the other phrase"),
    ("She never went", "x", 5, 0.0, "category 5: a refusal in other words fails"),
    ("NOT MENTIONED", None, 5, 1.0, "category 5 needs no gold answer"),
]


@pytest.mark.parametrize(("pred", "gold", "cat", "want", "why"), F1_TABLE)
def test_locomo_f1_matches_the_official_definition(pred, gold, cat, want, why):
    assert qa.locomo_f1(pred, gold, cat) == pytest.approx(want), why


def test_f1_without_a_gold_answer_is_not_applicable():
    assert qa.locomo_f1("anything", None, 4) is None


def test_bleu1_is_unigram_precision_with_brevity_penalty():
    assert qa.bleu1("paris", "paris") == pytest.approx(1.0)
    # 1 of 2 unigrams matches; the prediction is as long as the reference: no penalty.
    assert qa.bleu1("paris london", "paris france") == pytest.approx(0.5)
    # Shorter than the reference: brevity penalty exp(1 - 2/1).
    assert qa.bleu1("paris", "paris france") == pytest.approx(math.exp(-1))


def test_bleu1_matches_nltk():
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    rng = random.Random(5)
    words = "a b c d e f g the and".split()
    for _ in range(300):
        pred = " ".join(rng.choice(words) for _ in range(rng.randint(0, 8)))
        gold = " ".join(rng.choice(words) for _ in range(rng.randint(1, 6)))
        p, g = qa.normalize_answer(pred).split(), qa.normalize_answer(gold).split()
        want = 0.0
        if p and g:
            want = sentence_bleu(
                [g], p, weights=(1, 0, 0, 0), smoothing_function=SmoothingFunction().method1
            )
        assert qa.bleu1(pred, gold) == pytest.approx(want), (pred, gold)


def test_kappa_of_a_judge_that_never_says_correct_is_exactly_zero():
    """No agreement beyond chance is 0.0, never -8e-17 (printed "-0.000" in the agreement table)."""
    k = cohen_kappa([True] * 14 + [False] * 6, [False] * 20)
    assert k == 0.0 and math.copysign(1.0, k) == 1.0
    assert f"{k:.3f}" == "0.000"


def test_kappa_matches_sklearn():
    rng = random.Random(3)
    for _ in range(50):
        n = rng.randint(5, 60)
        a = [rng.random() < 0.6 for _ in range(n)]
        b = [x if rng.random() < 0.7 else not x for x in a]
        ours = cohen_kappa(a, b)
        theirs = cohen_kappa_score(a, b)
        if ours is None:
            assert math.isnan(theirs)
        else:
            assert ours == pytest.approx(theirs)
    assert cohen_kappa([True] * 4, [True] * 4) is None  # undefined: one label throughout
    assert raw_agreement([True, False], [True, True]) == 0.5


def test_judges_are_pinned_by_a_hash_of_their_full_text():
    js = J.builtin_judges()
    assert set(js) == {"lenient", "strict", "longmemeval"}
    assert len({j.prompt_hash for j in js.values()}) == 3
    lenient = js["lenient"]
    assert "generous with your grading" in lenient.prompts["default"]
    record = lenient.record("m")
    assert record["prompt_sha256"] == lenient.prompt_hash and record["model"] == "m"
    assert record["prompts"] == lenient.prompts and record["temperature"] == 0.0
    changed = J.JudgeSpec("lenient", "x", {"default": lenient.prompts["default"] + " "})
    assert changed.prompt_hash != lenient.prompt_hash
    lme = js["longmemeval"]
    assert "off-by-one" in lme.prompt_for("temporal-reasoning")
    assert "unanswerable" in lme.prompt_for("multi-session", abstention=True)
    assert lme.prompt_for("single-session-user") == lme.prompts["default"]


def test_verdicts_parse_or_say_why_not():
    spec = J.builtin_judges()["strict"]
    assert J.parse_verdict(spec, '{"label": "CORRECT"}') == (True, None)
    assert J.parse_verdict(spec, '{"label": "wrong"}') == (False, None)
    v, err = J.parse_verdict(spec, "CORRECT, I think")
    assert v is None and "not valid JSON" in err
    v, err = J.parse_verdict(spec, '{"label": "MAYBE"}')
    assert v is None and "'label'" in err


def test_unknown_judge_and_rubric_without_file():
    with pytest.raises(MnemometerError, match="did you mean 'strict'"):
        J.resolve_judges(["strct"])
    with pytest.raises(MnemometerError, match="core_memory_update_rubric.txt"):
        J.resolve_judges(["letta-rubric"])


# ---- LongMemEval's retrieval metrics, against a transcription of its eval_utils ------------


def _their_dcg(rel, k):
    rel = np.asarray(rel, dtype=float)[:k]
    return (
        float(rel[0] + np.sum(rel[1:] / np.log2(np.arange(2, rel.size + 1)))) if rel.size else 0.0
    )


def _their_eval(rankings, correct, corpus, k):
    recalled = {corpus[i] for i in rankings[:k]}
    rel = [1 if d in correct else 0 for d in corpus]
    ideal = _their_dcg(sorted(rel, reverse=True), k)
    ndcg = _their_dcg([rel[i] for i in rankings[:k]], k) / ideal if ideal else 0.0
    return (
        float(any(d in recalled for d in correct)),
        float(all(d in recalled for d in correct)),
        ndcg,
    )


def _their_session(rankings, correct, corpus, k):
    strip = lambda d: "_".join(d.split("_")[:-1])  # noqa: E731
    correct = list({strip(x) for x in correct})
    corpus = [strip(x) for x in corpus]
    eff = k
    while eff <= len(corpus) and len({corpus[i] for i in rankings[:eff]}) < k:
        eff += 1
    return _their_eval(rankings, correct, corpus, eff)


def test_longmemeval_retrieval_metrics_match_their_code():
    rng = random.Random(7)
    for trial in range(40):
        sessions = [
            Session(
                id=f"s{j}",
                turns=[
                    Turn(id=f"s{j}_{t}", speaker="user", text="x") for t in range(rng.randint(1, 5))
                ],
            )
            for j in range(rng.randint(3, 12))
        ]
        conv = Conversation(id=f"c{trial}", sessions=sessions)
        turns = P.turn_index(conv)
        corpus = list(turns)
        evidence = rng.sample(corpus, rng.randint(1, min(4, len(corpus))))
        order = list(range(len(corpus)))
        rng.shuffle(order)
        ranking = [corpus[i] for i in order]
        got = {
            (m["name"], m["k"]): m["value"]
            for m in P.retrieval_values(ranking, evidence, turns, (1, 3, 5), (1, 3, 5))
        }
        # a plain dict (no per-conversation session map cached on it) gives the same
        plain = P.retrieval_values(ranking, evidence, dict(turns), (1, 3, 5), (1, 3, 5))
        assert {(m["name"], m["k"]): m["value"] for m in plain} == got
        for k in (1, 3, 5):
            ra, rall, nd = _their_eval(order, evidence, corpus, k)
            assert got[("recall_any", k)] == ra and got[("recall_all", k)] == rall
            assert got[("ndcg_any", k)] == pytest.approx(nd)
            sa, sall, snd = _their_session(order, evidence, corpus, k)
            assert got[("session_recall_any", k)] == sa and got[("session_recall_all", k)] == sall
            assert got[("session_ndcg_any", k)] == pytest.approx(snd)


# ---- errata ------------------------------------------------------------------------------


def test_errata_correct_exclude_and_refuse_unknown_ids(tmp_path):
    from conftest import REPO

    from mnemometer.datasets import load_dataset
    from mnemometer.datasets._errata import apply_errata

    ds = load_dataset(REPO / "tests/data/longmemeval_mini.json")
    errata = tmp_path / "errata.jsonl"
    errata.write_text(
        json.dumps({"question_id": "mini_0001", "answer": "teal green", "reason": "audit"})
        + "\n"
        + json.dumps({"question_id": "mini_0002", "exclude": True, "reason": "ambiguous"})
        + "\n"
    )
    fixed, notes, sha = apply_errata(ds, errata)
    assert [q.id for q in fixed.queries] == ["mini_0001", "mini_0003", "mini_0004_abs"]
    q = fixed.queries[0]
    assert q.answer == "teal green" and q.metadata["erratum"] == "audit"
    assert q.metadata["original_answer"] == ds.queries[0].answer
    assert (
        len(sha) == 64
        and sha[:12] in notes[0]
        and "1 answers corrected, 1 questions excluded" in notes[0]
    )
    assert fixed.info.content_hash != ds.info.content_hash
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"question_id": "nope", "exclude": True, "reason": "x"}) + "\n")
    with pytest.raises(DatasetError, match=r"bad.jsonl:1: question_id 'nope' is not a question"):
        apply_errata(ds, bad)
    bad.write_text(json.dumps({"question_id": "mini_0001", "answer": "x"}) + "\n")
    with pytest.raises(DatasetError, match=r"bad.jsonl:1: reason: missing"):
        apply_errata(ds, bad)


def test_porter_stemmer_is_nltks_without_importing_nltk_whole():
    """The stemmer LoCoMo's F1 uses is NLTK's class loaded alone (issue 13: the first
    question of every run paid 1.3-6 s for NLTK's whole package), giving the same stems."""
    import subprocess
    import sys

    answers = " ".join(qa.normalize_answer(f"{p} {g}") for p, g, *_ in F1_TABLE).split()
    extra = "running generously relational conditional happiness sky dying agreed ponies"
    words = sorted(set(answers) | set(extra.split()))
    probe = (
        "import json, sys; from mnemometer.scoring import qa\n"
        f"words = {words!r}\n"
        "light = {w: qa._stemmer().stem(w) for w in words}\n"
        "print(json.dumps(sorted(m for m in ('scipy', 'sklearn', 'nltk') if m in sys.modules)))\n"
        "from nltk.stem import PorterStemmer\n"  # a later full import works, from scratch
        "full = {w: PorterStemmer().stem(w) for w in words}\n"
        "print(json.dumps([light == full, light['running'], 'scipy' in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert json.loads(out[0]) == []  # neither scipy, scikit-learn nor all of NLTK loaded
    assert json.loads(out[1]) == [True, "run", True]  # same stems as `import nltk` gives
