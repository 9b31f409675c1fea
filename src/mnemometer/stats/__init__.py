"""Paired statistics for comparisons: tests, intervals, clustering, repeats, Holm, MDE.

Everything here is pure numpy/scipy over arrays of paired observations (candidate minus
baseline). Distributions come from :mod:`scipy.stats`, except the normal and t quantiles
of the closed-form intervals (``_quantiles``: checked against scipy to 1e-12, so a suite's
summary needs no scipy import); the resampling loops, the BCa correction, the sign-flip
enumeration and Holm's step-down are written out, because they are procedures.

Conventions: ``deltas[i] = candidate[i] - baseline[i]``; a positive delta favours the
candidate. Every random draw uses :func:`numpy.random.default_rng` with an explicit seed,
so a comparison is byte-stable. Everything is computed in float64, and every interval is
clipped to the feasible range of what it estimates (see :func:`delta_bounds`).

The package splits along what each part needs: closed-form intervals
(:mod:`._intervals`), resampling intervals (:mod:`._bootstrap`), significance tests
(:mod:`._significance`), inference over clustered items (:mod:`._clustered`) and repeats
aggregated per item (:mod:`._items`). Import
everything from ``mnemometer.stats``.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mnemometer.stats._bootstrap import BootstrapResult, bootstrap_columns, paired_bootstrap
    from mnemometer.stats._clustered import (
        ClusteredTest,
        cluster_robust_interval,
        cluster_robust_test,
        too_few_clusters,
    )
    from mnemometer.stats._common import DEFAULT_RESAMPLES, DEFAULT_SEED
    from mnemometer.stats._intervals import (
        MIN_CLUSTERS,
        Bounds,
        Interval,
        clip,
        delta_bounds,
        mean_interval,
        newcombe,
        wilson,
    )
    from mnemometer.stats._items import PairedPerItem, PerItem, paired_per_item, per_item
    from mnemometer.stats._significance import (
        EXACT_MAX_PAIRS,
        McNemar,
        PairedTest,
        holm,
        mcnemar_exact,
        mcnemar_p,
        minimum_detectable_effect,
        paired_permutation_test,
        paired_t_p,
        permutation_columns,
    )

# scipy costs about 0.5 s to import: load a name only when it is first used, so the CLI
# and a report start fast.
_WHERE = {
    "BootstrapResult": "mnemometer.stats._bootstrap",
    "ClusteredTest": "mnemometer.stats._clustered",
    "cluster_robust_test": "mnemometer.stats._clustered",
    "too_few_clusters": "mnemometer.stats._clustered",
    "MIN_CLUSTERS": "mnemometer.stats._intervals",
    "Bounds": "mnemometer.stats._intervals",
    "DEFAULT_RESAMPLES": "mnemometer.stats._common",
    "DEFAULT_SEED": "mnemometer.stats._common",
    "EXACT_MAX_PAIRS": "mnemometer.stats._significance",
    "Interval": "mnemometer.stats._intervals",
    "McNemar": "mnemometer.stats._significance",
    "PairedPerItem": "mnemometer.stats._items",
    "PairedTest": "mnemometer.stats._significance",
    "PerItem": "mnemometer.stats._items",
    "bootstrap_columns": "mnemometer.stats._bootstrap",
    "clip": "mnemometer.stats._intervals",
    "cluster_robust_interval": "mnemometer.stats._clustered",
    "delta_bounds": "mnemometer.stats._intervals",
    "holm": "mnemometer.stats._significance",
    "mcnemar_exact": "mnemometer.stats._significance",
    "mcnemar_p": "mnemometer.stats._significance",
    "mean_interval": "mnemometer.stats._intervals",
    "minimum_detectable_effect": "mnemometer.stats._significance",
    "newcombe": "mnemometer.stats._intervals",
    "paired_bootstrap": "mnemometer.stats._bootstrap",
    "paired_per_item": "mnemometer.stats._items",
    "paired_permutation_test": "mnemometer.stats._significance",
    "paired_t_p": "mnemometer.stats._significance",
    "per_item": "mnemometer.stats._items",
    "permutation_columns": "mnemometer.stats._significance",
    "wilson": "mnemometer.stats._intervals",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mnemometer.stats' has no attribute {name!r}")


__all__ = [
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "EXACT_MAX_PAIRS",
    "MIN_CLUSTERS",
    "BootstrapResult",
    "ClusteredTest",
    "Bounds",
    "Interval",
    "McNemar",
    "PairedPerItem",
    "PairedTest",
    "PerItem",
    "bootstrap_columns",
    "clip",
    "cluster_robust_interval",
    "cluster_robust_test",
    "delta_bounds",
    "holm",
    "mcnemar_exact",
    "mcnemar_p",
    "mean_interval",
    "minimum_detectable_effect",
    "newcombe",
    "paired_bootstrap",
    "paired_per_item",
    "paired_permutation_test",
    "paired_t_p",
    "per_item",
    "permutation_columns",
    "too_few_clusters",
    "wilson",
]
