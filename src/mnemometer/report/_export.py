"""Export a run's answers: LongMemEval's hypothesis format, one JSON line per question."""

from __future__ import annotations

import json
from pathlib import Path

from mnemometer import _env
from mnemometer.errors import MnemometerError
from mnemometer.log._reader import read_items

EXPORT_FORMATS = ("hypotheses",)
"""What :func:`export_run` writes."""


def export_run(run_dir: str | Path, out: str | Path, fmt: str = "hypotheses") -> int:
    """Write one JSON line per answered question to ``out``; return how many.

    ``hypotheses`` is LongMemEval's own format (``evaluate_qa.py`` reads it): each line has
    ``question_id``, ``question`` and ``hypothesis`` (the system's answer), plus
    ``category`` where the benchmark has one (LoCoMo). A question whose call failed is
    written with an empty hypothesis and its ``error``, so a file never silently loses one.

    Raises:
        MnemometerError: an unknown format, or a run with no question results.
    """
    if fmt not in EXPORT_FORMATS:
        raise MnemometerError(
            f"unknown export format {fmt!r}; formats: {', '.join(EXPORT_FORMATS)}"
        )
    items = read_items(run_dir)
    lines = []
    for r in items:
        if r.step is None and r.extra.get("questions"):
            for qid in r.extra["questions"]:
                if not any(x.step == qid for x in items):
                    lines.append(
                        {"question_id": qid, "question": "", "hypothesis": "", "error": r.error}
                    )
            continue
        row = {
            "question_id": r.step or r.item_id,
            "question": r.input,
            "hypothesis": r.output or "",
        }
        if "category" in r.groups:
            row["category"] = r.groups["category"]
        if r.status != "ok":
            row["error"] = r.error
        lines.append(row)
    if not lines:
        raise MnemometerError(f"{run_dir}: no question results to export")
    path = Path(out)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            for row in lines:  # a log written by an older version may still hold a key
                f.write(_env.scrub(json.dumps(row, ensure_ascii=False)) + "\n")
    except OSError as e:
        raise MnemometerError(f"{path}: cannot write the answers: {e.strerror}") from None
    return len(lines)
