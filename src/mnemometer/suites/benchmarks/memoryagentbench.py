"""``memoryagentbench``: MemoryAgentBench's four competencies, scored by its own metrics."""

from __future__ import annotations

from typing import Any, ClassVar

from mnemometer.datasets._models import Dataset, Query
from mnemometer.log._schema import ItemResult, Table
from mnemometer.scoring import judges as J
from mnemometer.scoring import memoryagentbench as mab
from mnemometer.suites.benchmarks._suite import BenchmarkSuite
from mnemometer.suites.benchmarks._summary import score_metrics


class MemoryAgentBenchSuite(BenchmarkSuite):
    """MemoryAgentBench (a split's Parquet, or its rows as JSON Lines): one item per row.

    Each row's context is ingested in chunks ("inject once, query many"), then its
    questions are asked. Every question gets substring exact match, exact match and F1
    against all of its accepted answers, and ``score``: the metric the benchmark reports
    for its source (substring exact match for Accurate Retrieval and Conflict Resolution,
    exact match for in-context classification and DetectiveQA, recall@5 for
    recommendation; see :mod:`mnemometer.scoring.memoryagentbench`). Results group by
    source; ``competency`` holds the score per competency (AR, TTL, LRU, CR).
    """

    name: ClassVar[str] = "memoryagentbench"
    version: ClassVar[str] = "1"
    reader_format: ClassVar[str] = "memoryagentbench"
    group_key: ClassVar[str] = "type"
    turn_ks: ClassVar[tuple[int, ...]] = ()
    session_ks: ClassVar[tuple[int, ...]] = ()
    answer_scores: ClassVar[tuple[str, ...]] = ("score", "substring_exact_match", "f1")
    headline_rule: ClassVar[str] = (
        "every question; 'score' is the benchmark's metric for the question's source"
    )
    success_definition: ClassVar[str] = (
        "a question succeeds when the first judge says its answer is correct (with no judge: "
        "its source's official score is 1, or at least 0.5 for F1 and recall@5); a question "
        "whose reader call failed fails"
    )

    def load(self) -> Dataset:
        """The split through the ``memoryagentbench`` reader."""
        from mnemometer.datasets._io import load_dataset

        return load_dataset(self.path, format="memoryagentbench")

    def _scores(self, q: Query, hypothesis: str) -> list[dict[str, Any]]:
        golds = list(q.metadata.get("answers") or [q.answer or ""])
        official = mab.official_metric(str(q.metadata.get("source", q.type)))
        values = {name: fn(hypothesis, golds) for name, fn in mab.METRICS.items()}
        return [
            {"name": "score", "value": values[official]},
            {"name": "substring_exact_match", "value": values["substring_exact_match"]},
            {"name": "exact_match", "value": values["exact_match"]},
            {"name": "f1", "value": values["f1"]},
        ]

    def _success(
        self, q: Query, hypothesis: str, verdicts: list[J.Verdict], metrics: list[dict[str, Any]]
    ) -> bool:
        if verdicts:
            return verdicts[0].correct is True
        score = next(m["value"] for m in metrics if m["name"] == "score")
        official = mab.official_metric(str(q.metadata.get("source", q.type)))
        return score >= (0.5 if official in ("f1", "recall@5") else 1.0)

    def groups(self, q: Query) -> dict[str, str]:
        """The source (``type``) and the competency."""
        return {**super().groups(q), "competency": str(q.metadata.get("competency", "?"))}

    def notes(self, rows: list[ItemResult]) -> list[str]:
        """Sources the benchmark grades with a GPT-4o judge, when no judge was given."""
        out = super().notes(rows)
        judged = sorted(
            {
                str(r.groups.get("type"))
                for r in rows
                if str(r.groups.get("type", "")).lower().startswith(mab.JUDGED_UPSTREAM)
            }
        )
        if judged and not self.judges:
            out.append(
                f"MemoryAgentBench grades {', '.join(judged)} with a GPT-4o judge; scored "
                "here by substring exact match or F1 (pass --judge to add a judge)"
            )
        return out

    def _by_competency(self, rows: list[ItemResult]) -> dict[str, list[Any]]:
        by: dict[str, list[ItemResult]] = {}
        for r in rows:
            by.setdefault(str(r.groups.get("competency", "?")), []).append(r)
        names = ("score", "substring_exact_match")
        return {c: score_metrics(by[c], [], names) for c in sorted(by)}

    def extra_sections(self, rows: list[ItemResult]) -> dict[str, Any]:
        """The official score and substring exact match per competency."""
        return {
            "competency": {
                c: [m.model_dump() for m in ms] for c, ms in self._by_competency(rows).items()
            }
        }

    def extra_tables(self, rows: list[ItemResult]) -> list[Table]:
        """The same per competency, as a report table."""
        out = []
        for c, ms in self._by_competency(rows).items():
            get = {m.name: m for m in ms}
            score, sub = get.get("score"), get.get("substring_exact_match")
            out.append([c, str(score.n if score else 0), _cell(score), _cell(sub)])
        return [
            Table(
                name="competency",
                title="By competency (AR, TTL, LRU, CR)",
                columns=["competency", "n", "score [95% CI]", "substring EM [95% CI]"],
                rows=out,
            )
        ]


def _cell(m: Any) -> str:
    if m is None or m.value is None:
        return "-"
    iv = m.interval
    if iv is None or iv.low is None or iv.high is None:
        return f"{m.value:.3f}"
    return f"{m.value:.3f} [{iv.low:.3f}, {iv.high:.3f}]"
