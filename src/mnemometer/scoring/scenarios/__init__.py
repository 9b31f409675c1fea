"""The scenarios suite's scoring: its summary, the seed's rating bands, latency scaling."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from mnemometer.log._schema import ItemResult, RunHeader, Summary
from mnemometer.scoring._scorer import BaseScorer
from mnemometer.scoring.scenarios.summary import mean_ci, summarize_items


class ScenariosSummary(BaseScorer):
    """Accuracy with 95% intervals per scenario and per noise level; bands; latency."""

    name: ClassVar[str] = "scenarios"
    version: ClassVar[str] = "1"

    def summarize(
        self, header: RunHeader, items: list[ItemResult], run_dir: Path | None = None
    ) -> Summary:
        """The summary of a scenarios run (from its items alone)."""
        del run_dir
        return summarize_items(header, items)


__all__ = ["ScenariosSummary", "mean_ci", "summarize_items"]
