"""``mnemometer score``: re-score a finished run's records, never touching its system.

A run's ``items.jsonl`` is the record of what the system did; its header records how the
records were scored (:class:`~mnemometer.log._schema.ScoringRecord`). Re-scoring builds the
scorers again, with other judges or another headline, applies the changed ones to every
record (stripping what the replaced ones wrote first) and writes a new run directory: the
same records, the new metrics, a header naming its parent and both scorings. Only scorers
run: the store, the agent and the reader are never built (an LLM judge asks its model,
through the LLM cache under the new directory). A scoring killed halfway continues when
asked again (``mnemometer score`` with the same ``--out``, or ``mnemometer run --resume``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mnemometer.errors import MnemometerError, RunLogError
from mnemometer.log._lock import DirLock
from mnemometer.log._reader import read_header, read_items
from mnemometer.log._schema import (
    HEADER_FILE,
    HeadlineSpec,
    ParentRun,
    RunHeader,
    ScorerSpec,
    ScoringRecord,
)
from mnemometer.log._writer import ItemWriter, write_header, write_summary
from mnemometer.runner._prices import price_file_sha256, repriced
from mnemometer.runner._setup import RunResult, RunSettings, scoring_of
from mnemometer.scoring import judges as J
from mnemometer.scoring._scorer import apply, build, summarize
from mnemometer.scoring.benchmark import PINS_FILE, Judge, headline_spec
from mnemometer.scoring.benchmark.answers import judge_target
from mnemometer.scoring.benchmark.probes import PROBE_QUESTIONS, probe_answers
from mnemometer.scoring.judges import judge_endpoints as judge_endpoints_of

SIDE_FILES = ("pins.json", "ingest.json", "ingest.jsonl")
"""Files beside a run's log that its summary reads (copied to the re-scored run)."""
BINARY = ("hit", "success")
"""Per-item metrics that are 0 or 1 (with every ``judge:*``)."""


def score(
    run_dir: str | Path,
    *,
    judges: Sequence[str] | None = None,
    judge_endpoints: Sequence[str] = (),
    judge_model: str | None = None,
    rubric: str | None = None,
    headline: str | None = None,
    out: str | Path | None = None,
    settings: RunSettings | None = None,
) -> Any:
    """Re-score the finished run in ``run_dir`` into a new run directory.

    Args:
        run_dir: a finished run.
        judges: judges to score with instead of the run's (``lenient``, ``strict@MODEL``,
            ...); ``[]`` scores without a judge; ``None`` keeps the run's.
        judge_endpoints: ``MODEL=URL``: where a ``NAME@MODEL`` judge's model is served.
        judge_model: the model judges without their own ask.
        rubric: Letta's rubric, for ``letta-rubric``.
        headline: another headline metric (``recall@10``, ``f1``); default: the suite's
            (following the first judge when the judges change).
        out: the new run directory (default: beside the run, named after the scoring).
        settings: the LLM endpoint judges ask by default, concurrency, progress, and a
            price file (``prices``) that prices the new run afresh; without one the parent's
            pinned prices are kept and a model they lack (a new judge's) is priced now.

    Returns:
        The new run's :class:`~mnemometer.runner.RunResult`.

    Raises:
        MnemometerError: an unfinished run, a scorer that cannot be changed this way, no
            endpoint for a judge, an output directory that holds another run (or this
            one priced with another file), or an invalid price file.
    """
    settings = (settings or RunSettings()).checked()
    parent_dir = Path(run_dir)
    parent = read_header(parent_dir)
    if parent.parent is not None and parent.status != "finished":
        raise RunLogError(f"{parent_dir}: a re-scoring that did not finish; resume it first")
    if parent.status != "finished":
        raise RunLogError(
            f"{parent_dir}: the run did not finish; finish it first (`mnemometer run --resume "
            f"{parent_dir}`), then score it"
        )
    old = parent.scoring or _legacy_scoring(parent, settings)
    where = _Where(settings, parent, judge_endpoints_of(list(judge_endpoints)), judge_model)
    new = _rescoring(old, parent, judges, rubric, headline, where)
    target = (
        Path(out)
        if out is not None
        else parent_dir.with_name(f"{parent_dir.name}-scored-{_digest(new, settings.prices)}")
    )
    target.mkdir(parents=True, exist_ok=True)
    with DirLock(target):
        header = _start(target, parent_dir, parent, old, new, settings)
        return _finish(target, header, settings)


