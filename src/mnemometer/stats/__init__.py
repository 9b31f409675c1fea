"""Paired statistics for comparisons: McNemar, bootstrap intervals, clustering, Holm, MDE.

Everything here is pure numpy/scipy over arrays of paired observations (candidate minus
baseline). Distributions come from :mod:`scipy.stats`; only the resampling loop, the BCa
correction and Holm's step-down are written out, because they are procedures, not
distributions.

Conventions: ``deltas[i] = candidate[i] - baseline[i]``; a positive delta favours the
candidate. Every random draw uses :func:`numpy.random.default_rng` with an explicit seed,
so a comparison is byte-stable.

The package splits along what each part needs: closed-form intervals
(:mod:`._intervals`), resampling (:mod:`._bootstrap`) and significance tests
(:mod:`._significance`). Import from ``mnemometer.stats``.
"""

from mnemometer.stats._bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    BootstrapResult,
    bootstrap_columns,
    paired_bootstrap,
)
from mnemometer.stats._intervals import Interval, cluster_robust_interval
from mnemometer.stats._significance import (
    McNemar,
    holm,
    mcnemar_exact,
    mcnemar_p,
    minimum_detectable_effect,
    paired_t_p,
)

__all__ = [
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "BootstrapResult",
    "Interval",
    "McNemar",
    "bootstrap_columns",
    "cluster_robust_interval",
    "holm",
    "mcnemar_exact",
    "mcnemar_p",
    "minimum_detectable_effect",
    "paired_bootstrap",
    "paired_t_p",
]
