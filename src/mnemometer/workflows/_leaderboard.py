"""The sweep's closing table: success per system × dataset with intervals, and comparisons.

A stand-in kept behind one function, :func:`write_leaderboard`: when the report package's
``leaderboard`` kind (``mnemometer.report.leaderboard`` and ``leaderboard_markdown``) is on
main, this function should render that instead, from the sweep directory alone.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mnemometer import stats
from mnemometer.log._reader import read_items


def success_cell(run_dirs: Sequence[Path]) -> tuple[float, Any, int] | None:
    """Mean success over items (each averaged over its repeats and steps) with a 95% CI.

    One repeat of a pass/fail rule: a Wilson interval over items; several repeats (each item
    a mean of 0/1): a t interval over items, so the interval's unit is the item. ``None``
    when no item has a success value.
    """
    per_item: dict[str, list[float]] = defaultdict(list)
    for d in run_dirs:
        for r in read_items(d):
            if r.success is not None:
                per_item[r.item_id].append(1.0 if r.success else 0.0)
    if not per_item:
        return None
    means = [sum(v) / len(v) for v in per_item.values()]
    n = len(means)
    mean = sum(means) / n
    if all(m in (0.0, 1.0) for m in means):
        iv = stats.wilson(int(sum(means)), n)
    else:
        iv = stats.mean_interval(means, bounds=(0.0, 1.0))
    return mean, iv, n


def write_leaderboard(
    path: Path,
    experiments: Mapping[str, Any],
    comparisons: Sequence[tuple[Path, tuple[str, str, str, Any]]] = (),
) -> Path:
    """Write the leaderboard Markdown for a sweep's experiments (by dataset name).

    Rows are systems (labels) ranked by their mean success over datasets; each cell is
    ``mean [low, high] (n items)``. The paired comparisons follow, one row each.
    """
    cells: dict[str, dict[str, tuple[float, Any, int] | None]] = defaultdict(dict)
    suite = ""
    repeats = 1
    for ds, exp in experiments.items():
        by_label: dict[str, list[Path]] = defaultdict(list)
        for run in exp.runs:
            h = run.header
            suite, repeats = h.suite, max(repeats, h.repeat + 1)
            by_label[h.system.condition or h.system.name].append(run.path)
        for label, dirs in by_label.items():
            cells[label][ds] = success_cell(dirs)
    datasets = list(experiments)

    def rank(label: str) -> float:
        vals = [c[0] for c in cells[label].values() if c is not None]
        return -sum(vals) / len(vals) if vals else 1.0

    lines = [
        "# Leaderboard",
        "",
        f"Suite `{suite}`, {repeats} repeat(s). Each cell: success rate over items (an item "
        "averaged over its repeats), 95% interval (Wilson for one repeat, t over items "
        "otherwise), items.",
        "",
        "| rank | system | " + " | ".join(datasets) + " |",
        "|---:|---|" + "---|" * len(datasets),
    ]
    for i, label in enumerate(sorted(cells, key=lambda x: (rank(x), x)), 1):
        row = [_cell(cells[label].get(ds)) for ds in datasets]
        lines.append(f"| {i} | {label} | " + " | ".join(row) + " |")
    if comparisons:
        lines += [
            "",
            "## Paired comparisons",
            "",
            "| dataset | baseline | candidate | pairs | Δ success | 95% interval | p (McNemar) |",
            "|---|---|---|---:|---:|---|---:|",
        ]
        for _file, (ds, base, cand, c) in comparisons:
            s = c.success
            iv = s.intervals[0] if s.intervals else None
            span = f"[{iv.low:+.3f}, {iv.high:+.3f}]" if iv and iv.low is not None else "n/a"
            delta = f"{s.delta:+.3f}" if s.delta is not None else "n/a"
            lines.append(
                f"| {ds} | {base} | {cand} | {s.pairs} | {delta} | {span} | {s.p_value:.3g} |"
            )
        files = [_relative(f, path.parent) for f, _ in comparisons]
        lines += ["", "Full statistics: " + ", ".join(f"`{f}`" for f in files)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def _cell(c: tuple[float, Any, int] | None) -> str:
    if c is None:
        return "n/a"
    mean, iv, n = c
    return f"{mean:.3f} [{iv.low:.3f}, {iv.high:.3f}] ({n})"


def _relative(file: Path, root: Path) -> str:
    try:
        return file.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(file)
