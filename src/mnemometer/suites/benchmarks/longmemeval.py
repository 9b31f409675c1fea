"""``longmemeval``: LongMemEval (S, M, oracle), one haystack per question, streamed."""

from __future__ import annotations

from typing import ClassVar

from mnemometer.datasets._longmemeval import load_haystack, longmemeval_index
from mnemometer.datasets._models import Conversation, Dataset, Query
from mnemometer.suites.benchmarks._suite import BenchmarkSuite


class LongMemEvalSuite(BenchmarkSuite):
    """LongMemEval: each question's haystack is its own conversation (item).

    The file is indexed in one streaming pass (constant memory; the 2.7 GB M file never
    sits in memory); each item reads its haystack back by byte offset and checks its
    SHA-256. Retrieval metrics are LongMemEval's own (``recall_any``, ``recall_all``,
    ``ndcg_any`` at turn level and at session level with the growing effective k), over
    non-abstention questions. Its official QA metric is the ``longmemeval`` judge.
    """

    name: ClassVar[str] = "longmemeval"
    version: ClassVar[str] = "1"
    reader_format: ClassVar[str] = "longmemeval"
    group_key: ClassVar[str] = "type"
    retrieval_rules: ClassVar[bool] = True

    def load(self) -> Dataset:
        """The streamed index: questions, and haystack stubs with byte offsets."""
        return longmemeval_index(self.path)

    def conversation(
        self, stub: Conversation, questions: list[Query]
    ) -> tuple[Conversation, list[Query]]:
        """The haystack, read back from the file (the questions keep any errata)."""
        conv, _ = load_haystack(self.path, stub)
        return conv, questions
