"""``locomo``: LoCoMo's QA over its 10 conversations, scored by its official rules."""

from __future__ import annotations

from typing import Any, ClassVar

from mnemometer.datasets._locomo import LOCOMO_CATEGORIES
from mnemometer.datasets._models import Dataset, Query
from mnemometer.suites.benchmarks._suite import BenchmarkSuite

ADVERSARIAL = {"category": ["adversarial"]}
"""Category 5: scored by its own rule, left out of the headline and of the judges."""


class LocomoSuite(BenchmarkSuite):
    """LoCoMo (snap-research, ``locomo10.json``): one item per conversation.

    Scores (:class:`mnemometer.scoring.benchmark.Answer` with LoCoMo's rule): the official
    token F1 by category, BLEU-1, the category 5 "not mentioned" rule, evidence recall at
    turn and session level, and any judges (which, like mem0's J, skip category 5).
    Headline numbers are over categories 1-4, the field's convention; category 5 is
    reported separately.
    """

    name: ClassVar[str] = "locomo"
    version: ClassVar[str] = "1"
    reader_format: ClassVar[str] = "locomo"
    group_key: ClassVar[str] = "category"
    retrieval_rules: ClassVar[bool] = True
    answer_rule: ClassVar[str] = "locomo"
    headline_exclude: ClassVar[dict[str, list[str]]] = ADVERSARIAL
    judge_exclude: ClassVar[dict[str, list[str]]] = ADVERSARIAL
    headline_rule: ClassVar[str] = (
        "LoCoMo categories 1-4 (multi-hop, temporal, open-domain, single-hop); category 5 "
        "(adversarial) is scored by its own rule and reported separately"
    )

    def load(self) -> Dataset:
        """``locomo10.json`` through the ``locomo`` reader."""
        from mnemometer.datasets._io import load_dataset

        return load_dataset(self.path, format="locomo")

    def facts(self, q: Query) -> dict[str, Any]:
        """The question's type and its category code (the F1 rule depends on it)."""
        return {**super().facts(q), "category": q.metadata.get("category")}

    def group_order(self) -> list[str]:
        """LoCoMo's category order (1 to 5)."""
        return [LOCOMO_CATEGORIES[code] for code in sorted(LOCOMO_CATEGORIES)]
