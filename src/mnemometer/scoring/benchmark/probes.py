"""A judge's false-positive rate, measured on answers known to be wrong.

A judge's accuracy says how often it accepted the answers; it says nothing about whether it
would have accepted anything. So every judged run also asks each judge about answers that
are wrong by construction, built from the dataset itself, for a seeded sample of its
questions (:data:`PROBE_QUESTIONS`, the same every run and every judge):

* ``other``: the gold answer of another question of the same category (one that shares no
  token with this question's gold);
* ``vague``: a vague, topical answer made of the question's own words ("Something to do
  with ... , I think.");
* ``negation``: the gold answer denied ("Not <gold>.");
* ``absent``: "Not mentioned in the conversation."

The probe answers are part of the question's record (``extra.probe_answers``), so a re-scored
run (``mnemometer score --judge ...``) probes its new judge with the very same answers, and
each probe is one judge call like any other (cached). A judge that accepts more than
:data:`FLAG_RATE` of them is flagged in the summary; a gate policy can bound the rate
(``max_judge_false_positive_rate``). The mem0 "generous" judge, for reference, accepted
62.81% of vague-but-topical wrong answers in locomo-audit's measurement.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from mnemometer.log._schema import ItemResult
from mnemometer.scoring.intervals import interval
from mnemometer.scoring.qa import answer_tokens

PROBE_QUESTIONS = 50
"""Questions per run whose probe answers each judge is asked about."""
KINDS = ("other", "vague", "negation", "absent")
"""The kinds of known-wrong answers."""
FLAG_RATE = 0.10
"""A judge accepting more than this share of known-wrong answers is flagged."""
ABSENT = "Not mentioned in the conversation."
_STOP = frozenset(
    "a an the of to in on at for with and or but is are was were be been do does did what "
    "which who whom whose when where why how that this these those it its i you he she they "
    "we my your his her their our me him them us has have had will would can could should "
    "about from by as into than then there here".split()
)


def _rank(seed: int, qid: str) -> str:
    return hashlib.sha256(f"{seed}:{qid}".encode()).hexdigest()


def probe_answers(
    questions: Sequence[tuple[str, str, str, str]], seed: int = 0, n: int = PROBE_QUESTIONS
) -> dict[str, dict[str, str]]:
    """Known-wrong answers for a seeded sample of ``n`` questions.

    Args:
        questions: ``(question id, question, gold, category)`` of every judged question.
        seed: the run's seed (the sample and the choice of another gold depend on it).
        n: how many questions get probes.

    Returns:
        Question id -> probe kind -> answer.
    """
    chosen = sorted(questions, key=lambda q: _rank(seed, q[0]))[:n]
    by_category: dict[str, list[tuple[str, str]]] = {}
    for qid, _, gold, cat in questions:
        by_category.setdefault(cat, []).append((qid, gold))
    out: dict[str, dict[str, str]] = {}
    for qid, question, gold, cat in chosen:
        mine = set(answer_tokens(gold))
        others = [
            g
            for other, g in sorted(by_category[cat], key=lambda x: _rank(seed + 1, x[0] + qid))
            if other != qid and g.strip() and not (set(answer_tokens(g)) & mine)
        ]
        words = [w for w in question.rstrip("?").split() if w.lower().strip(",.'\"") not in _STOP]
        topic = " ".join(words[:4]) or "that"
        probes = {
            "vague": f"Something to do with {topic}, I think.",
            "negation": f"Not {gold.strip().rstrip('.')}.",
            "absent": ABSENT,
        }
        if others:
            probes = {"other": others[0], **probes}
        out[qid] = probes
    return out


def false_positives(rows: Sequence[ItemResult], judge: str) -> dict[str, Any] | None:
    """One judge's false-positive rate over the probes its records hold (``None``: none).

    A probe whose verdict could not be read is left out and counted apart; the interval
    clusters the probes of one question.
    """
    values: list[float] = []
    clusters: list[str] = []
    by_kind: dict[str, list[float]] = {}
    unreadable = 0
    for r in rows:
        verdict = (r.extra.get("judges") or {}).get(judge) or {}
        for kind, correct in (verdict.get("probes") or {}).items():
            if correct is None:
                unreadable += 1
                continue
            values.append(float(correct))
            clusters.append(f"{r.item_id}/{r.step}")
            by_kind.setdefault(kind, []).append(float(correct))
    if not values and not unreadable:
        return None
    iv = interval(values, clusters, binary=True) if values else None
    rate = sum(values) / len(values) if values else None
    return {
        "judge": judge,
        "probes": len(values),
        "accepted": int(sum(values)),
        "rate": rate,
        "interval": iv.model_dump() if iv is not None else None,
        "by_kind": {k: sum(v) / len(v) for k, v in sorted(by_kind.items())},
        "unreadable": unreadable,
        "flagged": rate is not None and rate > FLAG_RATE,
    }


__all__ = ["ABSENT", "FLAG_RATE", "KINDS", "PROBE_QUESTIONS", "false_positives", "probe_answers"]
