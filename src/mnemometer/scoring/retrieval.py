"""Retrieval metrics at k over a ranked list of ids and a complete relevant set."""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from itertools import accumulate
from typing import Any, ClassVar

from mnemometer.config import list_adapter
from mnemometer.log._schema import ItemResult, Metric
from mnemometer.scoring._scorer import BaseScorer

RANK_METRICS = ("precision", "recall", "hit", "mrr", "ndcg")
"""Per-query metrics computed at every k."""


def dedupe(ids: Iterable[str]) -> list[str]:
    """Keep the first occurrence of each id (a store may return versions of one memory)."""
    return list(dict.fromkeys(ids))


def duplicate_count(ids: Sequence[str]) -> int:
    """How many entries of ``ids`` repeat an earlier one (what :func:`dedupe` drops)."""
    return len(ids) - len(set(ids))


def cutoff_tie(scores: Sequence[float], k: int) -> dict[str, float | str | bool]:
    """Whether the top-``k`` cut-off falls inside a tie, as a plain metric dict.

    ``scores`` are a ranking's hit scores, best first, with one hit past the cut-off when
    the store has one. The value is 1 when the ``k``-th and ``(k+1)``-th hits score the
    same: which of the tied memories made the cut was then decided by the store's tie
    rule, not by its scores. Fewer than ``k + 1`` hits cut nothing off: 0. The mean over
    queries is the share of queries whose cut-off falls inside a tie.
    """
    tie = len(scores) > k and scores[k - 1] == scores[k]
    # No ``k`` field: the cut-off is the suite's top_k (in the run header), and a metric
    # without k is shown by every report beside the rank table.
    return {
        "name": "tie_at_cutoff",
        "value": 1.0 if tie else 0.0,
        "higher_is_better": False,
    }


def rank_values(
    ranked: Sequence[str], relevant: Iterable[str], ks: Sequence[int]
) -> list[dict[str, float | int | str]]:
    """Precision, recall, hit, MRR and nDCG (binary relevance) at each k, as plain dicts.

    Recall divides by the whole relevant set; precision by k. ``relevant`` must be non-empty.
    The dicts validate as :class:`Metric`; the runner's hot path builds item results from
    them in one validation instead of one object per metric.
    """
    rel = set(relevant)
    if not rel:
        raise ValueError("rank metrics need a non-empty relevant set")
    ranked = dedupe(ranked)
    hits = [i for i, mid in enumerate(ranked) if mid in rel]  # 0-based ranks, ascending
    gains = list(accumulate(_discount(r) for r in hits))  # DCG after each relevant hit
    n_rel = len(rel)
    out: list[dict[str, float | int | str]] = []
    for k in ks:
        n = bisect_left(hits, k)  # relevant hits ranked within the top k
        idcg = _ideal(min(n_rel, k))
        out += [
            {"name": "precision", "k": k, "value": n / k},
            {"name": "recall", "k": k, "value": n / n_rel},
            {"name": "hit", "k": k, "value": 1.0 if n else 0.0},
            {"name": "mrr", "k": k, "value": 1.0 / (hits[0] + 1) if n else 0.0},
            {"name": "ndcg", "k": k, "value": (gains[n - 1] if n else 0.0) / idcg},
        ]
    return out


_DISCOUNTS = [1.0 / math.log2(r + 2) for r in range(1024)]
_IDEAL = [0.0, *accumulate(_DISCOUNTS)]


def _discount(rank: int) -> float:
    return _DISCOUNTS[rank] if rank < 1024 else 1.0 / math.log2(rank + 2)


def _ideal(n: int) -> float:
    return _IDEAL[n] if n <= 1024 else _IDEAL[1024] + sum(map(_discount, range(1024, n)))


def rank_metrics(ranked: Sequence[str], relevant: Iterable[str], ks: Sequence[int]) -> list[Metric]:
    """:func:`rank_values` as :class:`Metric` objects (validated in one call)."""
    return list_adapter(Metric).validate_python(rank_values(ranked, relevant, ks))


def failed_metrics(ks: Sequence[int]) -> list[Metric]:
    """The metrics of an item whose call failed: every value 0 (a failure, not a gap)."""
    return [Metric(name=m, k=k, value=0.0) for k in ks for m in RANK_METRICS]


class Ranking(BaseScorer):
    """A ranking against the query's relevant ids (the ``ranking`` scorer).

    Precision, recall, hit, MRR and nDCG at each k, whether the cut-off fell inside a tie,
    and abstention on negative queries. Reads the record's ``retrieved`` hits (the first ``top_k``, in order, with scores),
    ``expected`` ids and ``extra.next_hit`` (the hit after the cut-off, when the store had
    one). A negative query (no relevant ids) scores ``abstention`` for a store that
    declares an empty result means "nothing relevant" (``abstains``), else nothing.

    Args:
        ks: the cut-offs.
        top_k: hits asked for (the cut-off the tie is checked at).
        capabilities: the store's optional capabilities (``abstains`` among them).
    """

    name: ClassVar[str] = "ranking"
    version: ClassVar[str] = "1"

    def __init__(
        self,
        ks: Sequence[int] = (1, 5, 10, 20),
        top_k: int = 20,
        capabilities: Sequence[str] = (),
    ) -> None:
        self.ks = [int(k) for k in ks]
        self.top_k = int(top_k)
        self.abstains = "abstains" in capabilities

    def args(self) -> dict[str, Any]:
        """Cut-offs and depth (the store's capabilities come from the run header)."""
        return {"ks": self.ks, "top_k": self.top_k}

    def score(self, record: dict[str, Any]) -> list[dict[str, Any]]:
        """The ranking's metrics (a failed search: 0 on every metric)."""
        relevant = record.get("expected") or []
        if record.get("status", "ok") != "ok":
            if not relevant:
                return [{"name": "abstention", "value": 0.0}]
            return [{"name": m, "k": k, "value": 0.0} for k in self.ks for m in RANK_METRICS]
        hits = record.get("retrieved") or []
        ranked = dedupe(h["id"] for h in hits)
        if not relevant:
            value = (0.0 if ranked else 1.0) if self.abstains else None
            return [{"name": "abstention", "value": value}]
        out = rank_values(ranked, relevant, self.ks)
        scores = [float(h["score"]) for h in hits]
        nxt = (record.get("extra") or {}).get("next_hit")
        if nxt is not None:
            scores.append(float(nxt["score"]))
        out.append(cutoff_tie(scores, self.top_k))
        return out


def hit_success(record: dict[str, Any], top_k: int) -> bool | None:
    """The retrieval rule: a relevant memory in the top k; a negative query: abstained.

    Failed items fail; a negative query of a store that does not abstain is not scored.
    """
    if record.get("status", "ok") != "ok":
        return False
    for m in record.get("metrics") or []:
        if m["name"] == "hit" and m.get("k") == top_k:
            return m["value"] == 1.0
        if m["name"] == "abstention":
            return None if m["value"] is None else m["value"] == 1.0
    return None


def duplicates_note(items: list[ItemResult]) -> str | None:
    """The summary note on duplicate hits dropped before scoring (``None`` when none were).

    Reads each item's ``extra.duplicates_dropped``, as the retrieval and memtest suites
    record it.
    """
    dropped = [int(r.extra.get("duplicates_dropped", 0)) for r in items]
    if not any(dropped):
        return None
    return (
        f"{sum(dropped)} duplicate hits (a memory id already returned higher in the same "
        f"result) dropped before scoring, in {sum(d > 0 for d in dropped)} of "
        f"{len(items)} items: the store returns one hit per stored text, not per memory"
    )
