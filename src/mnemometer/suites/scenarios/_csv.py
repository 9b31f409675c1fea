"""The seed-compatible CSV of a scenarios run, written beside its log from the summary."""

from __future__ import annotations

import csv
from pathlib import Path

from mnemometer.log._schema import RunHeader, Summary

CSV_FILE = "scenarios.csv"
CSV_COLUMNS = ("backend", "scenario", "mean_latency_ms", "accuracy", "mean_similarity")


def write_csv(path: Path, header: RunHeader, summary: Summary) -> None:
    """The seed's CSV: backend, scenario, mean_latency_ms, accuracy, mean_similarity.

    Rows are sorted by scenario, followed by an ``AVERAGE`` row (unweighted mean of the
    rows, as the seed computed it).
    """
    backend = header.system.name
    store = header.system.options.get("store")
    if store:
        backend += f":{store}"
    data = summary.table("scenarios").data
    rows = sorted(data, key=lambda r: (r["scenario"], r["noise"]))
    multi = len({r["noise"] for r in rows}) > 1

    def fmt(v: float | None) -> str:
        return "" if v is None else f"{v:.6f}"

    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(CSV_COLUMNS)
        for r in rows:
            name = r["scenario"] + (f"@noise={r['noise']:g}" if multi else "")
            w.writerow(
                [
                    backend,
                    name,
                    fmt(r["mean_latency_ms"]),
                    fmt(r["accuracy"]),
                    fmt(r["mean_similarity"]),
                ]
            )
        cols = ("mean_latency_ms", "accuracy", "mean_similarity")
        avg = []
        for c in cols:
            vals = [r[c] for r in rows if r[c] is not None]
            avg.append(fmt(sum(vals) / len(vals)) if vals else "")
        w.writerow([backend, "AVERAGE", *avg])
