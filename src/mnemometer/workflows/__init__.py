"""Workflows over whole experiments: ``doctor``, ``reproduce`` (run, compare, gate), ``archive``."""

from mnemometer.workflows._doctor import Check, doctor, render_checks
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
    "Reproduction",
    "archive",
    "doctor",
    "render_checks",
    "reproduce",
    "verify_archive",
]
