"""Every peer harness's retrieval rule, as a scorer: one ranking, read the way each reads it.

Vendors publish LoCoMo and LongMemEval retrieval numbers under rules that differ more than
the systems do: "an evidence turn in the top 5", "an evidence session among the first 5
distinct sessions", "the gold answer's text somewhere in the top 10". On one BM25 ranking of
LoCoMo these give 0.60, 0.91 and 0.23, and a random ranking 0.01, 0.23 and - (issue 31). Each
rule here is a per-item scorer registered in ``mnemometer.scorers`` under the rule's name; it
writes one metric, ``rule:<name>`` at each of its cut-offs ``ks``. Each was transcribed from
the peer's own code, cited in its docstring, and is tested on a hand-built ranking worked out
from that code (``tests/scoring/test_rules.py``) and, where the peer installs from PyPI, on
the same rankings through the peer's own functions (``tests/scoring/test_rules_peers.py``).

A rule reads one record (:mod:`mnemometer.scoring._scorer`): ``retrieved`` (ids in rank
order), ``expected`` (the evidence turn ids) and, where it needs them, what a benchmark
suite records beside them in ``extra``:

* ``sessions``: the session of each of the first :data:`RULE_DEPTH` retrieved ids;
* ``evidence_sessions``: the sessions that hold the evidence (LongMemEval's
  ``answer_session_ids``; for LoCoMo the sessions of the evidence turns);
* ``texts``: the text of each of the first :data:`RULE_DEPTH` retrieved turns (its words,
  without the speaker);
* ``gold``: the gold answer; ``abstention``: an abstention question;
* ``random``: ``{"ids", "sessions"}``, the first :data:`RULE_DEPTH` turns of a seeded
  random permutation of the conversation's turns (the baseline the summary scores by the
  same rules).

What a record does not hold, a rule does not guess: a session rule over a record without
sessions (a run recorded before the rules) gives no value. The peers read LoCoMo's evidence
as written; the rules read it as mnemometer does (repaired where unambiguous, dropped where
it names no turn: 10 of 2,815 evidence strings, listed in the run's dataset notes), so a
peer's own number can differ from its rule here on those few questions.

A question whose search failed scores 0 under every rule whose questions it belongs to (a
failure is never left out). A record with no ranking (no hits and no ``evidence_sessions``,
which the suite records before it searches: a baseline's or an agent's question) is not
scored by any rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from mnemometer.scoring._scorer import BaseScorer, Record
from mnemometer.scoring.retrieval import dedupe

RULE_DEPTH = 10
"""Hits whose session and text a benchmark record keeps for the rules, and the depth of its
random ranking: the deepest any peer reads (engram-search's script reads 2 x its top 5,
benchd-harness's adapters return 10)."""

PREFIX = "rule:"
"""The rules' metric names: ``rule:<scorer name>``."""

RANDOM_SEED = "mnemometer-random-ranking/"
"""The random baseline's seed is this and the question id (the same for every system)."""


def _ids(record: Record) -> list[str]:
    return dedupe(h["id"] for h in record.get("retrieved") or [])


def _extra(record: Record) -> dict[str, Any]:
    return record.get("extra") or {}


def top_sessions(record: Record, k: int) -> list[str] | None:
    """The sessions of the top ``k`` hits, or ``None`` when the record does not say.

    A record keeps the sessions of its first :data:`RULE_DEPTH` hits; a deeper cut-off of a
    longer ranking is not known.
    """
    sessions = _extra(record).get("sessions")
    if sessions is None:
        return None
    if k > len(sessions) and len(_ids(record)) > len(sessions):
        return None
    return list(sessions[:k])


def evidence_sessions(record: Record) -> set[str] | None:
    """The sessions that hold the evidence, or ``None`` when the record does not say."""
    ev = _extra(record).get("evidence_sessions")
    return None if ev is None else set(ev)


class Rule(BaseScorer):
    """One retrieval rule: ``rule:<name>`` at each of ``ks`` (per question 1 or 0, or a share).

    Subclasses give :meth:`value` (an ok record) and :meth:`applies` (whether a question
    belongs to the rule's questions at all: a failed one then scores 0).

    Args:
        ks: the cut-offs.
    """

    version: ClassVar[str] = "1"
    label: ClassVar[str] = ""
    """What the rule counts, in a few words (the sensitivity table's row)."""
    whose: ClassVar[str] = ""
    """Who counts this way (the peers whose numbers it reproduces)."""
    default_ks: ClassVar[tuple[int, ...]] = (5,)
    texts_needed: ClassVar[bool] = False
    """Reads the hits' texts (so a random ranking, which has none, is not scored)."""
    binary: ClassVar[bool] = True
    """Each question scores 0 or 1 (its interval treats the values so)."""

    def __init__(self, ks: Sequence[int] | None = None) -> None:
        self.ks = [int(k) for k in (self.default_ks if ks is None else ks)]
        if not self.ks or min(self.ks) < 1:
            raise ValueError(f"rule {self.name!r}: ks must be cut-offs of 1 or more, got {ks}")

    @property
    def metric(self) -> str:
        """The metric it writes."""
        return PREFIX + self.name

    def args(self) -> dict[str, Any]:
        """The cut-offs."""
        return {"ks": self.ks}

    def outputs(self) -> list[str]:
        """``rule:<name>``."""
        return [self.metric]

    def score(self, record: Record) -> list[dict[str, Any]]:
        """``rule:<name>`` at each k where the rule gives the question a value.

        A record without a ranking (a baseline's or an agent's answer) has none.
        """
        if not record.get("retrieved") and "evidence_sessions" not in _extra(record):
            return []
        failed = record.get("status", "ok") != "ok"
        out = []
        for k in self.ks:
            v = (0.0 if self.applies(record) else None) if failed else self.value(record, k)
            if v is not None:
                out.append({"name": self.metric, "k": k, "value": v})
        return out

    def applies(self, record: Record) -> bool:
        """Whether the question is one the rule scores (a question with evidence)."""
        return bool(record.get("expected"))

    def value(self, record: Record, k: int) -> float | None:
        """The question's value for an ok record at cut-off ``k``; ``None``: not scored."""
        raise NotImplementedError


class TurnAny(Rule):
    """Some evidence turn among the top k hits: mnemometer's ``recall_any`` (``turn-any``).

    mnemometer's own turn-level rule, LongMemEval's ``recall_any`` (``eval_utils.py``,
    as ``mnemometer.suites.benchmarks._pipeline.retrieval_values`` computes it). A question
    without evidence (LongMemEval's abstention questions, 4 LoCoMo questions) is not scored.
    """

    name: ClassVar[str] = "turn-any"
    label: ClassVar[str] = "an evidence turn in the top k"
    whose: ClassVar[str] = "mnemometer; LongMemEval recall_any"
    every: ClassVar[bool] = False

    def value(self, record: Record, k: int) -> float | None:
        """1 when an evidence turn (``turn-all``: every one) is in the top k."""
        ev = record.get("expected") or []
        if not ev:
            return None
        top = set(_ids(record)[:k])
        return float((all if self.every else any)(e in top for e in ev))


class TurnAll(TurnAny):
    """Every evidence turn among the top k hits: ``recall_all`` (``turn-all``).

    mnemometer's and LongMemEval's ``recall_all``; a question without evidence is not scored.
    """

    name: ClassVar[str] = "turn-all"
    label: ClassVar[str] = "every evidence turn in the top k"
    whose: ClassVar[str] = "mnemometer; LongMemEval recall_all"
    every: ClassVar[bool] = True


class TurnFraction(Rule):
    """The share of the evidence turns among the top k hits (``turn-fraction``).

    genome-memory's LoCoMo "gold-evidence hit-rate@k" (its "hit@10 0.732 (dense)" in
    ``genome/memory/rerank.py`` and ``Memory.search``'s docstring, PyPI 1.2.1):
    NORTHTEKDevs/genome ``benchmarks/retrieval_improve.py: main`` at
    9358910aaf7ec8336e12a63a7b17a7269554e330 (the same lines in ``retrieval_quality.py``,
    ``retrieval_improve2.py`` and ``retrieval_hyde.py``) keeps the questions of categories
    1-4 (its ``HEADLINE``) whose evidence is not empty, and scores each
    ``len({dia_id of the top k} & ev) / len(ev)``; the number is the mean. Not 0/1: of two
    evidence turns, one found scores 0.5.
    """

    name: ClassVar[str] = "turn-fraction"
    label: ClassVar[str] = "the share of evidence turns in the top k; category 5 left out"
    whose: ClassVar[str] = "genome-memory's evidence hit-rate@k"
    default_ks: ClassVar[tuple[int, ...]] = (10,)
    binary: ClassVar[bool] = False

    def applies(self, record: Record) -> bool:
        """Questions with evidence, but LoCoMo's category 5."""
        return bool(record.get("expected")) and (
            (record.get("groups") or {}).get("category") != "adversarial"
        )

    def value(self, record: Record, k: int) -> float | None:
        """The share of the evidence turns among the top k hits."""
        if not self.applies(record):
            return None
        ev = set(record["expected"])
        return len(ev & set(_ids(record)[:k])) / len(ev)


class _Cumulative(Rule):
    """infolang-bench's cumulative any@K / strict@K (shared by its four modes).

    Transcribed from infolang-bench 0.1.0 (PyPI; source InfoLang-Inc/infolang-bench, whose
    repository could not be read here, so cited by release: wheel SHA-256 bdc18d27b17b9870
    620bb06b9d95ccd4fb39e32d5a2f4cdd338adb31fd758542): ``infolang_bench/scoring.py:
    cumulative_scores`` and ``infolang_bench/datasets/locomo.py: score``. Each hit adds a set
    of keys (``raw``: its own id; ``sess``: every turn of its session) to a union taken in
    rank order; at K (the whole list when it is shorter) ``any`` is 1 when the union meets
    the evidence, ``strict`` when it holds all of it. A question with empty evidence scores
    0.0 and stays in the mean (its LoCoMo summary ``aggregate`` never passes
    ``only_with_evidence``): evidence-less questions count as misses.
    """

    mode: ClassVar[str] = "any"
    expand: ClassVar[bool] = False

    def applies(self, record: Record) -> bool:
        """Every question (evidence-less ones score 0)."""
        return True

    def value(self, record: Record, k: int) -> float | None:
        """1 when the top k hits' keys meet (``any``) or hold (``strict``) the evidence."""
        if self.expand:
            ev = evidence_sessions(record)
            keys = top_sessions(record, k)
            if ev is None or keys is None:
                return None
        else:
            ev = set(record.get("expected") or [])
            keys = _ids(record)[:k]
        if not ev:
            return 0.0
        union = set(keys)
        return float(bool(ev & union) if self.mode == "any" else ev <= union)


class RawAny(_Cumulative):
    """An evidence turn among the top K hits, evidence-less questions 0 (``raw-any``).

    infolang-bench's ``raw_any@K`` on LoCoMo (see :class:`_Cumulative` for the source): the
    same hits as ``turn-any``, over every question instead of those with evidence.
    """

    name: ClassVar[str] = "raw-any"
    label: ClassVar[str] = "an evidence turn in the top k; no evidence = miss"
    whose: ClassVar[str] = "infolang-bench raw_any"


class RawStrict(_Cumulative):
    """strict@K: every evidence turn among the top K hits, evidence-less 0 (``raw-strict``).

    infolang-bench's ``raw_strict@K`` on LoCoMo (see :class:`_Cumulative` for the source):
    ``turn-all``'s hits, over every question.
    """

    name: ClassVar[str] = "raw-strict"
    label: ClassVar[str] = "strict: every evidence turn in the top k; no evidence = miss"
    whose: ClassVar[str] = "infolang-bench raw_strict"
    mode: ClassVar[str] = "strict"


class SessAny(_Cumulative):
    """A top-K hit's session holds evidence: session-expanded any@K (``sess-any``).

    infolang-bench's ``sess_any@K`` on LoCoMo (a hit stands for every turn of its session;
    see :class:`_Cumulative` for the source). On LongMemEval its evidence is
    ``answer_session_ids`` and its only modes, ``any`` and ``strict``, are this rule and
    ``sess-strict``.
    """

    name: ClassVar[str] = "sess-any"
    label: ClassVar[str] = "a top-k turn's session holds evidence; no evidence = miss"
    whose: ClassVar[str] = "infolang-bench sess_any"
    expand: ClassVar[bool] = True


class SessStrict(_Cumulative):
    """Every evidence session is some top-K hit's session (``sess-strict``).

    infolang-bench's ``sess_strict@K`` (see :class:`_Cumulative` for the source).
    """

    name: ClassVar[str] = "sess-strict"
    label: ClassVar[str] = "every evidence session among the top-k turns' sessions"
    whose: ClassVar[str] = "infolang-bench sess_strict"
    mode: ClassVar[str] = "strict"
    expand: ClassVar[bool] = True


class SessionHit(Rule):
    """The session of some top-k hit is an evidence session (``session-hit``).

    memory-core-eval's recall@k (Evanyuan-builder/memory-core-eval at 0fcf7c7838ecb5f42e504cc
    7c082e87b97fa09f2, PyPI 0.2.0): ``mceval/eval/scorer.py: score`` takes the hits' session
    ids in order (hits without one dropped), and recall@k is whether ``set(sids[:k])`` meets
    the evidence sessions; ``mceval/eval/metrics.py: compute_metrics`` averages it over
    answerable questions only (abstention questions, ids ending ``_abs``, are set apart);
    ``mceval/datasets/locomo.py: _convo_to_items`` maps LoCoMo's evidence ``D<s>:<t>`` to
    sessions and drops a question whose evidence names no session (3 of conv-26's 199 as
    written; 2 as mnemometer repairs the evidence).
    """

    name: ClassVar[str] = "session-hit"
    label: ClassVar[str] = "the session of a top-k turn is an evidence session"
    whose: ClassVar[str] = "memory-core-eval recall@k"

    def applies(self, record: Record) -> bool:
        """Answerable questions whose evidence names a session."""
        if _extra(record).get("abstention"):
            return False
        ev = evidence_sessions(record)
        return bool(ev) if ev is not None else bool(record.get("expected"))

    def value(self, record: Record, k: int) -> float | None:
        """1 when one of the top k hits' sessions holds evidence."""
        ev = evidence_sessions(record)
        if not ev or _extra(record).get("abstention"):
            return None
        top = top_sessions(record, k)
        return None if top is None else float(bool(set(top) & ev))


class DistinctSession(Rule):
    """An evidence session among the hits' first k distinct sessions (``distinct-session``).

    engram-search's LoCoMo script (Nitin-Gupta1109/engram ``benchmarks/locomo_bench.py`` at
    43ff207e3d47ae2d2db0aa09fbc029ddad02f253, the commit that published "93.9% R@5"; the
    script is not in the PyPI package, so it is transcribed, not run): ``run_benchmark``
    retrieves ``top_k * 2`` documents (10 for its default ``--top-k 5``), maps them to their
    sessions keeping each session's first appearance, and ``recall_at_k`` is whether an
    evidence session (``evidence_to_session_ids``: ``D<s>:<t>`` -> ``session_<s>``) is among
    the first k of those sessions. Questions without evidence are skipped; every category
    counts. Its ``longmemeval_bench.py`` is the same over ``answer_session_ids``.

    Args:
        ks: the cut-offs (distinct sessions).
        depth: hits read before the sessions are taken (the script's ``top_k * 2``).
    """

    name: ClassVar[str] = "distinct-session"
    label: ClassVar[str] = "evidence session among the top k distinct sessions"
    whose: ClassVar[str] = "engram-search's script R@k"

    def __init__(self, ks: Sequence[int] | None = None, depth: int = RULE_DEPTH) -> None:
        super().__init__(ks)
        self.depth = int(depth)
        if self.depth < 1:
            raise ValueError(f"rule {self.name!r}: depth must be 1 or more, got {depth}")

    def args(self) -> dict[str, Any]:
        """The cut-offs and the hits read."""
        return {"ks": self.ks, "depth": self.depth}

    def applies(self, record: Record) -> bool:
        """Questions with evidence."""
        ev = evidence_sessions(record)
        return bool(ev) if ev is not None else bool(record.get("expected"))

    def value(self, record: Record, k: int) -> float | None:
        """1 when an evidence session is among the first k distinct sessions of the hits."""
        ev = evidence_sessions(record)
        if not ev:
            return None
        read = top_sessions(record, self.depth)
        if read is None:
            return None
        return float(bool(set(dedupe(read)[:k]) & ev))


class AnswerInContext(Rule):
    """The gold answer's text appears in the top k hits' text (``answer-in-context``).

    benchd-harness's retrieval hit (benchdai/harness at 3bbc9c84708bb5dc01909b6b2430741bb9f
    799d0, PyPI 0.2.0): ``benchd_harness/scoring/deterministic.py: score_retrieval_recall``
    lower-cases and strips the adapter's recall text and ``str(expected_answer)``; an empty
    one is a miss, else a hit when the answer is a substring of the text. The recall text is
    what the adapter returns for its top 10 (``top_k=10`` in its adapters) of the turns it
    ingested (``content`` = the turn's ``text``, its speaker only in metadata): here the
    texts of the top k hits, without speaker, joined by newlines. ``benchmarks/locomo.py: LoCoMoBenchmark.load_items``
    drops category 5 (adversarial) questions; every other question counts, with or without
    evidence.
    """

    name: ClassVar[str] = "answer-in-context"
    label: ClassVar[str] = "the gold answer's text in the top-k text"
    whose: ClassVar[str] = "benchd-harness retrieval_hit"
    default_ks: ClassVar[tuple[int, ...]] = (10,)
    texts_needed: ClassVar[bool] = True

    def applies(self, record: Record) -> bool:
        """Every question but LoCoMo's category 5."""
        return (record.get("groups") or {}).get("category") != "adversarial"

    def value(self, record: Record, k: int) -> float | None:
        """1 when the lower-cased gold answer is a substring of the top k texts."""
        if not self.applies(record):
            return None
        texts = _extra(record).get("texts")
        if texts is None or (k > len(texts) and len(_ids(record)) > len(texts)):
            return None
        recall = "\n".join(texts[:k]).strip().lower()
        gold = str(_extra(record).get("gold")).strip().lower()
        if not gold or not recall:
            return 0.0
        return float(gold in recall)


RULES: tuple[type[Rule], ...] = (
    TurnAny,
    TurnAll,
    TurnFraction,
    RawAny,
    RawStrict,
    SessAny,
    SessStrict,
    SessionHit,
    DistinctSession,
    AnswerInContext,
)
"""Every built-in rule, in the order the sensitivity table shows them."""


def default_rules() -> list[Rule]:
    """Each built-in rule at its default cut-offs (what LoCoMo and LongMemEval declare)."""
    return [r() for r in RULES]


def random_record(record: Record) -> Record | None:
    """``record`` with its random ranking in place of the system's (``None``: it has none).

    The random ranking has no texts: a rule that reads texts gives it no value.
    """
    extra = _extra(record)
    random = extra.get("random")
    if not random or record.get("status", "ok") != "ok":
        return None
    rest = {k: v for k, v in extra.items() if k not in ("sessions", "texts", "random")}
    return {
        **record,
        "retrieved": [{"id": i, "score": 0.0} for i in random["ids"]],
        "metrics": [],
        "extra": {**rest, "sessions": list(random["sessions"])},
    }


__all__ = [
    "PREFIX",
    "RANDOM_SEED",
    "RULES",
    "RULE_DEPTH",
    "AnswerInContext",
    "DistinctSession",
    "RawAny",
    "RawStrict",
    "Rule",
    "SessAny",
    "SessStrict",
    "SessionHit",
    "TurnAll",
    "TurnAny",
    "TurnFraction",
    "default_rules",
    "evidence_sessions",
    "random_record",
    "top_sessions",
]
