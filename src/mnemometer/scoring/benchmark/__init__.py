"""The long-conversation benchmarks' scoring: answers, judges, the summary, the headline.

Per question: :class:`Answer` (each benchmark's own answer rule) and one :class:`Judge`
per judge. Per run: :class:`BenchmarkSummary` (accuracy per judge and F1 with
cluster-robust intervals, categories, judge agreement, latency, cost) and each question's
success. What differs between benchmarks is data (which questions the headline is over,
the category order) or a small profile here (LoCoMo's category-5 section,
MemoryAgentBench's competencies); nothing reads the suite that produced the run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from mnemometer.log._schema import HeadlineSpec, ItemResult, RunHeader, Summary, Table
from mnemometer.scoring import memoryagentbench as mab
from mnemometer.scoring._scorer import BaseScorer
from mnemometer.scoring.benchmark.answers import BENCHMARKS, LOCOMO_CODES, Answer, Judge, category
from mnemometer.scoring.benchmark.summary import (
    expand_failures,
    judge_column,
    score_metrics,
    summarize_benchmark,
)

PINS_FILE = "pins.json"
"""The reader and every judge in full, written by the suite when it connects them."""


class BenchmarkSummary(BaseScorer):
    """The summary of a long-conversation benchmark run, and each question's success.

    Args:
        benchmark: whose rules (:data:`~mnemometer.scoring.benchmark.answers.BENCHMARKS`).
        judges: the judges' names, in order (the first decides success).
        group_key: the breakdown key (``category`` for LoCoMo, ``type`` for the others).
        answer_scores: the answer scores summarised with intervals (the first leads).
        exclude: group key -> values left out of the headline numbers (LoCoMo: category 5).
        group_order: categories in the order they are shown (the rest sorted after them).
        headline_rule: which questions the headline numbers are over, in words.
    """

    name: ClassVar[str] = "benchmark"
    version: ClassVar[str] = "1"

    def __init__(
        self,
        benchmark: str = "qa",
        judges: Sequence[str] = (),
        group_key: str = "type",
        answer_scores: Sequence[str] = ("f1", "bleu1"),
        exclude: dict[str, list[str]] | None = None,
        group_order: Sequence[str] = (),
        headline_rule: str = "every question",
    ) -> None:
        if benchmark not in BENCHMARKS:
            raise ValueError(f"unknown benchmark {benchmark!r}")
        self.benchmark = benchmark
        self.judges = list(judges)
        self.group_key = group_key
        self.answer_scores = list(answer_scores)
        self.exclude = {k: list(v) for k, v in (exclude or {}).items()}
        self.group_order = list(group_order)
        self.headline_rule = headline_rule

    def args(self) -> dict[str, Any]:
        """Everything the summary depends on."""
        return {
            "benchmark": self.benchmark,
            "judges": self.judges,
            "group_key": self.group_key,
            "answer_scores": self.answer_scores,
            "exclude": self.exclude,
            "group_order": self.group_order,
            "headline_rule": self.headline_rule,
        }

    # ---- per question --------------------------------------------------------------------

    def success(self, record: dict[str, Any]) -> bool:
        """The first judge's verdict; with no judge, the benchmark's answer rule.

        Without a judge: LoCoMo category 5 by its "not mentioned" rule, MemoryAgentBench by
        its source's score (1, or 0.5 for F1 and recall@5), the others F1 >= 0.5. A
        question whose reader call failed fails.
        """
        if record.get("status", "ok") != "ok":
            return False
        values = {m["name"]: m["value"] for m in record.get("metrics") or [] if m.get("k") is None}
        first = f"judge:{self.judges[0]}" if self.judges else None
        if first in values:  # a question the first judge skips falls to the answer rule
            return values[first] == 1.0
        if self.benchmark == "locomo" and category(record) == 5:
            return values.get("adversarial") == 1.0
        if self.benchmark == "memoryagentbench":
            extra = record.get("extra") or {}
            source = str(extra.get("source") or (record.get("groups") or {}).get("type", ""))
            floor = 0.5 if mab.official_metric(source) in ("f1", "recall@5") else 1.0
            score = values.get("score")
            return score is not None and score >= floor
        f1 = values.get("f1")
        return f1 is not None and f1 >= 0.5

    # ---- the summary ---------------------------------------------------------------------

    def summarize(
        self, header: RunHeader, items: list[ItemResult], run_dir: Path | None = None
    ) -> Summary:
        """Accuracy per judge and F1 with cluster-robust intervals, categories, latency, cost."""
        pins: dict[str, Any] = {}
        if run_dir is not None and (run_dir / PINS_FILE).is_file():
            pins = json.loads((run_dir / PINS_FILE).read_text("utf-8"))
        return summarize_benchmark(self, header, items, pins)

    def headline(self, rows: list[ItemResult]) -> list[ItemResult]:
        """The questions the headline numbers are over."""
        return [r for r in rows if not any(r.groups.get(k) in vs for k, vs in self.exclude.items())]

    def order(self, values: list[str]) -> list[str]:
        """Categories in the declared order, the rest sorted after them."""
        rank = {v: i for i, v in enumerate(self.group_order)}
        return sorted(values, key=lambda v: (rank.get(v, len(rank)), v))

    def notes(self, rows: list[ItemResult]) -> list[str]:
        """MemoryAgentBench: the sources it grades with a GPT-4o judge, when none was given."""
        if self.benchmark != "memoryagentbench" or self.judges:
            return []
        judged = sorted(
            {
                str(r.groups.get("type"))
                for r in rows
                if str(r.groups.get("type", "")).lower().startswith(mab.JUDGED_UPSTREAM)
            }
        )
        if not judged:
            return []
        return [
            f"MemoryAgentBench grades {', '.join(judged)} with a GPT-4o judge; scored here by "
            "substring exact match or F1 (pass --judge to add a judge)"
        ]

    def extra_sections(self, rows: list[ItemResult]) -> dict[str, Any]:
        """LoCoMo: F1 over categories 1-4 and category 5; MemoryAgentBench: competencies."""
        if self.benchmark == "locomo":
            head = score_metrics(self.headline(rows), [], ("f1",))
            five = [r for r in rows if r.groups.get("category") == "adversarial"]
            adv = score_metrics(five, [], ("adversarial",))
            return {
                "f1": {
                    "categories_1_4": head[0].model_dump() if head else None,
                    "category_5": adv[0].model_dump() if adv else None,
                }
            }
        if self.benchmark == "memoryagentbench":
            return {
                "competency": {
                    c: [m.model_dump() for m in ms] for c, ms in _by_competency(rows).items()
                }
            }
        return {}

    def extra_tables(self, rows: list[ItemResult]) -> list[Table]:
        """MemoryAgentBench: the official score and substring EM per competency."""
        if self.benchmark != "memoryagentbench":
            return []
        out = []
        for c, ms in _by_competency(rows).items():
            get = {m.name: m for m in ms}
            score, sub = get.get("score"), get.get("substring_exact_match")
            out.append([c, str(score.n if score else 0), _cell(score), _cell(sub)])
        return [
            Table(
                name="competency",
                title="By competency (AR, TTL, LRU, CR)",
                columns=["competency", "n", "score [95% CI]", "substring EM [95% CI]"],
                rows=out,
            )
        ]


def _by_competency(rows: list[ItemResult]) -> dict[str, list[Any]]:
    by: dict[str, list[ItemResult]] = {}
    for r in rows:
        by.setdefault(str(r.groups.get("competency", "?")), []).append(r)
    names = ("score", "substring_exact_match")
    return {c: score_metrics(by[c], [], names) for c in sorted(by)}


def _cell(m: Any) -> str:
    if m is None or m.value is None:
        return "-"
    iv = m.interval
    if iv is None or iv.low is None or iv.high is None:
        return f"{m.value:.3f}"
    return f"{m.value:.3f} [{iv.low:.3f}, {iv.high:.3f}]"


def headline_spec(
    judges: Sequence[str],
    answer_score: str,
    exclude: dict[str, list[str]],
    scope: str,
    cluster: str = "conversation",
) -> HeadlineSpec:
    """A benchmark's headline: the first judge's accuracy, else its first answer score."""
    if judges:
        return HeadlineSpec(
            metric=f"judge:{judges[0]}",
            label=f"accuracy ({judges[0]} judge)",
            scope=scope,
            exclude=exclude,
            binary=True,
            cluster=cluster,
        )
    return HeadlineSpec(
        metric=answer_score,
        label=answer_score.upper() if answer_score == "f1" else answer_score,
        scope=scope,
        exclude=exclude,
        cluster=cluster,
    )


__all__ = [
    "LOCOMO_CODES",
    "PINS_FILE",
    "Answer",
    "BenchmarkSummary",
    "Judge",
    "expand_failures",
    "headline_spec",
    "judge_column",
    "score_metrics",
]
