"""Near-duplicate candidates in near-linear time: MinHash LSH and exact Jaccard similarity.

Signatures are datasketch's (``scheme="legacy"``: its SHA-1 hash, its seeded permutations
and its band/row split, re-derived here so the core does not need the package; tests check
all three against datasketch), computed for all sets at once with numpy; LSH only prunes the
O(n²) pairs, the exact Jaccard check decides. The cleaner
(:mod:`mnemometer.datasets.clean`) uses them for its near-duplicate step.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import cache

import numpy as np

from mnemometer.datasets._models import Memory


def jaccard_arrays(
    token_sets: Sequence[frozenset[str]], first: np.ndarray, second: np.ndarray
) -> np.ndarray:
    """Exact Jaccard similarity of the pairs ``(first[k], second[k])``, all at once."""
    from scipy.sparse import csr_matrix

    if len(first) == 0:
        return np.zeros(0)
    vocab: dict[str, int] = {}
    cols = [vocab.setdefault(t, len(vocab)) for s in token_sets for t in s]
    sizes = np.array([len(s) for s in token_sets])
    indptr = np.concatenate([[0], np.cumsum(sizes)])
    x = csr_matrix(
        (np.ones(len(cols), dtype=np.float32), cols, indptr),
        shape=(len(token_sets), max(1, len(vocab))),
    )
    inter = np.asarray(x[first].multiply(x[second]).sum(axis=1)).ravel()
    union = sizes[first] + sizes[second] - inter
    return np.divide(inter, union, out=np.zeros(len(first)), where=union > 0)


def token_sets(memories: Sequence[Memory], lang: str) -> list[frozenset[str]]:
    """Each memory's distinct tokens in ``lang`` (the sets the similarities compare)."""
    from mnemometer.text import tokenizer

    tok = tokenizer(lang)
    return [frozenset(tok(m.text)) for m in memories]


def candidate_pairs(
    token_sets: Sequence[frozenset[str]],
    threshold: float,
    num_perm: int = 128,
    blocks: Sequence[int] | None = None,
) -> set[tuple[int, int]]:
    """Index pairs ``(i, j)``, ``i < j``, that share a MinHash LSH bucket (and a block).

    A set view of :func:`candidate_pair_arrays`.
    """
    first, second = candidate_pair_arrays(token_sets, threshold, num_perm, blocks)
    return set(zip(first.tolist(), second.tolist(), strict=True))


