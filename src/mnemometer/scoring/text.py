"""Text grading, in one place: negation-aware assertions and keyword grading of replies.

Three modules along one seam, re-exported here so ``from mnemometer.scoring import text``
keeps working:

* :mod:`mnemometer.scoring.assertions`: does a text *assert* a phrase ("avoid X", "X was
  rejected", "formerly X" only mention it). The items suite grades answers with it, and
  its :func:`~mnemometer.scoring.assertions.negated` is the one negation test of both
  graders.
* :mod:`mnemometer.scoring.tokens`: whole-word tokens with canonical e-mails, times,
  weekdays, months and numbers, and list items.
* :mod:`mnemometer.scoring.keywords`: the scenarios suite's grade of one reply (required,
  forbidden and competing values, hedges, order, word limit, persona markers).

docs/scenarios.md gives the grading rules and the seed bugs they fix.
"""

from mnemometer.scoring.assertions import (
    STOP_WORDS,
    assertion_hits,
    assertion_recall,
    asserts,
    carries_negation,
    label_recall,
    negated,
    support,
    terms,
)
from mnemometer.scoring.keywords import (
    PERSONA_MARKERS,
    TurnGrade,
    exact_answer,
    failed,
    find,
    grade_keywords,
    grade_persona,
    keyword_kind,
    rescue,
)
from mnemometer.scoring.tokens import Token, fold, tokenize, tokens


def normalise(text: str) -> str:
    """NFKC, straight quotes, lower case (tokens carry offsets into ``fold(text)``)."""
    return fold(text).lower()


__all__ = [
    "PERSONA_MARKERS",
    "STOP_WORDS",
    "Token",
    "TurnGrade",
    "assertion_hits",
    "assertion_recall",
    "asserts",
    "carries_negation",
    "exact_answer",
    "failed",
    "find",
    "fold",
    "grade_keywords",
    "grade_persona",
    "keyword_kind",
    "label_recall",
    "negated",
    "normalise",
    "rescue",
    "support",
    "terms",
    "tokenize",
    "tokens",
]
