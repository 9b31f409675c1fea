"""Repeats aggregated per item: the item, not item x repeat, is the unit of every test."""

from __future__ import annotations

import numpy as np
import pytest

from mnemometer import stats
from mnemometer.errors import MnemometerError

# 12 items: the candidate fixes 7 the baseline failed and breaks 1 it passed.
BASE = [False] * 8 + [True] * 4
CAND = [True] * 7 + [False] + [False] + [True] * 3
IDS = [f"item-{k:02d}" for k in range(12)]


def test_deterministic_repeats_do_not_shrink_the_item_level_p():
    once = stats.mcnemar_exact(BASE, CAND)
    assert (once.b, once.c) == (7, 1) and once.p_value == pytest.approx(0.0703125)
    # Three copies of the same run, paired as if independent: 21 vs 3, p = 0.000277.
    thrice = stats.mcnemar_exact(BASE * 3, CAND * 3)
    assert thrice.p_value == pytest.approx(0.000277, abs=1e-6)
    items = stats.paired_per_item(BASE * 3, CAND * 3, IDS * 3, how="majority")
    assert items.n == 12 and items.ties == 0 and list(items.repeats) == [3] * 12
    by_item = stats.mcnemar_exact(items.baseline, items.candidate)
    assert (by_item.b, by_item.c, by_item.n) == (7, 1, 12)
    assert by_item.p_value == once.p_value
    # The metric test and the MDE with the item as the unit: repeats add nothing.
    recall_b = np.tile(np.linspace(0, 1, 12), 3)
    recall_c = recall_b + np.tile(np.where(np.arange(12) < 8, 0.25, -0.125), 3)
    m = stats.paired_per_item(recall_b, recall_c, IDS * 3)
    assert m.n == 12
    assert stats.paired_permutation_test(m.deltas).p_value == pytest.approx(
        stats.paired_permutation_test(recall_c[:12] - recall_b[:12]).p_value
    )
    mde = stats.minimum_detectable_effect(m.n, float(np.std(m.deltas, ddof=1)))
    assert mde == pytest.approx(
        stats.minimum_detectable_effect(12, float(np.std(recall_c[:12] - recall_b[:12], ddof=1)))
    )


def test_per_item_mean_and_majority():
    ids = ["a", "b", "a", "c", "b", "a"]
    m = stats.per_item([1.0, 0.0, 0.5, np.nan, 1.0, 0.0], ids)
    assert m.ids == ("a", "b", "c")  # order of first appearance, not sorted
    np.testing.assert_allclose(m.values, [0.5, 0.5, np.nan])
    assert list(m.repeats) == [3, 2, 0]
    v = stats.per_item([True, False, True, True, True, False], ids, how="majority")
    # a: 2 of 3 -> 1; b: 1 of 2 -> tie (NaN, undecided); c: 1 of 1 -> 1
    np.testing.assert_array_equal(v.values, [1.0, np.nan, 1.0])


def test_majority_ties_are_broken_towards_unchanged():
    ids = ["tie-base", "tie-base", "tie-cand", "tie-cand", "tie-both", "tie-both", "x", "x"]
    base = [1, 0, 1, 1, 1, 0, 0, 0]
    cand = [1, 1, 0, 1, 0, 1, 1, 1]
    items = stats.paired_per_item(base, cand, ids, how="majority")
    assert items.ties == 3
    # tie-base takes the candidate's 1; tie-cand takes the baseline's 1; tie-both fails
    # on both sides: none of them is discordant. Only x (0 -> 1) counts.
    np.testing.assert_array_equal(items.baseline, [1, 1, 0, 0])
    np.testing.assert_array_equal(items.candidate, [1, 1, 0, 1])
    m = stats.mcnemar_exact(items.baseline, items.candidate)
    assert (m.b, m.c) == (1, 0)


def test_ties_can_only_raise_mcnemar_p():
    # Against any other tie-breaking rule, the conservative one never has more discordant
    # pairs, so with the same majority it never has a smaller p.
    rng = np.random.default_rng(3)
    for _ in range(200):
        items, reps = int(rng.integers(1, 15)), 2
        ids = np.repeat(np.arange(items), reps)
        base = rng.random(items * reps) < 0.5
        cand = rng.random(items * reps) < 0.6
        ours = stats.paired_per_item(base, cand, ids, how="majority")
        p = stats.mcnemar_exact(ours.baseline, ours.candidate).p_value
        for rule in (0.0, 1.0):  # ties always fail, or always pass
            b = np.nan_to_num(stats.per_item(base, ids, how="majority").values, nan=rule)
            c = np.nan_to_num(stats.per_item(cand, ids, how="majority").values, nan=rule)
            m = stats.mcnemar_exact(b, c)
            o = stats.mcnemar_exact(ours.baseline, ours.candidate)
            assert o.b <= m.b and o.c <= m.c
            if (m.b, m.c) == (o.b, o.c):
                assert p == m.p_value


def test_only_complete_pairs_count():
    ids = ["a", "a", "b", "b", "c"]
    base = [0.2, np.nan, 0.5, 0.7, np.nan]
    cand = [0.4, 0.9, 0.5, np.nan, 0.1]
    items = stats.paired_per_item(base, cand, ids)
    assert items.ids == ("a", "b")  # c has no complete pair
    np.testing.assert_allclose(items.baseline, [0.2, 0.5])
    np.testing.assert_allclose(items.candidate, [0.4, 0.5])
    np.testing.assert_allclose(items.deltas, [0.2, 0.0])
    assert list(items.repeats) == [1, 1]


def test_cluster_labels_work_as_units():
    clusters = ["conv-1"] * 3 + ["conv-2"] * 2
    items = stats.paired_per_item([0, 0, 1, 1, 1], [1, 1, 1, 1, 0], clusters)
    assert items.ids == ("conv-1", "conv-2")
    np.testing.assert_allclose(items.deltas, [2 / 3, -0.5])


def test_item_helpers_reject_bad_input():
    with pytest.raises(MnemometerError, match="one item id per value"):
        stats.per_item([1.0, 2.0], ["a"])
    with pytest.raises(MnemometerError, match="binary"):
        stats.per_item([0.5], ["a"], how="majority")
    with pytest.raises(MnemometerError, match="how must be"):
        stats.per_item([1.0], ["a"], how="median")  # type: ignore[arg-type]
    with pytest.raises(MnemometerError, match="differ in length"):
        stats.paired_per_item([1.0], [1.0, 0.0], ["a", "b"])
    empty = stats.paired_per_item([], [], [])
    assert empty.n == 0 and empty.ties == 0
