"""Scorers: retrieval metrics, aggregates (and, as suites move here, text grading, judges)."""

from mnemometer.scoring.aggregate import (
    distribution,
    generic_summary,
    latency_metrics,
    mean_metrics,
    percentile,
)
from mnemometer.scoring.retrieval import dedupe, rank_metrics, rank_values

__all__ = [
    "dedupe",
    "distribution",
    "generic_summary",
    "latency_metrics",
    "mean_metrics",
    "percentile",
    "rank_metrics",
    "rank_values",
]
