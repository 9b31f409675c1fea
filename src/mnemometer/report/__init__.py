"""Reports built from run directories alone, through one renderer registry.

Formats: ``text``, ``md``, ``json`` and ``html`` for runs and comparisons; ``csv`` too for
leaderboards. The HTML pages need the ``[report]`` extra (charts), imported only for them.
"""

from __future__ import annotations

from pathlib import Path

from mnemometer.log._reader import read_header
from mnemometer.report._leaderboard import Leaderboard, leaderboard
from mnemometer.report._registry import formats, kind_of, register_kind, render, renderer
from mnemometer.report._run import RunView
from mnemometer.scoring.aggregate import run_summary

__all__ = [
    "Leaderboard",
    "RunView",
    "formats",
    "kind_of",
    "leaderboard",
    "register_kind",
    "render",
    "renderer",
    "report",
]


def report(run_dir: str | Path, fmt: str = "text") -> str:
    """Render a run directory (``text``, ``md``, ``json``, or any registered format).

    Reads the run directory only: ``header.json`` and ``summary.json`` (or, for an
    unfinished or older run, a summary computed from ``items.jsonl``).
    """
    view = RunView(Path(run_dir), read_header(run_dir), run_summary(run_dir))
    return render(view, fmt)
