from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from mnemometer.scoring import mean_metrics, percentile, rank_metrics

ids = st.lists(st.sampled_from([f"m{i}" for i in range(12)]), max_size=15)
rel = st.sets(st.sampled_from([f"m{i}" for i in range(12)]), min_size=1, max_size=6)
KS = (1, 3, 5, 10)


def by(metrics):
    return {(m.name, m.k): m.value for m in metrics}


def test_known_ranking() -> None:
    m = by(rank_metrics(["x", "a", "y", "b"], {"a", "b", "c"}, [1, 2, 4]))
    assert m[("hit", 1)] == 0 and m[("hit", 2)] == 1
    assert m[("mrr", 4)] == 0.5
    assert m[("recall", 4)] == 2 / 3
    assert m[("precision", 4)] == 0.5
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert math.isclose(m[("ndcg", 4)], dcg / idcg)


@given(ids, rel)
def test_bounds_and_monotonic_in_k(ranked, relevant) -> None:
    m = by(rank_metrics(ranked, relevant, KS))
    for (name, k), v in m.items():
        assert 0.0 <= v <= 1.0 + 1e-12, (name, k, v)
    for name in ("recall", "hit", "mrr"):
        vals = [m[(name, k)] for k in KS]
        assert vals == sorted(vals)


@given(rel)
def test_perfect_ranking_scores_one(relevant) -> None:
    ranked = sorted(relevant)
    m = by(rank_metrics(ranked, relevant, [len(ranked)]))
    k = len(ranked)
    assert m[("recall", k)] == m[("hit", k)] == m[("mrr", k)] == 1.0
    assert math.isclose(m[("ndcg", k)], 1.0) and m[("precision", k)] == 1.0


@given(ids, rel)
def test_duplicates_do_not_count_twice(ranked, relevant) -> None:
    doubled = [x for r in ranked for x in (r, r)]
    assert by(rank_metrics(doubled, relevant, KS)) == by(rank_metrics(ranked, relevant, KS))


def test_mean_skips_not_applicable_and_percentiles() -> None:
    from mnemometer.log import Metric

    out = mean_metrics(
        [
            [Metric(name="a", value=1.0)],
            [Metric(name="a", value=None)],
            [Metric(name="a", value=0.0)],
        ]
    )
    assert out[0].value == 0.5 and out[0].n == 2
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([], 50) is None