def resume_scoring(run_dir: str | Path, settings: RunSettings | None = None) -> Any:
    """Continue a re-scoring that was killed: its header names the parent and both scorings.

    Raises:
        RunLogError: not a re-scored run.
        MnemometerError: ``settings.prices`` names another file than it was priced with.
    """
    settings = (settings or RunSettings()).checked()
    path = Path(run_dir)
    with DirLock(path):
        header = read_header(path)
        if header.parent is None or header.scoring is None:
            raise RunLogError(f"{path}: not a re-scored run")
        if _other_prices(header, settings.prices):
            raise MnemometerError(
                f"{path}: was priced with another price file; re-price into a new --out"
            )
        return _finish(path, header, settings)


@dataclass
class _Where:
    """Where judges ask: the run's LLM settings, ``MODEL=URL`` endpoints, a judge model."""

    settings: RunSettings
    parent: RunHeader
    endpoints: dict[str, str]
    model: str | None

    def base(self) -> Any:
        """The default endpoint (the settings', else the run's recorded one), or ``None``."""
        if self.settings.llm is not None:
            return self.settings.llm
        llm = self.parent.llm or {}
        if llm.get("base_url") and llm.get("model"):
            from mnemometer.llm import LLMSettings

            return LLMSettings(base_url=llm["base_url"], model=llm["model"])
        return None

    def of(self, judge: J.JudgeSpec) -> tuple[str, str]:
        """``(model, base_url)`` the judge asks.

        Raises:
            MnemometerError: nowhere to ask it.
        """
        base = self.base()
        if judge.model and judge.model in self.endpoints:
            return judge.model, self.endpoints[judge.model]
        if base is None:
            raise MnemometerError(
                f"no LLM endpoint for judge {judge.name!r}: pass --llm-base-url URL and "
                "--llm-model M, or --judge NAME@MODEL with --judge-endpoint MODEL=URL"
            )
        return judge_target(judge, self.model, self.endpoints, base)


def _legacy_scoring(parent: RunHeader, settings: RunSettings) -> ScoringRecord:
    """The scoring the suite declares, for a run recorded before scoring was a stage."""
    from mnemometer.suites import create_suite

    suite = create_suite(parent.suite, {**parent.suite_options, **parent.suite_inputs})
    found = scoring_of(suite, settings.llm)
    if found is None:
        raise MnemometerError(f"suite {parent.suite!r} declares no scoring: it cannot be re-scored")
    return found


def _rescoring(
    old: ScoringRecord,
    parent: RunHeader,
    judges: Sequence[str] | None,
    rubric: str | None,
    headline: str | None,
    where: _Where,
) -> ScoringRecord:
    """The new scoring record: the old one with other judges and headline."""
    scorers = list(old.scorers)
    summary = old.summary
    spec = old.headline
    if judges is not None:
        if "judges" not in summary.args:
            raise MnemometerError(
                f"suite {parent.suite!r} asks no judge: its records cannot be judged; "
                "re-score its headline instead (--headline METRIC)"
            )
        unused = set(where.endpoints) - {j.partition("@")[2] for j in judges}
        if unused:
            raise MnemometerError(
                f"--judge-endpoint names {', '.join(sorted(unused))}, which no --judge "
                "NAME@MODEL uses"
            )
        before = [s for s in scorers if s.name == "judge"]
        exclude = before[0].args.get("exclude") if before else summary.args.get("exclude")
        rubric = rubric or (before[0].args.get("rubric") if before else None)
        new_judges = []
        for j in J.resolve_judges(list(judges), rubric):
            model, url = where.of(j)
            new_judges.append(Judge(j.name, rubric, exclude, model=model, base_url=url).spec())
        scorers = [s for s in scorers if s.name != "judge"] + new_judges
        names = [j.args["judge"] for j in new_judges]
        summary = _respec(summary, judges=names)
        if spec.metric.startswith("judge:") or not before:
            answer = summary.args.get("answer_scores", ["f1"])[0]
            spec = headline_spec(
                names, answer, spec.exclude, spec.scope, spec.cluster or "conversation"
            )
    if headline is not None:
        spec = _headline(spec, headline)
    return ScoringRecord(scorers=scorers, summary=summary, headline=spec)


def _respec(spec: ScorerSpec, **args: Any) -> ScorerSpec:
    """``spec`` with ``args`` replaced, its hash recomputed by building it."""
    return build(spec.model_copy(update={"args": {**spec.args, **args}})).spec()


def _headline(spec: HeadlineSpec, metric: str) -> HeadlineSpec:
    name, _, k = metric.partition("@")
    if not name or (k and not k.isdigit()):
        raise MnemometerError(f"--headline {metric!r}: expected METRIC or METRIC@K (recall@10)")
    binary = name in BINARY or name.startswith("judge:")
    return spec.model_copy(
        update={
            "metric": name,
            "k": int(k) if k else None,
            "label": metric,
            "binary": binary,
            "composite": False,
        }
    )


