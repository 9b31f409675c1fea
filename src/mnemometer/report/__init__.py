"""Reports built from run directories alone, through one renderer registry.

Formats: ``text``, ``md``, ``json`` and ``html`` for runs and comparisons; ``csv`` too for
leaderboards. The HTML pages need the ``[report]`` extra (charts), imported only for them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from mnemometer.log._reader import read_header, read_items, read_summary
from mnemometer.report._export import EXPORT_FORMATS, export_run
from mnemometer.report._registry import formats, kind_of, register_kind, render, renderer
from mnemometer.report._run import RunView
from mnemometer.scoring.aggregate import run_summary

if TYPE_CHECKING:
    from mnemometer.report._leaderboard import Leaderboard, leaderboard

__all__ = [
    "EXPORT_FORMATS",
    "Leaderboard",
    "RunView",
    "export_run",
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
    header = read_header(run_dir)
    if fmt != "html":
        return render(RunView(Path(run_dir), header, run_summary(run_dir)), fmt)
    # The page shows every item: read them once (``run_summary`` would read them again).
    items = read_items(run_dir)
    summary = read_summary(run_dir)
    if summary is None or summary.results != len(items):
        summary = run_summary(run_dir)  # unfinished or older runs: computed from the items
    return render(RunView(Path(run_dir), header, summary, items), fmt)


def __getattr__(name: str) -> Any:
    # The leaderboard (and the comparison models it needs) loads only when asked for.
    if name in ("Leaderboard", "leaderboard"):
        from mnemometer.report import _leaderboard

        return getattr(_leaderboard, name)
    raise AttributeError(f"module 'mnemometer.report' has no attribute {name!r}")
