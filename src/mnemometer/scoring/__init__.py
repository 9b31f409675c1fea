"""Scorers: retrieval metrics (and, as suites arrive, text grading and similarity)."""

from mnemometer.scoring.retrieval import (
    dedupe,
    latency_metrics,
    mean_metrics,
    percentile,
    rank_metrics,
)

__all__ = ["dedupe", "latency_metrics", "mean_metrics", "percentile", "rank_metrics"]
