"""Reports built from run directories alone, through one renderer registry."""

from __future__ import annotations

from pathlib import Path

from mnemometer.log._reader import read_header
from mnemometer.report._export import EXPORT_FORMATS, export_run
from mnemometer.report._registry import formats, kind_of, register_kind, render, renderer
from mnemometer.report._run import RunView
from mnemometer.scoring.aggregate import run_summary

__all__ = [
    "EXPORT_FORMATS",
    "RunView",
    "export_run",
    "formats",
    "kind_of",
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
