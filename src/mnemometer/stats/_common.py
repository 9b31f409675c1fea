"""Settings and input checks shared by every part of :mod:`mnemometer.stats`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from mnemometer.errors import MnemometerError

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0x5EED
# Resamples drawn per block: bounds memory at block * n draws per step.
BLOCK_CELLS = 4_000_000
# Two float64 results within this fraction of the data's scale are the same number:
# rounding of a sum is ~1e-16 of the scale per term (< 1e-11 for 10^5 terms), while two
# genuinely different means or sums of data on any practical grid differ by far more.
TIE_RTOL = 1e-10


def as_deltas(deltas: Sequence[float] | np.ndarray) -> np.ndarray:
    """``deltas`` as a flat float64 array of finite numbers (else a clear error)."""
    d = np.asarray(deltas, dtype=float)
    if d.ndim != 1:
        raise MnemometerError("paired deltas must be a flat sequence")
    if not np.all(np.isfinite(d)):
        raise MnemometerError("paired deltas must be finite numbers")
    return d


def as_columns(
    values: np.ndarray, resamples: int, what: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``values`` as an ``(n, k)`` float array ``v``, its finite ``mask`` and ``x`` (NaN as 0).

    NaN marks "not applicable to this pair"; ``x`` is ``v`` with it (and any other
    non-finite value) set to 0, ready for sums.

    Raises:
        MnemometerError: ``values`` is not two-dimensional (naming ``what``), or
            ``resamples`` is below 1.
    """
    v = np.asarray(values, dtype=float)
    if v.ndim != 2:
        raise MnemometerError(f"{what} needs an (n, k) array")
    if resamples < 1:
        raise MnemometerError(f"resamples must be at least 1, got {resamples}")
    mask = np.isfinite(v)
    return v, mask, np.where(mask, v, 0.0)


def blocks(resamples: int, units: int) -> Iterator[tuple[int, int]]:
    """``(start, rows)`` of consecutive blocks of ``resamples`` resamples.

    Each block holds at most ``BLOCK_CELLS`` draws of ``units`` (and at least one row), so
    memory stays bounded for any data size.
    """
    block = max(1, min(resamples, BLOCK_CELLS // max(units, 1)))
    for start in range(0, resamples, block):
        yield start, min(block, resamples - start)
