"""``memoryagentbench``: MemoryAgentBench's four competencies, scored by its own metrics."""

from __future__ import annotations

from typing import Any, ClassVar

from mnemometer.datasets._models import Dataset, Query
from mnemometer.suites.benchmarks._suite import BenchmarkSuite


class MemoryAgentBenchSuite(BenchmarkSuite):
    """MemoryAgentBench (a split's Parquet, or its rows as JSON Lines): one item per row.

    Each row's context is ingested in chunks ("inject once, query many"), then its
    questions are asked. Every question gets substring exact match, exact match and F1
    against all of its accepted answers, and ``score``: the metric the benchmark reports
    for its source (substring exact match for Accurate Retrieval and Conflict Resolution,
    exact match for in-context classification and DetectiveQA, recall@5 for
    recommendation; see :mod:`mnemometer.scoring.memoryagentbench`). Results group by
    source; ``competency`` holds the score per competency (AR, TTL, LRU, CR).
    """

    name: ClassVar[str] = "memoryagentbench"
    version: ClassVar[str] = "1"
    reader_format: ClassVar[str] = "memoryagentbench"
    group_key: ClassVar[str] = "type"
    turn_ks: ClassVar[tuple[int, ...]] = ()
    session_ks: ClassVar[tuple[int, ...]] = ()
    answer_rule: ClassVar[str] = "memoryagentbench"
    answer_scores: ClassVar[tuple[str, ...]] = ("score", "substring_exact_match", "f1")
    headline_rule: ClassVar[str] = (
        "every question; 'score' is the benchmark's metric for the question's source"
    )
    success_definition: ClassVar[str] = (
        "a question succeeds when the first judge says its answer is correct (with no judge: "
        "its source's official score is 1, or at least 0.5 for F1 and recall@5); a question "
        "whose reader call failed fails"
    )

    def load(self) -> Dataset:
        """The split through the ``memoryagentbench`` reader."""
        from mnemometer.datasets._io import load_dataset

        return load_dataset(self.path, format="memoryagentbench")

    def facts(self, q: Query) -> dict[str, Any]:
        """Every accepted answer and the question's source (its official metric's key)."""
        return {
            **super().facts(q),
            "answers": list(q.metadata.get("answers") or [q.answer or ""]),
            "source": str(q.metadata.get("source", q.type)),
        }

    def groups(self, q: Query) -> dict[str, str]:
        """The source (``type``) and the competency."""
        return {**super().groups(q), "competency": str(q.metadata.get("competency", "?"))}
