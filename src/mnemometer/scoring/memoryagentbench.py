"""MemoryAgentBench's answer metrics (HUST-AI-HYZ/MemoryAgentBench, ICLR 2026).

Reproduced from the benchmark's evaluation code, rule by rule:

* **normalisation** (its ``normalize_answer``, SQuAD's): lower case, ASCII punctuation
  removed, the words ``a``, ``an``, ``the`` removed, whitespace collapsed (no stemming,
  unlike LoCoMo's);
* **substring exact match**: 1 when some normalised gold answer is a substring of the
  normalised prediction;
* **exact match**: 1 when some normalised gold answer equals the normalised prediction;
* **F1**: token-multiset F1 of the normalised texts, the best over the gold answers;
* **recall@5** (movie recommendation): the share of gold items among the first five
  items the prediction lists (one per line or comma-separated, numbering stripped);
  upstream first fuzzy-matches names to its ``entity2id.json``, here names are compared
  after normalisation.

Like its default post-processing, every metric is the best over the raw answer and the
answer parsed after an ``Answer:`` prefix (and, for classification, after ``label:``).

Which metric is a question's official one depends on its ``source``
(:func:`official_metric`): substring exact match for Accurate Retrieval and Conflict
Resolution, exact match for in-context classification and DetectiveQA, recall@5 for
recommendation. The benchmark grades LongMemEval and InfBench summaries with a GPT-4o
judge; here they score by substring exact match and F1 unless a judge is given
(``--judge``), and the summary says so.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)
_NUMBERING = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s*")
_PREFIXED = re.compile(r"(?:answer|label)\s*:[ \t]*(.*)", re.I)

# source prefix -> official metric, first match wins (the benchmark's own dispatch)
_OFFICIAL = (
    ("recsys", "recall@5"),
    ("icl_", "exact_match"),
    ("detective", "exact_match"),
    ("infbench_sum", "f1"),
)
JUDGED_UPSTREAM = ("longmemeval", "infbench_sum")
"""Sources the benchmark grades with a GPT-4o judge."""


def normalize(text: str) -> str:
    """The benchmark's ``normalize_answer``: lower, no punctuation, no articles."""
    text = str(text).lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def candidates(prediction: str) -> list[str]:
    """The raw answer and, when it has one, the text after its last ``Answer:``/``label:``."""
    out = [str(prediction)]
    found = _PREFIXED.findall(str(prediction))
    if found:
        out.append(found[-1].strip())
    return out


def substring_exact_match(prediction: str, answers: Sequence[str]) -> float:
    """1.0 when a normalised gold answer occurs in the normalised prediction."""
    preds = [normalize(c) for c in candidates(prediction)]
    return float(any(normalize(a) in p for a in answers for p in preds))


def exact_match(prediction: str, answers: Sequence[str]) -> float:
    """1.0 when a normalised gold answer equals the normalised prediction."""
    preds = [normalize(c) for c in candidates(prediction)]
    return float(any(normalize(a) == p for a in answers for p in preds))


def f1(prediction: str, answers: Sequence[str]) -> float:
    """Token-multiset F1 after normalisation, the best over the gold answers."""
    best = 0.0
    for c in candidates(prediction):
        pred = normalize(c).split()
        for a in answers:
            ref = normalize(a).split()
            same = sum((Counter(pred) & Counter(ref)).values())
            if same:
                p, r = same / len(pred), same / len(ref)
                best = max(best, 2 * p * r / (p + r))
    return best


def listed_items(prediction: str) -> list[str]:
    """The items a recommendation lists, in order (lines, else commas; numbering stripped)."""
    parts = [p for p in str(prediction).splitlines() if p.strip()]
    if len(parts) <= 1:
        parts = str(prediction).split(",")
    items = [normalize(_NUMBERING.sub("", p)) for p in parts]
    return [i for i in items if i]


def recall_at_5(prediction: str, answers: Sequence[str]) -> float:
    """Share of the gold items among the first five distinct items listed."""
    gold = {normalize(a) for a in answers if normalize(a)}
    if not gold:
        return 0.0
    top = list(dict.fromkeys(listed_items(prediction)))[:5]
    return len(gold & set(top)) / len(gold)


def official_metric(source: str) -> str:
    """The metric the benchmark reports for questions from ``source``."""
    low = source.lower()
    for prefix, metric in _OFFICIAL:
        if low.startswith(prefix):
            return metric
    return "substring_exact_match"


METRICS = {
    "substring_exact_match": substring_exact_match,
    "exact_match": exact_match,
    "f1": f1,
    "recall@5": recall_at_5,
}
"""Each metric by name: ``(prediction, gold answers) -> value in [0, 1]``."""