def candidate_pair_arrays(
    token_sets: Sequence[frozenset[str]],
    threshold: float,
    num_perm: int = 128,
    blocks: Sequence[int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Unique index pairs ``(first[k] < second[k])`` that share a MinHash LSH bucket.

    ``blocks`` gives each set a block number; sets in different blocks are never paired
    (the block joins every band's bucket key). Candidates still need an exact Jaccard
    check; LSH only prunes the O(n²) pairs. The signatures are datasketch's
    (``scheme="legacy"``: its hash function and permutations), computed for all sets at once
    with numpy; the band/row split is the one ``datasketch.MinHashLSH`` picks for
    ``threshold``.
    """
    empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    sigs, rows = minhash_signatures(token_sets, num_perm)
    if len(rows) < 2:
        return empty
    bands, rows_per_band = lsh_params(threshold, num_perm)
    base = np.zeros(len(rows), dtype=np.uint64)
    if blocks is not None:
        base = np.asarray(blocks, dtype=np.uint64)[rows] * np.uint64(0x9E3779B97F4A7C15)
    # One 64-bit key per (block, band): a collision of two different bands only adds a
    # candidate, which the exact Jaccard check then rejects.
    mult = np.random.default_rng(0).integers(1, 2**63, rows_per_band, dtype=np.uint64) | np.uint64(
        1
    )
    n = len(token_sets)
    codes: list[np.ndarray] = []
    triu: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for band in range(bands):
        block = sigs[:, band * rows_per_band : (band + 1) * rows_per_band].astype(np.uint64)
        with np.errstate(over="ignore"):
            bucket = base + (block * mult).sum(axis=1, dtype=np.uint64)
        order = np.argsort(bucket, kind="stable")
        members = rows[order]
        starts = np.flatnonzero(np.r_[True, np.diff(bucket[order]) != 0])
        sizes = np.diff(np.r_[starts, len(order)])
        for size in np.unique(sizes[sizes > 1]).tolist():  # all buckets of one size at once
            if size not in triu:
                triu[size] = np.triu_indices(size, 1)
            ii, jj = triu[size]
            at = starts[sizes == size][:, None]
            a, b = members[at + ii].ravel(), members[at + jj].ravel()
            codes.append(np.minimum(a, b).astype(np.int64) * n + np.maximum(a, b))
    if not codes:
        return empty
    unique = np.unique(np.concatenate(codes))
    return unique // n, unique % n


def minhash_signatures(
    token_sets: Sequence[frozenset[str]], num_perm: int = 128, seed: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """MinHash signatures of the non-empty sets: ``(signatures, their indices)``.

    Equal to ``datasketch.MinHash(num_perm, seed, scheme="legacy")`` updated with each
    set's UTF-8 tokens (a test checks this).
    """
    a, b = _permutations(num_perm, seed)
    vocab: dict[str, int] = {}
    flat: list[int] = []
    offsets: list[int] = []
    rows: list[int] = []
    for i, s in enumerate(token_sets):
        if not s:  # an empty set is similar to nothing
            continue
        rows.append(i)
        offsets.append(len(flat))
        flat.extend(vocab.setdefault(t, len(vocab)) for t in s)
    if not rows:
        return np.zeros((0, num_perm), dtype=np.uint64), np.zeros(0, dtype=np.int64)
    hv = np.fromiter((_sha1_32(t.encode("utf-8")) for t in vocab), np.uint64, len(vocab))
    prime, max_hash = _PRIME, np.uint64((1 << 32) - 1)
    # Values fit 32 bits after the mask; uint32 halves the memory the reduction walks.
    phv = np.bitwise_and((np.outer(hv, a) + b) % prime, max_hash).astype(np.uint32)
    sigs = np.minimum.reduceat(phv[np.asarray(flat)], np.asarray(offsets), axis=0)
    return sigs, np.asarray(rows)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard similarity of two token sets (0 when both are empty)."""
    if not a and not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


_PRIME = np.uint64((1 << 61) - 1)


def _sha1_32(data: bytes) -> int:
    """Datasketch's ``sha1_hash32``: the first 4 bytes of SHA-1, little-endian."""
    return int.from_bytes(hashlib.sha1(data).digest()[:4], "little")


@cache
def _permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Datasketch's legacy permutation parameters ``(a, b)`` for ``seed``."""
    gen = np.random.RandomState(seed)
    pairs = [
        (gen.randint(1, _PRIME, dtype=np.uint64), gen.randint(0, _PRIME, dtype=np.uint64))
        for _ in range(num_perm)
    ]
    a, b = np.array(pairs, dtype=np.uint64).T
    return a, b


@cache
def lsh_params(threshold: float, num_perm: int) -> tuple[int, int]:
    """Bands and rows per band: ``datasketch.MinHashLSH``'s choice for ``threshold``.

    The split minimising the equally weighted areas of false positives (below the
    threshold) and false negatives (above it) under the S-curve ``1 - (1 - s^r)^b``,
    integrated here with 64-point Gauss-Legendre rules (the integrands are polynomials;
    datasketch uses ``scipy.integrate.quad``, which is slower to import and call).
    """
    x, w = np.polynomial.legendre.leggauss(64)
    below = threshold / 2 * (x + 1)  # nodes on [0, threshold] and [threshold, 1]
    above = threshold + (1 - threshold) / 2 * (x + 1)
    best, opt = float("inf"), (0, 0)
    for b in range(1, num_perm + 1):
        for r in range(1, num_perm // b + 1):
            fp = threshold / 2 * np.dot(w, 1 - (1 - below**r) ** b)
            fn = (1 - threshold) / 2 * np.dot(w, (1 - above**r) ** b)
            if 0.5 * fp + 0.5 * fn < best:
                best, opt = 0.5 * fp + 0.5 * fn, (b, r)
    return opt
