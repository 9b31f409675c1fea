"""MemTest's scoring: the six dimensions and the weighted overall, from items alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from mnemometer.log._schema import HeadlineSpec, ItemResult, RunHeader, Summary
from mnemometer.scoring._scorer import BaseScorer
from mnemometer.scoring.memtest.summary import (
    DEFAULT_WEIGHTS,
    DIMENSIONS,
    chain_metrics,
    kendall_tau,
    summarize,
)

HEADLINE = HeadlineSpec(
    metric="overall",
    label="overall",
    scope="the weighted mean of the dimensions with a score",
    composite=True,
)
"""MemTest's headline: a composite of six dimensions, not a mean over items."""


NOT_MEASURED = "storage=none (no read-back, as MemTest's own runner)"
"""Why storage has no score in a run with ``storage=none``."""


class MemtestSummary(BaseScorer):
    """Every dimension's score, the overall weighted score, counts and notes.

    Args:
        k: the cut-off the dimension scores use.
        weights: each dimension's weight in the overall score.
    """

    name: ClassVar[str] = "memtest"
    version: ClassVar[str] = "1"

    def __init__(self, k: int = 10, weights: dict[str, float] | None = None) -> None:
        self.k = int(k)
        self.weights = dict(DEFAULT_WEIGHTS if weights is None else weights)

    def args(self) -> dict[str, Any]:
        """The cut-off and the weights."""
        return {"k": self.k, "weights": self.weights}

    def summarize(
        self, header: RunHeader, items: list[ItemResult], run_dir: Path | None = None
    ) -> Summary:
        """The summary (derived from the items alone: a report recomputes it exactly)."""
        del run_dir
        na: dict[str, str] = {}
        if header.suite_options.get("storage") == "none":
            na["storage"] = NOT_MEASURED
        return summarize(header, items, self.k, self.weights, not_applicable=na)


__all__ = [
    "DEFAULT_WEIGHTS",
    "DIMENSIONS",
    "HEADLINE",
    "MemtestSummary",
    "chain_metrics",
    "kendall_tau",
]
