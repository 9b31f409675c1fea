"""Workflows over whole experiments: ``doctor``, ``reproduce`` (run, compare, gate), ``archive``."""

from mnemometer.workflows._doctor import Check, Checks, doctor
from mnemometer.workflows._reproduce import (
    ArchiveManifest,
    Reproduction,
    archive,
    reproduce,
    verify_archive,
)

__all__ = [
    "ArchiveManifest",
    "Check",
    "Checks",
    "Reproduction",
    "archive",
    "doctor",
    "reproduce",
    "verify_archive",
]