def _digest(scoring: ScoringRecord, prices: str | Path | None = None) -> str:
    doc = json.dumps(scoring.model_dump(mode="json"), sort_keys=True)
    if prices is not None:  # another price file, another run directory
        doc += str(price_file_sha256(prices))
    return hashlib.sha256(doc.encode()).hexdigest()[:8]


def _other_prices(have: RunHeader, prices: str | Path | None) -> bool:
    """Whether ``--prices`` names a file other than the one ``have`` was priced with."""
    if prices is None:
        return False
    return have.cost is None or have.cost.overrides_sha256 != price_file_sha256(prices)


def _start(
    target: Path,
    parent_dir: Path,
    parent: RunHeader,
    old: ScoringRecord,
    new: ScoringRecord,
    settings: RunSettings,
) -> RunHeader:
    """The new run's header: a fresh one, or the one of a scoring that was killed."""
    if (target / HEADER_FILE).exists():
        have = read_header(target)
        if (
            have.parent is None
            or have.parent.run_id != parent.run_id
            or have.scoring != new
            or _other_prices(have, settings.prices)
        ):
            raise MnemometerError(f"{target}: already holds another run; choose another --out")
        return have
    for name in SIDE_FILES:
        if (parent_dir / name).is_file():
            shutil.copy2(parent_dir / name, target / name)
    options = dict(parent.suite_options)
    judges = [s for s in new.scorers if s.name == "judge"]
    if "judges" in options:
        options["judges"] = [
            {"name": j.args["judge"], "prompt_sha256": j.args["prompt_sha256"]} for j in judges
        ]
    header = parent.model_copy(
        update={
            "run_id": uuid.uuid4().hex[:12],
            "created_at": datetime.now(UTC),
            "status": "running",
            "suite_options": options,
            "scoring": new,
            "parent": ParentRun(run_id=parent.run_id, path=str(parent_dir), scoring=old),
            "resumes": 0,
            "timings": {},
            "notes": [*parent.notes, f"re-scored from run {parent.run_id} ({parent_dir})"],
            "llm": settings.llm.redacted() if settings.llm is not None else parent.llm,
        }
    )
    cost, notes = repriced(parent, header, settings.llm, settings.prices)
    header = header.model_copy(update={"cost": cost, "notes": [*header.notes, *notes]})
    write_header(target, header)
    return header


def _finish(target: Path, header: RunHeader, settings: RunSettings) -> Any:
    """Score what is left, then the summary; the header says finished last."""
    assert header.parent is not None and header.parent.scoring is not None
    assert header.scoring is not None
    old, new = header.parent.scoring, header.scoring
    fresh_specs = [s for s in new.scorers if s not in old.scorers]
    clients = _clients(fresh_specs, settings, target)
    try:
        fresh = [
            build(s, llm=clients[s.args["base_url"], s.args["model"]])
            if s.name == "judge"
            else build(s, capabilities=list(header.system.capabilities))
            for s in fresh_specs
        ]
        _pin_judges(target, new, clients)
        stale = [s for s in old.scorers if s not in new.scorers]
        _score_items(Path(header.parent.path), target, stale, fresh, new, settings, header.seed)
    finally:
        for c in clients.values():
            c.close()
    summary = summarize(header, read_items(target), target)
    write_summary(target, summary)
    header = header.model_copy(update={"status": "finished"})
    write_header(target, header)
    return RunResult(target, header, summary)


def _clients(specs: list[ScorerSpec], settings: RunSettings, target: Path) -> dict[Any, Any]:
    """One checked LLM client per (endpoint, model) a judge asks, cached under ``target``."""
    from mnemometer.llm import LLMClient, LLMSettings

    out: dict[tuple[str, str], Any] = {}
    for s in specs:
        if s.name != "judge":
            continue
        key = (s.args["base_url"], s.args["model"])
        if key in out:
            continue
        base = settings.llm or LLMSettings(base_url=key[0], model=key[1])
        client = LLMClient.from_settings(
            replace(base, base_url=key[0], model=key[1], cache_dir=target / "llm-cache")
        )
        client.check()
        out[key] = client
    return out


def _pin_judges(target: Path, new: ScoringRecord, clients: dict[Any, Any]) -> None:
    """``pins.json`` with the judges in full (the reader's pin is the parent's)."""
    path = target / PINS_FILE
    pins = json.loads(path.read_text("utf-8")) if path.is_file() else {}
    records = []
    for s in new.scorers:
        if s.name == "judge":
            judge = J.resolve_judges([s.args["judge"]], s.args.get("rubric"))[0]
            records.append({**judge.record(s.args["model"]), "base_url": s.args["base_url"]})
    pins["judges"] = records
    path.write_text(json.dumps(pins, indent=1), encoding="utf-8")
    del clients


