"""Scoring, a stage of its own: scorers turn records into metrics, one engine summarises.

Per-item scorers (:class:`Scorer`) and summary scorers (:class:`SummaryScorer`) register in
the ``mnemometer.scorers`` entry-point group; a run records their specs; :func:`summarize`
builds a run's summary with its declared headline and the one interval policy
(:mod:`mnemometer.scoring.intervals`). See docs/design/scoring.md.
"""

from mnemometer.scoring._scorer import (
    BaseScorer,
    Scorer,
    Scores,
    SummaryScorer,
    apply,
    build,
    register_scorer,
    scorer_names,
    summarize,
    unregister_scorer,
)
from mnemometer.scoring.aggregate import (
    distribution,
    generic_summary,
    latency_metrics,
    mean_metrics,
    percentile,
)
from mnemometer.scoring.headline import headline, item_value
from mnemometer.scoring.intervals import interval
from mnemometer.scoring.retrieval import dedupe, rank_metrics, rank_values
from mnemometer.scoring.summaries import MeansSummary

__all__ = [
    "BaseScorer",
    "MeansSummary",
    "Scorer",
    "Scores",
    "SummaryScorer",
    "apply",
    "build",
    "dedupe",
    "distribution",
    "generic_summary",
    "headline",
    "interval",
    "item_value",
    "latency_metrics",
    "mean_metrics",
    "percentile",
    "rank_metrics",
    "rank_values",
    "register_scorer",
    "scorer_names",
    "summarize",
    "unregister_scorer",
]
