"""Scorers: registered like stores, declared with their arguments, recorded in the run.

A run first records what the system did (an :class:`~mnemometer.log._schema.ItemResult`'s
input, retrieved ids and scores, answer, replies, tokens, errors). Then:

* **scorers** turn one item's record into metrics (:class:`Scorer`): a ranking's recall and
  nDCG at k, an answer's F1, a judge's verdict;
* the suite's **summary** scorer turns every item into the summary (:class:`SummaryScorer`);
* the summary engine (:func:`summarize`) adds the declared headline, with its interval
  from the one interval policy, what the run's LLM calls cost (:mod:`mnemometer.scoring.cost`)
  and the failure note.

Each is registered in the ``mnemometer.scorers`` entry-point group (built-ins the same way
as plug-ins) and recorded in the run header as a :class:`~mnemometer.log._schema.ScorerSpec`
(name, version, arguments, hash), so ``mnemometer score`` can build the same scorers again,
or others, over a finished run's records without its suite or its system.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from mnemometer import _gc
from mnemometer._registry import SCORERS
from mnemometer.errors import MnemometerError
from mnemometer.log._schema import (
    ItemResult,
    RunHeader,
    ScorerSpec,
    ScoringRecord,
    Summary,
)
from mnemometer.scoring.cost import cost_notes, cost_summary, cost_table
from mnemometer.scoring.headline import headline, spec_of

Record = dict[str, Any]
"""One item's record as plain data: the fields of an ``ItemResult``."""


@dataclass
class Scores:
    """What a scorer made of one record beyond metrics (a judge's verdict and its cost).

    Attributes:
        metrics: plain metric dicts.
        extra: fields of the record's ``extra`` to set (whole values, not merged).
        tokens: the record's ``tokens`` as they are after this scorer (whole, not added).
    """

    metrics: list[dict[str, Any]]
    extra: dict[str, Any] = field(default_factory=dict)
    tokens: dict[str, int] | None = None
    unscored: list[str] = field(default_factory=list)
    """Metrics of ``metrics`` the scorer could not give (a failed judge call)."""


@runtime_checkable
class Scorer(Protocol):
    """Turns one item's record into metrics.

    ``score`` returns plain metric dicts (``name``, ``value``, optional ``k``, ``unit``,
    ``higher_is_better``), or :class:`Scores` with them, that replace any metric of the
    same name and ``k`` the record already has. ``outputs`` names the metrics it writes and
    ``strip`` removes everything it wrote (``mnemometer score`` strips a replaced scorer).
    """

    name: ClassVar[str]
    """Registered name."""
    version: ClassVar[str]
    """Bumped when its rule changes (a run records it)."""

    def spec(self) -> ScorerSpec:
        """Name, version, resolved arguments and their hash."""
        ...

    def score(self, record: Record) -> list[dict[str, Any]] | Scores:
        """The metrics of one item's record."""
        ...

    def outputs(self) -> list[str]:
        """Names of the metrics it writes."""
        ...

    def strip(self, record: Record) -> Record:
        """``record`` without anything this scorer wrote."""
        ...


@runtime_checkable
class SummaryScorer(Protocol):
    """Turns every item of a run into its summary (the engine adds the headline)."""

    name: ClassVar[str]
    """Registered name."""
    version: ClassVar[str]
    """Bumped when the summary's rules change."""

    def spec(self) -> ScorerSpec:
        """Name, version, resolved arguments and their hash."""
        ...

    def summarize(
        self, header: RunHeader, items: list[ItemResult], run_dir: Path | None
    ) -> Summary:
        """The summary of ``items`` (``run_dir``: the run's own files, when there is one)."""
        ...


def spec_hash(name: str, version: str, args: dict[str, Any], *texts: str) -> str:
    """SHA-256 of a scorer's name, version, arguments and any rule or prompt text."""
    doc = json.dumps([name, version, args, *texts], sort_keys=True, default=str)
    return hashlib.sha256(doc.encode()).hexdigest()


class BaseScorer:
    """The spec of a scorer from its ``args()`` (and ``texts()`` hashed with them)."""

    name: ClassVar[str] = ""
    version: ClassVar[str] = "1"

    def args(self) -> dict[str, Any]:
        """Resolved arguments, as the constructor takes them back."""
        return {}

    def texts(self) -> Sequence[str]:
        """Prompt or rule text behind the scorer, hashed into its spec."""
        return ()

    def outputs(self) -> list[str]:
        """Names of the metrics it writes (none for a summary scorer)."""
        return []

    def strip(self, record: Record) -> Record:
        """``record`` without the metrics named by :meth:`outputs`."""
        mine = set(self.outputs())
        kept = [m for m in record.get("metrics") or [] if m["name"] not in mine]
        return record | {"metrics": kept}

    def spec(self) -> ScorerSpec:
        """Name, version, arguments and hash."""
        args = self.args()
        return ScorerSpec(
            name=self.name,
            version=self.version,
            args=args,
            sha256=spec_hash(self.name, self.version, args, *self.texts()),
        )


