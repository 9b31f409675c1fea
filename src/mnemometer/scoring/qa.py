"""Question-answering metrics of the long-conversation benchmarks: LoCoMo's F1, BLEU-1.

LoCoMo's official token F1 (snap-research/LoCoMo ``task_eval/evaluation.py``), reproduced
rule by rule because the field's numbers depend on every one of them:

* **normalisation** (``normalize_answer``): commas removed first, lower-case, every ASCII
  punctuation character removed, the words ``a``, ``an``, ``the`` and ``and`` removed,
  whitespace collapsed;
* **tokens**: the normalised text split on whitespace, each token Porter-stemmed with NLTK's
  ``PorterStemmer`` (its default NLTK-extensions mode, as the official code uses);
* **F1**: over token *multisets* (``Counter`` intersection), 0 when nothing is shared;
* **category 1 (multi-hop)**: prediction and gold are split on commas (before
  normalisation); each gold piece takes its best-matching prediction piece, and the
  pieces' F1 values are averaged;
* **category 3 (open-domain)**: the gold answer is cut at its first ``;``;
* **categories 2 and 4**: plain F1;
* **category 5 (adversarial)**: 1 when the prediction contains "no information available"
  or "not mentioned" (case-insensitive), else 0 — a string check, not an F1.

``tests/test_benchmark_qa.py`` holds a table of tricky predictions with the values the
official definition gives. mem0's evaluation computes a different "F1" (token *sets*, no
stemming); it is not this one.

BLEU-1 is NLTK's sentence BLEU with unigram weights and smoothing method 1, as in mem0's
evaluation, over LoCoMo-normalised tokens (no stemming): NLTK's ``word_tokenize`` needs a
downloaded tokenizer model, which we never fetch at run time. It is computed directly and
tested against NLTK's.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from functools import lru_cache

ADVERSARIAL_PHRASES = ("no information available", "not mentioned")
"""LoCoMo's category 5 rule: a prediction containing one of these is right."""

_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """LoCoMo's ``normalize_answer``: no commas, lower case, no punctuation or articles."""
    text = str(text).replace(",", "")
    text = text.lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


@lru_cache(maxsize=1)
def _stemmer():  # noqa: ANN202 - NLTK's class, imported lazily (a second or so)
    from nltk.stem import PorterStemmer

    return PorterStemmer()


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _stemmer().stem(word)


def answer_tokens(text: str) -> list[str]:
    """Normalised, Porter-stemmed tokens (the tokens LoCoMo's F1 compares)."""
    return [_stem(w) for w in normalize_answer(text).split()]


def f1_score(prediction: str, gold: str) -> float:
    """LoCoMo's ``f1_score``: token-multiset F1 after normalisation and stemming."""
    pred = answer_tokens(prediction)
    ref = answer_tokens(gold)
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision = same / len(pred)
    recall = same / len(ref)
    return 2 * precision * recall / (precision + recall)


def multi_answer_f1(prediction: str, gold: str) -> float:
    """LoCoMo's ``f1`` for multi-hop questions: comma pieces, best match per gold piece."""
    preds = [p.strip() for p in str(prediction).split(",")]
    golds = [g.strip() for g in str(gold).split(",")]
    return sum(max(f1_score(p, g) for p in preds) for g in golds) / len(golds)


def adversarial_score(prediction: str) -> float:
    """LoCoMo's category 5 rule: 1.0 when the prediction says the answer is not there."""
    low = str(prediction).lower()
    return 1.0 if any(p in low for p in ADVERSARIAL_PHRASES) else 0.0


def locomo_gold(answer: str, category: int | None) -> str:
    """The gold answer LoCoMo's scorer compares with (category 3: up to the first ``;``)."""
    return str(answer).split(";")[0].strip() if category == 3 else str(answer)


def locomo_f1(prediction: str, answer: str | None, category: int | None) -> float | None:
    """LoCoMo's per-question score for ``category`` (the rules in the module docstring).

    Returns ``None`` when there is nothing to compare with (no gold answer outside
    category 5). An unknown category scores with plain F1.
    """
    if category == 5:
        return adversarial_score(prediction)
    if answer is None:
        return None
    gold = locomo_gold(answer, category)
    if category == 1:
        return multi_answer_f1(prediction, gold)
    return f1_score(prediction, gold)


def bleu1(prediction: str, gold: str) -> float:
    """Sentence BLEU-1 as NLTK computes it (unigram weights, smoothing method 1).

    Clipped unigram precision times the brevity penalty ``exp(1 - r/c)`` when the
    prediction (``c`` tokens) is shorter than the gold (``r``); 0 when no unigram matches
    (NLTK returns 0 then, whatever the smoothing). Written out because importing NLTK's
    BLEU costs more than a whole LoCoMo run's scoring; ``tests/scoring/test_benchmark_scoring.py``
    checks it against ``nltk.translate.bleu_score.sentence_bleu``.
    """
    pred = normalize_answer(prediction).split()
    ref = normalize_answer(gold).split()
    if not pred or not ref:
        return 0.0
    matches = sum((Counter(pred) & Counter(ref)).values())
    if matches == 0:
        return 0.0
    c, r = len(pred), len(ref)
    penalty = 1.0 if c > r else math.exp(1 - r / c)
    return penalty * matches / c


def contains_answer(prediction: str, gold: str) -> bool:
    """Every normalised, stemmed token of ``gold`` occurs in ``prediction`` (a recall test)."""
    ref = answer_tokens(gold)
    have = set(answer_tokens(prediction))
    return bool(ref) and all(t in have for t in ref)
