"""The tie rule every built-in store follows: equal scores are ordered by a seeded id hash.

A store that breaks score ties by insertion order leaks the dataset file's order into its
ranking: on MemTest's Harry Potter set the relevant memories sit early in the file, and
``keyword`` (integer scores, a tie across the top-20 cut-off on 128 of 130 queries) lost
0.15 hit@20 when the file's memories were reversed. Here a tie is broken by
``blake2b(f"{seed}:{memory_id}")``, which carries no information about the answer; the
seed is the store option ``tie_seed`` (recorded in the run log through
``resolved_options()``), so a different seed draws a different, equally fair order.

Stores whose engine ranks for them (chroma, qdrant, lancedb, mem0) re-sort the engine's
rows by ``(-score, tie key)`` and widen the request until every row tied with the last
kept hit has been seen (:func:`ranked_search`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from mnemometer.errors import MnemometerError
from mnemometer.stores._protocol import Hit

if TYPE_CHECKING:
    import numpy as np

#: The default ``tie_seed`` of every built-in store.
DEFAULT_TIE_SEED = 0

Row = tuple[Any, ...]
"""``(memory_id, score, text, ...)`` as an engine returns it."""


def tie_key(memory_id: str, seed: int = DEFAULT_TIE_SEED) -> int:
    """The tie-break key of one memory: the first 8 bytes of ``blake2b(f"{seed}:{id}")``."""
    digest = hashlib.blake2b(f"{seed}:{memory_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def tie_keys(memory_ids: Iterable[str], seed: int = DEFAULT_TIE_SEED) -> np.ndarray:
    """:func:`tie_key` of each id, as a ``uint64`` array (for ``np.lexsort``)."""
    import numpy as np  # here: a run whose store never sorts with numpy does not load it

    return np.fromiter((tie_key(m, seed) for m in memory_ids), dtype=np.uint64)


def check_seed(seed: object) -> int:
    """Validate a ``tie_seed`` option (any integer, or a string of one).

    Raises:
        MnemometerError: anything else.
    """
    bad = MnemometerError(f"tie_seed must be an integer, got {seed!r}")
    if isinstance(seed, bool) or not isinstance(seed, int | str):
        raise bad
    try:
        return int(seed)
    except ValueError:
        raise bad from None


def rank_rows(rows: Iterable[Row], top_k: int, seed: int = DEFAULT_TIE_SEED) -> list[Hit]:
    """Order rows by ``(-score, tie key)`` and keep the best row of each memory, ``top_k`` at most.

    Rows of one memory with equal scores keep the order they came in (its versions' order,
    which does not depend on where the memory sits in the dataset).
    """
    hits: list[Hit] = []
    seen: set[str] = set()
    for row in sort_rows(rows, seed):  # rows may carry more fields after the first three
        mid = row[0]
        if mid not in seen:
            seen.add(mid)
            hits.append(Hit(mid, float(row[1]), row[2]))
            if len(hits) == top_k:
                break
    return hits


def sort_rows(rows: Iterable[Row], seed: int = DEFAULT_TIE_SEED) -> list[Row]:
    """Rows ordered by ``(-score, tie key)``; tied rows of one memory keep their order."""
    indexed = list(enumerate(rows))
    indexed.sort(key=lambda ir: (-float(ir[1][1]), tie_key(ir[1][0], seed), ir[0]))
    return [row for _, row in indexed]


def rows_through(
    query: Callable[[int], Sequence[Row]], n: int, *, limit: int | None = None
) -> list[Row]:
    """The engine's ``n`` best rows and every row tied with the ``n``-th (so the cut is fair).

    Asks for ``n`` rows, then for twice as many while the weakest row returned still ties
    with the ``n``-th best and the engine may hold more. Sort the result with
    :func:`sort_rows` and keep ``n`` for a ranking free of insertion order.
    """
    m = n + 8 if limit is None else min(n + 8, limit)
    while True:
        rows = list(query(m))
        if len(rows) < m or (limit is not None and m >= limit):
            return rows  # everything the engine holds
        scores = sorted((float(r[1]) for r in rows), reverse=True)
        if scores[-1] < scores[n - 1]:
            return rows
        m = m * 2 if limit is None else min(m * 2, limit)


def ranked_search(
    query: Callable[[int], Sequence[Row]],
    top_k: int,
    seed: int = DEFAULT_TIE_SEED,
    *,
    limit: int | None = None,
) -> list[Hit]:
    """Ask an engine for ranked rows and return the top ``top_k`` memories by the tie rule.

    The engine orders tied rows its own way (usually insertion order), so the rows it cuts
    off can hold a memory tied with the last one kept. We first ask for ``4 * top_k + 8``
    rows (room for stylistic versions to collapse), and ask again for twice as many while
    the weakest row returned still scores as high as the ``top_k``-th hit (or too few
    memories survived collapsing) and the engine may hold more. Ties across the cut are
    rare with real-valued scores, so this usually costs one query; with coarse scores (an
    RRF fusion, identical texts) it costs as many doublings as the tie is wide.

    Args:
        query: ``query(n)`` returns at most ``n`` rows ``(memory_id, score, text)``, best first.
        top_k: hits wanted.
        seed: the store's ``tie_seed``.
        limit: most rows the engine can return (e.g. rows stored, or its own cap).
    """
    n = top_k * 4 + 8
    if limit is not None:
        n = min(n, limit)
    while True:
        rows = list(query(n))
        hits = rank_rows(rows, top_k, seed)
        exhausted = len(rows) < n or (limit is not None and n >= limit)
        if exhausted or not rows:
            return hits
        weakest = min(float(r[1]) for r in rows)
        if len(hits) == top_k and weakest < hits[-1].score:
            return hits
        n = n * 2 if limit is None else min(n * 2, limit)