def build(spec: ScorerSpec, **context: Any) -> Any:
    """The scorer a spec names, built with its arguments (and the context it accepts).

    Raises:
        UnknownNameError: no such scorer (with "did you mean").
        MnemometerError: the installed scorer's version is not the one the spec recorded.
    """
    scorer = SCORERS.make(spec.name, dict(spec.args), (), **context)
    version = getattr(scorer, "version", spec.version)
    if version != spec.version:
        raise MnemometerError(
            f"scorer {spec.name!r} is version {version} here; the run was scored with version "
            f"{spec.version}: score it again with `mnemometer score` to use this one"
        )
    return scorer


def apply(record: Record, scorers: Sequence[Scorer], summary: Any = None) -> Record:
    """``record`` scored by each scorer in order, then its ``success`` by ``summary``'s rule.

    A metric of the same name and ``k`` as one the record has replaces it. ``summary`` is
    the run's summary scorer; when it has a ``success`` rule, that sets the item's success.
    """
    for s in scorers:
        out = s.score(record)
        scores = out if isinstance(out, Scores) else Scores(list(out))
        replaced = {(m["name"], m.get("k")) for m in scores.metrics}
        metrics = [
            m for m in record.get("metrics") or [] if (m["name"], m.get("k")) not in replaced
        ]
        record = record | {"metrics": metrics + scores.metrics}
        mine = {m["name"] for m in scores.metrics}
        unscored = [u for u in record.get("unscored") or [] if u not in mine]
        if unscored or scores.unscored or "unscored" in record:
            record["unscored"] = unscored + scores.unscored
        if scores.extra:
            record["extra"] = {**(record.get("extra") or {}), **scores.extra}
        if scores.tokens is not None:
            record["tokens"] = scores.tokens
    rule = getattr(summary, "success", None)
    if rule is not None:
        record["success"] = rule(record)
    return record


def summarize(
    header: RunHeader,
    items: list[ItemResult],
    run_dir: Path | None = None,
    *,
    fallback: Callable[[RunHeader, list[ItemResult]], Summary] | None = None,
) -> Summary:
    """The summary engine: the run's summary scorer, then the headline, cost and failure note.

    ``fallback`` summarises a run recorded before scoring was a stage (no
    ``header.scoring``); without one such a run is refused.

    Raises:
        MnemometerError: the run records no scoring and no fallback was given.
    """
    scoring: ScoringRecord | None = header.scoring
    with _gc.paused():  # the results are plain data: walking them finds no cycle
        if scoring is not None:
            summary = build(scoring.summary).summarize(header, items, run_dir)
        elif fallback is not None:
            summary = fallback(header, items)
        else:
            raise MnemometerError(
                f"run {header.run_id} records no scoring (it predates scoring as a stage): "
                "summarise it with its suite (`mnemometer log summarize`)"
            )
        cost = cost_summary(header, items, run_dir)
        summary = summary.model_copy(
            update={
                "run_id": header.run_id,
                "results": len(items),
                "source": "suite",
                "headline": headline(spec_of(header), items, summary),
                "cost": cost,
            }
        )
        note = failure_note(items)
    if cost is not None and cost.roles:
        summary = summary.model_copy(
            update={
                "tables": [*summary.tables, cost_table(cost)],
                "notes": [*summary.notes, *cost_notes(cost)],
            }
        )
    if note:
        summary = summary.model_copy(update={"notes": [note, *summary.notes]})
    return summary


def failure_note(results: list[ItemResult]) -> str | None:
    """``N of M items failed (x%): ...`` when any item errored or timed out, else ``None``."""
    status: dict[str, set[str]] = {}
    for r in results:
        status.setdefault(r.item_id, set()).add(r.status)
    timeouts = sum("timeout" in s for s in status.values())
    errors = sum("error" in s and "timeout" not in s for s in status.values())
    if not errors and not timeouts:
        return None
    n = len(status)
    return (
        f"{errors + timeouts} of {n} items failed ({100 * (errors + timeouts) / n:.1f}%): "
        f"{errors} errors, {timeouts} timed out; each is in the log with its error and "
        "scores as a failure"
    )


def scorer_names() -> list[str]:
    """Every registered scorer name (``mnemometer list scorers``)."""
    return SCORERS.names()


register_scorer = SCORERS.register
unregister_scorer = SCORERS.unregister

__all__ = [
    "BaseScorer",
    "Record",
    "Scorer",
    "Scores",
    "SummaryScorer",
    "apply",
    "build",
    "failure_note",
    "register_scorer",
    "scorer_names",
    "spec_hash",
    "summarize",
    "unregister_scorer",
]