def _probes(records: list[Any], fresh: list[Any], seed: int) -> dict[str, dict[str, str]]:
    """Known-wrong answers for a new judge, from the records (a run without its own)."""
    judges = [s for s in fresh if isinstance(s, Judge)]
    if not judges or any("probe_answers" in r.extra for r in records):
        return {}
    questions = [
        (
            r.step or r.item_id,
            r.input,
            str(r.extra["gold"]),
            r.groups.get("category") or r.groups.get("type", ""),
        )
        for r in records
        if r.status == "ok"
        and judges[0].judges({"extra": r.extra, "groups": r.groups})
        and not r.extra.get("abstention", (r.step or "").endswith("_abs"))
    ]
    return probe_answers(questions, seed, PROBE_QUESTIONS)


def _score_items(
    parent_dir: Path,
    target: Path,
    stale: list[ScorerSpec],
    fresh: list[Any],
    new: ScoringRecord,
    settings: RunSettings,
    seed: int = 0,
) -> None:
    """Every parent record, its changed scorers re-applied, appended once to the new log."""
    done = {r.item_id for r in read_items(target)}  # the reader keeps whole items only
    stripped = [build(s, **_strip_context(s)) for s in stale]
    summary = build(new.summary)
    todo: dict[str, list[Any]] = {}
    records = read_items(parent_dir)
    for r in records:
        if r.item_id not in done:
            todo.setdefault(r.item_id, []).append(r)
    probes = _probes(records, fresh, seed)
    writer = ItemWriter(target, fsync=settings.fsync)
    total = len(todo)

    def one(r: Any) -> dict[str, Any]:
        record = r.model_dump(mode="json")
        for s in stripped:
            record = s.strip(record)
        key = r.step or r.item_id
        if key in probes and "probe_answers" not in record["extra"]:
            record["extra"]["probe_answers"] = probes[key]  # a run recorded before probes
        return apply(record, fresh, summary)

    def item(results: list[Any]) -> list[dict[str, Any]]:
        return [one(r) for r in results]

    try:
        with ThreadPoolExecutor(max_workers=settings.concurrency) as pool:
            # An item's lines (a conversation's questions) are written together, as the
            # runner writes them: a killed scoring leaves whole items or none.
            for n, lines in enumerate(pool.map(item, todo.values()), 1):
                writer.write_many(lines)
                if settings.progress is not None:
                    settings.progress("items", n, total)
    finally:
        writer.close()


def _strip_context(spec: ScorerSpec) -> dict[str, Any]:
    return {"llm": None} if spec.name == "judge" else {}


def rescore_unscored(run_dir: Path, header: RunHeader, settings: RunSettings) -> int:
    """Ask again every scorer that could not score a record (a judge whose call failed).

    The records are the run's own: nothing of the system runs. Each item with such a record
    is written again whole (its latest attempt wins when the log is read). Returns how many
    items were scored again.
    """
    scoring = header.scoring
    records = read_items(run_dir)
    if scoring is None or not any(r.unscored for r in records):
        return 0
    names = {u for r in records for u in r.unscored}
    specs = [
        s for s in scoring.scorers if s.name == "judge" and f"judge:{s.args['judge']}" in names
    ]
    if not specs:
        return 0
    clients = _clients(specs, settings, run_dir)
    try:
        judges = {
            f"judge:{s.args['judge']}": build(s, llm=clients[s.args["base_url"], s.args["model"]])
            for s in specs
        }
        summary = build(scoring.summary)
        by_item: dict[str, list[Any]] = {}
        for r in records:
            by_item.setdefault(r.item_id, []).append(r)
        again = {i: rs for i, rs in by_item.items() if any(r.unscored for r in rs)}
        writer = ItemWriter(run_dir, fsync=settings.fsync)
        try:
            for rs in again.values():
                lines = []
                for r in rs:
                    record = r.model_dump(mode="json")
                    # Not stripped: the failed verdict's attempt makes the new request a new
                    # one (never the failed reply from the cache), and its tokens were paid.
                    asked = [judges[u] for u in r.unscored if u in judges]
                    lines.append(apply(record, asked, summary) if asked else record)
                writer.write_many(lines)
        finally:
            writer.close()
    finally:
        for c in clients.values():
            c.close()
    return len(again)


__all__ = ["rescore_unscored", "resume_scoring", "score"]
