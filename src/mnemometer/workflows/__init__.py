"""Workflows over whole experiments: run a suite directory, doctor, reproduce, archive, sweep.

``reproduce`` runs, compares and gates; ``sweep`` runs systems × datasets × conditions ×
repeats and ends with a leaderboard.
"""

from mnemometer.workflows._doctor import Check, Checks, doctor
from mnemometer.workflows._leaderboard import write_leaderboard
from mnemometer.workflows._reproduce import (
    ArchiveManifest,
    Reproduction,
    archive,
    reproduce,
    verify_archive,
)
from mnemometer.workflows._suite_dir import run_suite
from mnemometer.workflows._sweep import SweepFile, SweepResult, load_sweep, sweep

__all__ = [
    "ArchiveManifest",
    "Check",
    "Checks",
    "Reproduction",
    "SweepFile",
    "SweepResult",
    "archive",
    "doctor",
    "load_sweep",
    "reproduce",
    "run_suite",
    "sweep",
    "verify_archive",
    "write_leaderboard",
]
