"""Reports built from run directories alone, through one renderer registry.

Formats: ``text``, ``md``, ``json`` and ``html`` for runs and comparisons; ``csv`` too for
leaderboards; plug-ins add theirs through the ``mnemometer.renderers`` entry points. The
HTML pages need the ``[report]`` extra (charts), imported only for them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mnemometer.errors import MnemometerError
from mnemometer.log._reader import read_header, read_items, read_summary
from mnemometer.log._schema import ItemResult, Summary
from mnemometer.report._export import EXPORT_FORMATS, export_run
from mnemometer.report._registry import formats, kind_of, register_kind, render, renderer
from mnemometer.report._run import RunView
from mnemometer.scoring.aggregate import mean_metrics, run_summary

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


def report(run_dir: str | Path, fmt: str = "text", group_by: Sequence[str] = ()) -> str:
    """Render a run directory (``text``, ``md``, ``json``, or any registered format).

    Reads the run directory only: ``header.json`` and ``summary.json`` (or, for an
    unfinished or older run, a summary computed from ``items.jsonl``).

    Args:
        run_dir: the run directory.
        fmt: the format.
        group_by: item metadata fields (``novel``, ``book``, ...) to break every metric
            down by, beside the suite's own breakdowns.

    Raises:
        MnemometerError: a ``group_by`` field that no item has.
    """
    header = read_header(run_dir)
    if fmt != "html" and not group_by:
        return render(RunView(Path(run_dir), header, run_summary(run_dir)), fmt)
    # The page shows every item: read them once (``run_summary`` would read them again).
    items = read_items(run_dir)
    summary = read_summary(run_dir)
    if summary is None or summary.results != len(items):
        summary = run_summary(run_dir)  # unfinished or older runs: computed from the items
    summary = grouped(summary, items, group_by)
    return render(RunView(Path(run_dir), header, summary, items if fmt == "html" else None), fmt)


def grouped(summary: Summary, items: Sequence[ItemResult], fields: Sequence[str]) -> Summary:
    """``summary`` with a breakdown of every metric by each of ``fields`` (item metadata).

    Raises:
        MnemometerError: no item has one of the fields (the message lists those they have).
    """
    groups = dict(summary.groups)
    for field in fields:
        buckets: dict[str, list[ItemResult]] = defaultdict(list)
        for r in items:
            if field in r.groups:
                buckets[r.groups[field]].append(r)
        if not buckets:
            known = sorted({k for r in items for k in r.groups})
            raise MnemometerError(
                f"--group-by {field}: no item has that field; fields: {', '.join(known) or 'none'}"
            )
        groups[field] = {
            v: mean_metrics(r.metrics for r in rs) for v, rs in sorted(buckets.items())
        }
    return summary.model_copy(update={"groups": groups})


def __getattr__(name: str) -> Any:
    # The leaderboard (and the comparison models it needs) loads only when asked for.
    if name in ("Leaderboard", "leaderboard"):
        from mnemometer.report import _leaderboard

        return getattr(_leaderboard, name)
    raise AttributeError(f"module 'mnemometer.report' has no attribute {name!r}")
