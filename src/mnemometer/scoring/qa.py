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

``tests/scoring/test_benchmark_scoring.py`` holds a table of tricky predictions with the
values the official definition gives. mem0's evaluation computes a different "F1" (token *sets*, no
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
import threading
from collections import Counter
from functools import lru_cache

ADVERSARIAL_PHRASES = ("no information available", "not mentioned")
"""LoCoMo's category 5 rule: a prediction containing one of these is right."""

_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCT = str.maketrans("", "", string.punctuation)
_PORTER_LOCK = threading.Lock()


def normalize_answer(text: str) -> str:
    """LoCoMo's ``normalize_answer``: no commas, lower case, no punctuation or articles."""
    text = str(text).replace(",", "")
    text = text.lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


@lru_cache(maxsize=1)
def _stemmer():  # noqa: ANN202 - NLTK's class
    return porter_stemmer_class()()


def porter_stemmer_class() -> type:
    """NLTK's ``PorterStemmer`` class, without importing the rest of NLTK.

    ``import nltk`` runs NLTK's package ``__init__``, which imports scipy.stats, scikit-learn
    and every NLTK subpackage: 1.3 s on an idle 2-core machine, 6 s loaded, paid inside
    the first question of every LoCoMo run. ``nltk/stem/porter.py`` itself needs three small
    modules (``redos``, ``termsec``, ``stem.api``), so it is loaded with its two parent
    packages as bare namespaces, which are removed again afterwards: the same source, the
    same stems (tested against the class ``import nltk`` gives), a few milliseconds, and a
    later ``import nltk`` elsewhere starts from scratch as usual.
    """
    import importlib
    import importlib.util
    import sys
    import types
    from pathlib import Path

    with _PORTER_LOCK:
        spec = importlib.util.find_spec("nltk") if "nltk" not in sys.modules else None
        if spec is None or spec.origin is None:  # imported already (or absent: say so)
            return importlib.import_module("nltk.stem.porter").PorterStemmer
        root = Path(spec.origin).parent
        try:
            for name, path in (("nltk", root), ("nltk.stem", root / "stem")):
                package = types.ModuleType(name)
                package.__path__ = [str(path)]
                sys.modules[name] = package
            return importlib.import_module("nltk.stem.porter").PorterStemmer
        finally:
            for name in [n for n in sys.modules if n == "nltk" or n.startswith("nltk.")]:
                del sys.modules[name]


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _stemmer().stem(word)


# A question's prediction is normalised for its F1 and again for its BLEU-1, and a
# multi-hop one's pieces once per gold piece: the last few texts' words are kept.
@lru_cache(maxsize=256)
def _words(text: str) -> tuple[str, ...]:
    return tuple(normalize_answer(text).split())


@lru_cache(maxsize=256)
def _tokens(text: str) -> tuple[str, ...]:
    return tuple(map(_stem, _words(text)))


@lru_cache(maxsize=256)
def _token_counts(text: str) -> Counter[str]:
    return Counter(_tokens(text))  # shared between calls: never modified


def answer_tokens(text: str) -> list[str]:
    """Normalised, Porter-stemmed tokens (the tokens LoCoMo's F1 compares)."""
    return list(_tokens(str(text)))


def _overlap(ca: Counter[str], cb: Counter[str]) -> int:
    """Size of the multiset intersection (``ca & cb``), walking the smaller one."""
    if len(ca) > len(cb):
        ca, cb = cb, ca
    return sum(min(n, cb[t]) for t, n in ca.items() if t in cb)


def _f1(pred: str, ref: str) -> float:
    same = _overlap(_token_counts(pred), _token_counts(ref))
    if same == 0:
        return 0.0
    precision = same / len(_tokens(pred))
    recall = same / len(_tokens(ref))
    return 2 * precision * recall / (precision + recall)


def f1_score(prediction: str, gold: str) -> float:
    """LoCoMo's ``f1_score``: token-multiset F1 after normalisation and stemming."""
    return _f1(str(prediction), str(gold))


def multi_answer_f1(prediction: str, gold: str) -> float:
    """LoCoMo's ``f1`` for multi-hop questions: comma pieces, best match per gold piece."""
    preds = [p.strip() for p in str(prediction).split(",")]
    golds = [g.strip() for g in str(gold).split(",")]
    return sum(max(_f1(p, g) for p in preds) for g in golds) / len(golds)


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
    pred = _words(str(prediction))
    ref = _words(str(gold))
    if not pred or not ref:
        return 0.0
    matches = _overlap(Counter(pred), Counter(ref))
    if matches == 0:
        return 0.0
    c, r = len(pred), len(ref)
    penalty = 1.0 if c > r else math.exp(1 - r / c)
    return penalty * matches / c


def contains_answer(prediction: str, gold: str) -> bool:
    """Every normalised, stemmed token of ``gold`` occurs in ``prediction`` (a recall test)."""
    ref = _tokens(str(gold))
    have = set(_tokens(str(prediction)))
    return bool(ref) and all(t in have for t in ref)
