"""The summaries of the retrieval suite and of suite directories (typed items).

Each is a summary scorer (:class:`~mnemometer.scoring.SummaryScorer`): built from the
arguments the run header records, it summarises a run's items alone (plus, for retrieval,
what storing cost, from the run's ``ingest.json``), and carries the suite's rule for an
item's ``success``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from mnemometer.log._schema import ItemResult, Metric, RunHeader, Summary, Table
from mnemometer.scoring._scorer import BaseScorer
from mnemometer.scoring.aggregate import group_means, latency_metrics, mean_metrics, percentile
from mnemometer.scoring.retrieval import duplicates_note, hit_success

INGEST_FILE = "ingest.json"
"""What storing cost, as the suite that stored recorded it (counts, notes, one table row)."""

_INGEST_COLUMNS = [
    "memories",
    "failed",
    "s / memory",
    "p50 / p95 s",
    "LLM calls / memory",
    "tokens / memory",
    "LLM s / memory",
    "extracted",
]


class RetrievalSummary(BaseScorer):
    """Means over queries with ground truth, by type and difficulty; latency; counts.

    Args:
        top_k: hits asked for per query (the success rule's cut-off).
    """

    name: ClassVar[str] = "retrieval"
    version: ClassVar[str] = "1"

    def __init__(self, top_k: int = 20) -> None:
        self.top_k = int(top_k)

    def args(self) -> dict[str, Any]:
        """The cut-off."""
        return {"top_k": self.top_k}

    def success(self, record: dict[str, Any]) -> bool | None:
        """A relevant memory in the top k; a negative query: the store abstained."""
        return hit_success(record, self.top_k)

    def summarize(
        self, header: RunHeader, items: list[ItemResult], run_dir: Path | None = None
    ) -> Summary:
        """The retrieval summary (and what storing cost, when the run recorded it)."""
        positive = [r for r in items if r.expected]
        negative = [r for r in items if not r.expected]
        overall = mean_metrics(r.metrics for r in positive)
        overall += mean_metrics(r.metrics for r in negative)
        overall += latency_metrics([r.latency_ms for r in items if r.latency_ms is not None])
        groups = group_means(items, ("type", "difficulty"))
        counts = {
            "items": len(items),
            "planned": header.item_count,
            "with_ground_truth": len(positive),
            "negative": len(negative),
            "errors": sum(r.status == "error" for r in items),
            "timeouts": sum(r.status == "timeout" for r in items),
        }
        notes = list(header.dataset.notes)
        if negative and not any(m.value is not None for r in negative for m in r.metrics):
            notes.append(
                f"{len(negative)} negative queries not scored: the store does not declare "
                "that an empty result means 'nothing relevant' (abstains)"
            )
        if counts["errors"] or counts["timeouts"]:
            notes.append("failed and timed-out items score 0 on every metric")
        notes += _tie_and_duplicate_notes(overall, items, self.top_k)
        tables = []
        ingest = _read_ingest(run_dir)
        if ingest is not None:
            counts.update(ingest["counts"])
            notes += ingest["notes"]
            tables.append(ingest_table(ingest["row"]))
        return Summary(overall=overall, groups=groups, counts=counts, notes=notes, tables=tables)


def _read_ingest(run_dir: Path | None) -> dict[str, Any] | None:
    if run_dir is None or not (run_dir / INGEST_FILE).is_file():
        return None
    return json.loads((run_dir / INGEST_FILE).read_text("utf-8"))


def ingest_figures(
    memories: int,
    seconds: float,
    each: Sequence[float] = (),
    llm: tuple[int, int, int, float] | None = None,
    **more: Any,
) -> dict[str, Any]:
    """The raw values of the ``ingest`` table's row.

    Args:
        memories: memories stored.
        seconds: storing's seconds in all.
        each: seconds per memory, one value a memory (for p50 and p95; none: not known).
        llm: LLM calls, prompt tokens, completion tokens and LLM seconds, in all, for a
            store that meters its calls (``None``: not metered).
        **more: further fields (``failed``, ``retries``, ``extracted``).
    """
    n = max(memories, 1)
    row: dict[str, Any] = {
        "memories": memories,
        "failed": None,
        "seconds_per_memory": seconds / n,
        "seconds_p50": percentile(each, 50),
        "seconds_p95": percentile(each, 95),
        "llm_calls_per_memory": None,
        "tokens_per_memory": None,
        "llm_seconds_per_memory": None,
        "extracted": None,
        "prompt_tokens": None,
        "completion_tokens": None,
        **more,
    }
    if llm is not None:
        calls, prompt, completion, llm_seconds = llm
        row["llm_calls_per_memory"] = calls / n
        row["prompt_tokens"], row["completion_tokens"] = prompt, completion
        row["tokens_per_memory"] = (prompt + completion) / n
        row["llm_seconds_per_memory"] = llm_seconds / n
    return row


def ingest_table(r: dict[str, Any]) -> Table:
    """The ``ingest`` table: cost per memory beside the run's quality metrics."""

    def num(v: float | None, fmt: str) -> str:
        return "not metered" if v is None else format(v, fmt)

    spread = "–" if r["seconds_p50"] is None else f"{r['seconds_p50']:.3f} / {r['seconds_p95']:.3f}"
    cells = [
        str(r["memories"]),
        "–" if r["failed"] is None else str(r["failed"]),
        f"{r['seconds_per_memory']:.4f}",
        spread,
        num(r["llm_calls_per_memory"], ".2f"),
        num(r["tokens_per_memory"], ".0f"),
        num(r["llm_seconds_per_memory"], ".3f"),
        "–" if r["extracted"] is None else str(r["extracted"]),
    ]
    return Table(
        name="ingest",
        title="What a memory cost to store",
        columns=_INGEST_COLUMNS,
        rows=[cells],
        data=[r],
    )


def _tie_and_duplicate_notes(
    overall: list[Metric], items: list[ItemResult], top_k: int
) -> list[str]:
    notes = []
    tie = next((m for m in overall if m.name == "tie_at_cutoff" and m.value), None)
    if tie is not None and tie.value is not None:
        notes.append(
            f"tie_at_cutoff {tie.value:.2f}: on that share of queries the hit ranked {top_k} "
            f"and the next one score the same, so the store's tie rule (not its scores) chose "
            "which of the tied memories made the cut"
        )
    unknown = [int(r.extra.get("unknown_ids", 0)) for r in items]
    if any(unknown):
        notes.append(
            f"{sum(unknown)} hits in {sum(u > 0 for u in unknown)} of {len(items)} items named "
            "memory ids the store was never given (scored as misses): the store invents or "
            "rewrites ids"
        )
    over = [r for r in items if "returned" in r.extra]
    if over:
        most = max(int(r.extra["returned"]) for r in over)
        notes.append(
            f"the store returned more hits than asked in {len(over)} of {len(items)} items "
            f"(up to {most} for {top_k + 1}); only the first {top_k} were scored"
        )
    dup = duplicates_note(items)
    if dup:
        notes.append(dup)
    return notes


class MeansSummary(BaseScorer):
    """Every metric's mean, overall and by group, latency and counts (``means``).

    The summary a plug-in benchmark gets without writing one: its per-item scorers' metrics
    averaged over items (not-applicable values left out), broken down by ``group_by``.

    Args:
        group_by: the item groups results are broken down by.
        success: the metric whose value 1 makes an item a success (``None``: the suite
            decides success itself).
    """

    name: ClassVar[str] = "means"
    version: ClassVar[str] = "1"

    def __init__(self, group_by: list[str] | None = None, success: str | None = None) -> None:
        self.group_by = list(group_by or [])
        self.success_metric = success

    def args(self) -> dict[str, Any]:
        """The breakdown and the success metric."""
        return {"group_by": self.group_by, "success": self.success_metric}

    def success(self, record: dict[str, Any]) -> bool | None:
        """The success metric's value is 1 (failed items fail; no metric: not scored)."""
        if record.get("status", "ok") != "ok":
            return False
        if self.success_metric is None:
            return record.get("success")
        for m in record.get("metrics") or []:
            if m["name"] == self.success_metric and m.get("k") is None:
                return None if m["value"] is None else m["value"] == 1.0
        return None

    def summarize(
        self, header: RunHeader, items: list[ItemResult], run_dir: Path | None = None
    ) -> Summary:
        """Means of every metric, overall and by group; latency; counts."""
        del run_dir
        overall = mean_metrics(r.metrics for r in items)
        overall += latency_metrics([r.latency_ms for r in items if r.latency_ms is not None])
        counts = {
            "items": len(items),
            "planned": header.item_count,
            "succeeded": sum(r.success is True for r in items),
            "errors": sum(r.status == "error" for r in items),
            "timeouts": sum(r.status == "timeout" for r in items),
        }
        notes = list(header.dataset.notes) + list(header.notes)
        return Summary(
            overall=overall,
            groups=group_means(items, self.group_by),
            counts=counts,
            notes=notes,
        )


class ItemsSummary(MeansSummary):
    """Success and every metric, overall and by item type and metadata (suite directories).

    Args:
        group_by: the item fields results are broken down by.
        skipped: ids of items the suite did not run (shell items without consent).
    """

    name: ClassVar[str] = "items"
    version: ClassVar[str] = "1"

    def __init__(self, group_by: list[str] | None = None, skipped: list[str] | None = None):
        super().__init__(group_by)
        self.skipped = list(skipped or [])

    def args(self) -> dict[str, Any]:
        """The breakdown fields and the skipped items."""
        return {"group_by": self.group_by, "skipped": self.skipped}

    def summarize(
        self, header: RunHeader, items: list[ItemResult], run_dir: Path | None = None
    ) -> Summary:
        """The summary of a suite directory's run."""
        summary = super().summarize(header, items, run_dir)
        counts = {
            **summary.counts,
            "skipped": len(self.skipped),
            "tokens": sum(r.tokens.get("total", 0) for r in items),
        }
        notes = list(summary.notes)
        if self.skipped:
            notes.append(
                f"{len(self.skipped)} item(s) skipped (shell items without --allow-shell): "
                + ", ".join(self.skipped[:5])
            )
        failed = [r for r in items if (r.extra.get("scores") or {}).get("agent_exit_code", 0)]
        if failed:
            first = failed[0]
            notes.append(
                f"the agent failed in {len(failed)} of {len(items)} item(s) "
                f"(first, {first.item_id}: {first.output}); each build directory keeps "
                "its agent.stderr.txt"
            )
        return summary.model_copy(update={"counts": counts, "notes": notes})


__all__ = ["INGEST_FILE", "ItemsSummary", "MeansSummary", "RetrievalSummary", "ingest_table"]
