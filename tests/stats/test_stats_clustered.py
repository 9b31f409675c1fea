"""CR2 / Bell-McCaffrey against independent implementations.

The module computes the CR2 variance of a mean with a closed form. Here it is checked
against the general matrix recipe (Bell & McCaffrey 2002; Imbens & Kolesár 2016) built
from the hat matrix, against statsmodels' cluster-robust OLS and against scipy's t test on
cluster means (both equal to CR2 when clusters are equally sized).
"""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats as scipy_stats

from mnemometer.errors import MnemometerError
from mnemometer.stats import cluster_robust_test
from mnemometer.stats._clustered import MIN_CLUSTERS, too_few_clusters


def _matrix_cr2(values: np.ndarray, labels: list[str]) -> tuple[float, float]:
    """CR2 standard error and Bell-McCaffrey df from the general matrix formulas."""
    n = len(values)
    x = np.ones((n, 1))
    bread = np.linalg.inv(x.T @ x)
    hat = x @ bread @ x.T
    resid = values - values.mean()
    groups = {g: [i for i, lab in enumerate(labels) if lab == g] for g in sorted(set(labels))}
    meat = np.zeros((1, 1))
    b = np.zeros((n, n))
    m = np.eye(n) - hat
    for ii in groups.values():
        w, v = np.linalg.eigh(np.eye(len(ii)) - hat[np.ix_(ii, ii)])
        a_g = v @ np.diag(w**-0.5) @ v.T
        u = x[ii].T @ a_g @ resid[ii]
        meat += np.outer(u, u)
        c = np.zeros(n)
        c[ii] = (a_g @ x[ii]).ravel() * bread[0, 0]
        col = m @ c
        b += np.outer(col, col)
    var = float((bread @ meat @ bread)[0, 0])
    return var**0.5, float(np.trace(b) ** 2 / np.trace(b @ b))


@pytest.mark.parametrize("seed", range(4))
def test_cr2_matches_the_matrix_formulas_with_unequal_clusters(seed: int):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 30, size=int(rng.integers(5, 12)))
    labels = [f"c{g}" for g, size in enumerate(sizes) for _ in range(size)]
    # Cluster effects make the clustering matter; binary-ish values like real scores.
    effects = rng.normal(scale=0.3, size=len(sizes))
    values = np.array(
        [effects[g] + rng.normal() for g, size in enumerate(sizes) for _ in range(size)]
    )
    test = cluster_robust_test(values, labels)
    se, df = _matrix_cr2(values, labels)
    assert test.se == pytest.approx(se, rel=1e-9)
    assert test.df == pytest.approx(df, rel=1e-9)
    # Unequal sizes cost degrees of freedom: fewer than G - 1.
    assert test.df < len(sizes) - 1
    t = test.estimate / test.se
    assert test.p_value == pytest.approx(2 * scipy_stats.t.sf(abs(t), df), rel=1e-9)


def test_equal_clusters_agree_with_statsmodels_and_a_t_test_on_cluster_means():
    rng = np.random.default_rng(7)
    g, size = 8, 6
    labels = [f"c{i}" for i in range(g) for _ in range(size)]
    values = rng.normal(loc=0.2, size=g * size) + np.repeat(rng.normal(size=g), size)
    test = cluster_robust_test(values, labels, confidence=0.9)

    codes = np.repeat(np.arange(g), size)
    fit = sm.OLS(values, np.ones((g * size, 1))).fit(
        cov_type="cluster", cov_kwds={"groups": codes}, use_t=True
    )
    assert test.se == pytest.approx(float(fit.bse[0]), rel=1e-9)
    assert test.df == pytest.approx(g - 1, rel=1e-9)
    assert test.p_value == pytest.approx(float(fit.pvalues[0]), rel=1e-9)
    low, high = fit.conf_int(alpha=0.1)[0]
    assert (test.interval.low, test.interval.high) == (
        pytest.approx(low, rel=1e-9),
        pytest.approx(high, rel=1e-9),
    )

    means = values.reshape(g, size).mean(axis=1)
    assert test.p_value == pytest.approx(scipy_stats.ttest_1samp(means, 0.0).pvalue, rel=1e-9)


def test_below_the_minimum_no_claim_is_made():
    assert too_few_clusters(MIN_CLUSTERS) is None
    why = too_few_clusters(MIN_CLUSTERS - 1)
    assert why is not None and f"fewer than {MIN_CLUSTERS}" in why
    with pytest.raises(MnemometerError, match="two clusters"):
        cluster_robust_test([0.1, 0.2, 0.3], ["a", "a", "a"])
