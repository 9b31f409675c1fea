"""``locomo``: LoCoMo's QA over its 10 conversations, scored by its official rules."""

from __future__ import annotations

from typing import Any, ClassVar

from mnemometer.datasets._locomo import LOCOMO_CATEGORIES
from mnemometer.datasets._models import Dataset, Query
from mnemometer.log._schema import ItemResult
from mnemometer.scoring import judges as J
from mnemometer.scoring import qa
from mnemometer.suites.benchmarks._suite import BenchmarkSuite
from mnemometer.suites.benchmarks._summary import score_metrics


class LocomoSuite(BenchmarkSuite):
    """LoCoMo (snap-research, ``locomo10.json``): one item per conversation.

    Scores: LoCoMo's official token F1 by category (``qa.locomo_f1``), BLEU-1, the category 5
    "not mentioned" rule, evidence recall at turn and session level, and any judges (which,
    like mem0's J, skip category 5). Headline numbers are over categories 1-4, the field's
    convention; category 5 is reported separately.
    """

    name: ClassVar[str] = "locomo"
    version: ClassVar[str] = "1"
    reader_format: ClassVar[str] = "locomo"
    group_key: ClassVar[str] = "category"
    headline_rule: ClassVar[str] = (
        "LoCoMo categories 1-4 (multi-hop, temporal, open-domain, single-hop); category 5 "
        "(adversarial) is scored by its own rule and reported separately"
    )

    def load(self) -> Dataset:
        """``locomo10.json`` through the ``locomo`` reader."""
        from mnemometer.datasets._io import load_dataset

        return load_dataset(self.path, format="locomo")

    def _scores(self, q: Query, hypothesis: str) -> list[dict[str, Any]]:
        cat = q.metadata.get("category")
        if cat == 5:
            return [{"name": "adversarial", "value": qa.adversarial_score(hypothesis)}]
        f1 = qa.locomo_f1(hypothesis, q.answer, cat)
        gold = qa.locomo_gold(q.answer, cat) if q.answer is not None else None
        return [
            {"name": "f1", "value": f1},
            {"name": "bleu1", "value": qa.bleu1(hypothesis, gold) if gold is not None else None},
        ]

    def judge_gold(self, q: Query) -> str | None:
        """Category 5 is not judged (mem0's J skips it too); the rest by their answer."""
        return None if q.metadata.get("category") == 5 else q.answer

    def _success(
        self, q: Query, hypothesis: str, verdicts: list[J.Verdict], metrics: list[dict[str, Any]]
    ) -> bool:
        if q.metadata.get("category") == 5:
            return qa.adversarial_score(hypothesis) == 1.0
        return super()._success(q, hypothesis, verdicts, metrics)

    def headline(self, rows: list[ItemResult]) -> list[ItemResult]:
        """Categories 1-4."""
        return [r for r in rows if r.groups.get("category") != "adversarial"]

    def group_order(self, values: list[str]) -> list[str]:
        """LoCoMo's category order (1 to 5)."""
        order = {w: i for i, w in LOCOMO_CATEGORIES.items()}
        return sorted(values, key=lambda v: (order.get(v, 99), v))

    def extra_sections(self, rows: list[ItemResult]) -> dict[str, Any]:
        """F1 over categories 1-4 (the field's convention) and category 5 separately."""
        head = score_metrics(self.headline(rows), [], ("f1",))
        five = [r for r in rows if r.groups.get("category") == "adversarial"]
        adv = score_metrics(five, [], ("adversarial",))
        return {
            "f1": {
                "categories_1_4": head[0].model_dump() if head else None,
                "category_5": adv[0].model_dump() if adv else None,
            }
        }
