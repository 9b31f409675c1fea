"""How a benchmark's records are scored, declared once (the run header records it)."""

from __future__ import annotations

from typing import Any, ClassVar

from mnemometer.log._schema import ScoringRecord
from mnemometer.scoring import judges as J
from mnemometer.scoring.benchmark import Answer, BenchmarkSummary, Judge, headline_spec
from mnemometer.scoring.benchmark.answers import judge_target
from mnemometer.scoring.rules import Rule, default_rules


class Declared:
    """The scoring part of :class:`~mnemometer.suites.benchmarks.BenchmarkSuite`.

    A benchmark differs from another here only by data: whose answer rule, which questions
    the headline and the judges leave out, the category order.
    """

    judges: list[J.JudgeSpec]
    judge_model: str | None
    rubric: str | None
    group_key: ClassVar[str]
    _endpoints: dict[str, str]
    _judge_source: str | None

    headline_rule: ClassVar[str] = "every question"
    """Which questions the headline numbers (``overall``) are over, in words."""
    headline_exclude: ClassVar[dict[str, list[str]]] = {}
    """Group key -> values whose questions the headline numbers leave out."""
    judge_exclude: ClassVar[dict[str, list[str]]] = {}
    """Group key -> values of questions the judges do not judge."""
    answer_rule: ClassVar[str] = "qa"
    """Whose answer rule scores the answers (:class:`mnemometer.scoring.benchmark.Answer`)."""
    answer_scores: ClassVar[tuple[str, ...]] = ("f1", "bleu1")
    """Per-question answer scores summarised with intervals (a failed question scores 0)."""
    cluster_key: ClassVar[str] = "conversation"
    """What the questions of one item share, for the headline's interval."""
    retrieval_rules: ClassVar[bool] = False
    """Whether every peer's retrieval rule scores each question's ranking (LoCoMo,
    LongMemEval): the summary's rule-sensitivity table."""

    def rule_scorers(self) -> list[Rule]:
        """The retrieval rules that score each ranking (none unless declared)."""
        return default_rules() if self.retrieval_rules else []

    def judge_rubric(self, judge: J.JudgeSpec) -> str | None:
        """The file a judge's text is read from: Zep's grader for ``zep``, else the rubric."""
        return self._judge_source if judge.name.partition("@")[0] == "zep" else self.rubric

    def answer_scorer(self) -> Answer:
        """The answer rule's scorer (with LoCoMo's own score when the headline reads it)."""
        return Answer(self.answer_rule, official="locomo_score" in self.answer_scores)

    def group_order(self) -> list[str]:
        """The order categories are shown in (the rest sorted after them)."""
        return []

    def summary_scorer(self) -> BenchmarkSummary:
        """The summary scorer, with this benchmark's rules."""
        return BenchmarkSummary(
            benchmark=self.answer_rule,
            judges=[j.name for j in self.judges],
            group_key=self.group_key,
            answer_scores=self.answer_scores,
            exclude=self.headline_exclude,
            group_order=self.group_order(),
            headline_rule=self.headline_rule,
        )

    def scoring(self, llm: Any = None) -> ScoringRecord:
        """The answer rule, each judge, the retrieval rules, the summary and the headline.

        Each judge's model and endpoint are recorded when the run's LLM is known; the
        headline is the first judge's accuracy, else the first answer score, over the
        headline's questions.
        """
        judges = []
        for j in self.judges:
            model, url = (
                judge_target(j, self.judge_model, self._endpoints, llm)
                if llm is not None
                else (j.model or self.judge_model, None)
            )
            judges.append(
                Judge(
                    j.name, self.judge_rubric(j), self.judge_exclude, model=model, base_url=url
                ).spec()
            )
        return ScoringRecord(
            scorers=[
                self.answer_scorer().spec(),
                *judges,
                *(r.spec() for r in self.rule_scorers()),
            ],
            summary=self.summary_scorer().spec(),
            headline=headline_spec(
                [j.name for j in self.judges],
                self.answer_scores[0],
                self.headline_exclude,
                self.headline_rule,
                self.cluster_key,
            ),
        )
