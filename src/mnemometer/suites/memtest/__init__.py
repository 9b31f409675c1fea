"""``memtest``: MemTest's six dimensions as behavioural tests (see ``docs/memtest.md``)."""

from mnemometer.scoring.memtest import DEFAULT_WEIGHTS, DIMENSIONS
from mnemometer.suites.memtest._suite import MemtestSuite

__all__ = ["DEFAULT_WEIGHTS", "DIMENSIONS", "MemtestSuite"]
