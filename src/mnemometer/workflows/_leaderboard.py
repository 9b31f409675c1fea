"""The sweep's closing table: the report package's leaderboard, then the paired comparisons."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mnemometer.comparison._model import preferred
from mnemometer.report import leaderboard, render


def write_leaderboard(
    path: Path,
    experiments: Mapping[str, Any],
    comparisons: Sequence[tuple[Path, tuple[str, str, str, Any]]] = (),
) -> Path:
    """Write the leaderboard Markdown for a sweep's experiments.

    The table is ``mnemometer leaderboard`` over the sweep's runs (a column per dataset
    content hash, repeats averaged per item first, 95% intervals); the paired comparisons
    the sweep names follow, one row each.
    """
    runs = [run.path for exp in experiments.values() for run in exp.runs]
    lines = ["# Leaderboard", "", render(leaderboard(runs), "md").rstrip("\n")]
    if comparisons:
        lines += [
            "",
            "## Paired comparisons",
            "",
            "| dataset | baseline | candidate | pairs | headline | Δ | 95% interval | p (test) |",
            "|---|---|---|---:|---|---:|---|---|",
        ]
        for _file, (ds, base, cand, c) in comparisons:
            h = c.headline
            iv = preferred(h.intervals)
            span = f"[{iv.low:+.3f}, {iv.high:+.3f}]" if iv and iv.low is not None else "n/a"
            if h.no_claim:
                span = "none: too few clusters"
            delta = f"{h.delta:+.3f}" if h.delta is not None else "n/a"
            p = "n/a" if h.p_value is None else f"{h.p_value:.3g} ({h.test})"
            lines.append(
                f"| {ds} | {base} | {cand} | {h.pairs} | {c.headline_spec.label} | {delta} | "
                f"{span} | {p} |"
            )
        files = [_relative(f, path.parent) for f, _ in comparisons]
        lines += ["", "Full statistics: " + ", ".join(f"`{f}`" for f in files)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def _relative(file: Path, root: Path) -> str:
    try:
        return file.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(file)
