"""What the long-conversation benchmarks share: the conversation is the item.

``run_item`` ingests one conversation (a LongMemEval haystack, a Letta fact set) into a
fresh system of the run's spec, asks every selected question of it, and returns one result
per question with ``step`` = the question id. The runner checkpoints conversation by
conversation (a resumed run never re-ingests a finished one); the LLM cache under the run
directory makes re-asked reader and judge calls of an unfinished one free; comparisons pair
on (conversation, question) and cluster by the ``conversation`` group.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from mnemometer import deadline
from mnemometer.datasets._models import Conversation, Dataset, Query
from mnemometer.errors import DatasetError, MnemometerError
from mnemometer.log._schema import ItemResult
from mnemometer.protocols import ProtocolSpec, for_suite
from mnemometer.scoring import judges as J
from mnemometer.scoring.benchmark import Judge
from mnemometer.scoring.benchmark.answers import connect_judges
from mnemometer.scoring.benchmark.probes import KINDS, PROBE_QUESTIONS, probe_answers
from mnemometer.suites._base import BaseSuite, Flag, Item, RunContext, failure
from mnemometer.suites.benchmarks import _pipeline as P
from mnemometer.suites.benchmarks._declare import Declared
from mnemometer.suites.benchmarks._flags import FLAGS
from mnemometer.suites.benchmarks._question import Questions
from mnemometer.systems import close


class BenchmarkSuite(Declared, Questions, BaseSuite):
    """Ingest -> search -> answer -> evaluate over conversations (see the module docstring).

    Args:
        dataset: the benchmark file.
        judges: judge names; the first decides each question's success. ``NAME@MODEL``
            asks that model, so one run can set several judge models side by side.
        judge_model: the judges' model (default: the reader's).
        judge_endpoints: ``MODEL=URL`` entries: where a ``NAME@MODEL`` judge's model is
            served (default: the reader's endpoint).
        questions: ask only the first ``questions`` selected questions (the run's
            ``limit`` counts items, i.e. conversations).
        categories: only these categories (LoCoMo words or codes) or question types.
        baseline: ``full-context``, ``no-memory`` or ``oracle`` instead of the system.
        errata: an errata file applied at load.
        reader_budget: context token budget of the reader (every system gets the same;
            default: the protocol's).
        top_k: retrieved turns given to the reader (default: the protocol's).
        rubric: Letta's rubric (``letta-rubric`` judge).
        protocol: the evaluation protocol (:mod:`mnemometer.protocols`): the reader's
            prompt, top-k, formatting and budget, and the default judges and judge model;
            the arguments above override it.
        protocol_source: where a protocol's unshipped prompts are read from (a checkout
            of the peer's repository, or the file); default: beside the dataset.
        judge_probes: questions whose known-wrong answers every judge is also asked about
            (its false-positive rate; 0: none).
    """

    systems: ClassVar[frozenset[str]] = frozenset({"store", "agent"})
    flags: ClassVar[tuple[Flag, ...]] = FLAGS
    needs_llm: ClassVar[bool] = True
    """The reader and the judges ask the run's LLM endpoint (checked before the run starts,
    recorded in the header)."""
    reads_dataset: ClassVar[bool] = True
    """The CLI hands ``--dataset`` to the suite: it loads (and streams) the file itself."""
    reader_format: ClassVar[str] = ""
    group_key: ClassVar[str] = "type"
    turn_ks: ClassVar[tuple[int, ...]] = (5, 10, 50)
    session_ks: ClassVar[tuple[int, ...]] = (5, 10)
    success_definition: ClassVar[str] = (
        "a question succeeds when the first judge says its answer is correct (with no judge: "
        "LoCoMo's F1 >= 0.5; LoCoMo category 5: the official 'not mentioned' rule); a "
        "question whose reader call failed, or whose judge reply could not be read, fails"
    )

    def __init__(
        self,
        dataset: str | None = None,
        judges: Sequence[str] = (),
        judge_model: str | None = None,
        judge_endpoints: Sequence[str] = (),
        questions: int | None = None,
        categories: Sequence[str] = (),
        baseline: str | None = None,
        errata: str | None = None,
        reader_budget: int | None = None,
        top_k: int | None = None,
        rubric: str | None = None,
        protocol: str | dict[str, Any] | None = None,
        protocol_source: str | None = None,
        judge_probes: int = PROBE_QUESTIONS,
        turn_ks: Sequence[int] | None = None,
        session_ks: Sequence[int] | None = None,
        reader_sha256: str | None = None,
        errata_sha256: str | None = None,
        judge_names: Sequence[str] | None = None,
    ) -> None:
        # The last five come back from a run header on resume: they must still hold.
        if turn_ks is not None:
            self.turn_ks = tuple(int(k) for k in turn_ks)
        if session_ks is not None:
            self.session_ks = tuple(int(k) for k in session_ks)
        if judge_names is not None:
            judges = judge_names
        judges = [j["name"] if isinstance(j, dict) else j for j in judges]
        self._expect_errata = errata_sha256
        if dataset is None:
            raise MnemometerError(f"suite {self.name!r} needs --dataset FILE (the benchmark file)")
        self.path = Path(dataset).resolve()
        if not self.path.is_file():
            raise DatasetError(f"{self.path}: no such file")
        self.protocol_source = str(Path(protocol_source).resolve()) if protocol_source else None
        self.protocol = self._protocol(protocol)
        if reader_sha256 is not None and reader_sha256 != self.protocol.reader_sha256:
            raise MnemometerError(
                "the reader prompt changed since this run started (its SHA-256 differs); "
                "start a new run"
            )
        top_k = self.protocol.top_k if top_k is None else top_k
        if reader_budget is None:
            reader_budget = self.protocol.reader_budget
        if not judges and judge_names is None:
            judges = list(self.protocol.judges)
        if judge_model is None:
            judge_model = self.protocol.judge_model
        if self.protocol.score is not None:
            self.answer_scores = (self.protocol.score, *type(self).answer_scores)
        if self.protocol.exclude is not None and self.protocol.exclude != self.headline_exclude:
            self.headline_exclude = dict(self.protocol.exclude)
            self.headline_rule = (
                f"every question, all categories (the {self.protocol.name} protocol)"
                if not self.protocol.exclude
                else f"every question but {self.protocol.exclude} ({self.protocol.name})"
            )
        if baseline is not None and baseline not in P.BASELINES:
            raise MnemometerError(f"--baseline must be one of {', '.join(P.BASELINES)}")
        for name, value, least in (
            ("--questions", questions, 1),
            ("--reader-budget", reader_budget, 64),
            ("--top-k", top_k, 1),
        ):
            if value is not None and int(value) < least:
                raise MnemometerError(f"{name} must be at least {least}, got {value}")
        self.baseline = baseline
        self.questions = None if questions is None else int(questions)
        self.categories = [str(c) for c in categories]
        self.reader_budget = None if reader_budget is None else int(reader_budget)
        self.top_k = int(top_k)
        if int(judge_probes) < 0:
            raise MnemometerError(f"judge_probes must be 0 or more, got {judge_probes}")
        self.judge_probes = int(judge_probes)
        self._probes: dict[str, dict[str, str]] = {}
        self.errata = str(Path(errata).resolve()) if errata else None
        self.judge_model = judge_model
        self.judge_endpoints = list(judge_endpoints)
        self._endpoints = J.judge_endpoints(self.judge_endpoints)
        rubric = rubric or self._default_rubric()
        self.rubric = str(rubric) if rubric else None
        self._judge_source = J.judge_source(list(judges), self._protocol_roots())
        self.judges = J.resolve_judges(list(judges), self.rubric, self._judge_source)
        self._dataset: Dataset | None = None
        self._errata_sha: str | None = None
        self._ctx: RunContext | None = None
        self._reader: Any = None
        self._judge_llms: dict[str, Any] = {}
        self._scorers: list[Any] = []
        self._summary = self.summary_scorer()
        self._max_questions = 1
        self._counts: dict[str, list[int]] = {}
        self._lock = threading.Lock()

    # ---- declared options ---------------------------------------------------------------

    def options(self) -> dict[str, Any]:
        """What is measured: retrieval depth, budget, pinned reader and judges, selection."""
        self.dataset()  # the errata hash is known once the file is read
        return {
            "top_k": self.top_k,
            "turn_ks": list(self.turn_ks),
            "session_ks": list(self.session_ks),
            "reader_budget": self.reader_budget,
            "reader_sha256": self.protocol.reader_sha256,
            "protocol": self.protocol.option(),
            "judges": [{"name": j.name, "prompt_sha256": j.prompt_hash} for j in self.judges],
            "judge_model": self.judge_model,
            "questions": self.questions,
            "categories": self.categories,
            "errata_sha256": self._errata_sha,
            "judge_probes": self.judge_probes if self.judges else 0,
        }

    def inputs(self) -> dict[str, Any]:
        """Where the files live, and the baseline (the answering side's context)."""
        return {
            "dataset": str(self.path),
            "errata": self.errata,
            "rubric": self.rubric,
            "protocol_source": self.protocol_source,
            "baseline": self.baseline,
            "judge_names": [j.name for j in self.judges],
            "judge_endpoints": self.judge_endpoints,
        }

    def _default_rubric(self) -> Path | None:
        return None

    # ---- the protocol -------------------------------------------------------------------

    def _protocol_roots(self) -> list[Path]:
        """Where unshipped prompts are looked for: ``--protocol-source``, else beside the data.

        Beside the data: the dataset's folder, and the checkout it sits in (LoCoMo's
        ``data/locomo10.json``).
        """
        if self.protocol_source is not None:
            return [Path(self.protocol_source)]
        return [self.path.parent, self.path.parent.parent]

    def _protocol(self, given: str | dict[str, Any] | None) -> ProtocolSpec:
        """The protocol named (on resume: the header's record, checked), prompts read."""
        return for_suite(self.name, given, self._protocol_roots())

    # ---- the dataset --------------------------------------------------------------------

    def load(self) -> Dataset:
        """The benchmark file as a dataset (subclasses)."""
        raise NotImplementedError

    def dataset(self) -> Dataset:
        """The benchmark file, checked to be this benchmark's, errata applied (cached)."""
        if self._dataset is None:
            from mnemometer.datasets._readers import detect_reader, get_reader, read_head

            if not get_reader(self.reader_format).sniff(self.path, read_head(self.path)):
                found = detect_reader(self.path)
                what = f"a {found.name} file" if found else "in no known format"
                fix = ""
                if found is not None and found.name in _BENCHMARK_FORMATS:
                    fix = f"; run `mnemometer run {found.name} --dataset {self.path}`"
                raise DatasetError(f"{self.path}: {what}, not {self.reader_format}{fix}")
            ds = self.load()
            if self.errata:
                from mnemometer.datasets._errata import apply_errata

                ds, _, self._errata_sha = apply_errata(ds, self.errata)
            if self._expect_errata and self._errata_sha != self._expect_errata:
                raise DatasetError(
                    f"{self.errata}: the errata file changed since this run started; start a "
                    "new run"
                )
            self._dataset = ds
        return self._dataset

    def selected(self, dataset: Dataset) -> list[Query]:
        """The questions this run asks (``--category``, then ``--questions``), in file order."""
        qs = list(dataset.queries)
        if self.categories:
            wanted = {c.lower() for c in self.categories}
            qs = [
                q
                for q in qs
                if q.type.lower() in wanted or str(q.metadata.get("category")) in wanted
            ]
            if not qs:
                kinds = sorted({q.type for q in dataset.queries})
                raise MnemometerError(
                    f"--category {', '.join(self.categories)} selects no question; categories: {', '.join(kinds)}"
                )
        return qs[: self.questions] if self.questions is not None else qs

    def plan(self, dataset: Dataset) -> list[Item]:
        """One item per conversation with selected questions: ``(conversation, questions)``."""
        by: dict[str, list[Query]] = {}
        for q in self.selected(dataset):
            by.setdefault(q.conversation_id or "", []).append(q)
        items = []
        for conv in dataset.conversations:
            if conv.id in by:
                items.append(Item(conv.id, len(items), (conv, by[conv.id])))
        self._max_questions = max((len(v) for v in by.values()), default=1)
        return items

    def conversation(
        self, stub: Conversation, questions: list[Query]
    ) -> tuple[Conversation, list[Query]]:
        """The full conversation of an item (LongMemEval loads it from the file)."""
        return stub, questions

    # ---- running ------------------------------------------------------------------------

    def item_timeout(self, default: float | None) -> float | None:
        """The run's timeout per call, times the calls of the largest conversation."""
        if default is None:
            return None
        calls = (self._max_questions + 1) * (1 + len(self.judges))
        probed = min(self.judge_probes, self._max_questions) if self.judges else 0
        return default * (calls + len(KINDS) * len(self.judges) * probed)

    def setup(self, system: Any, dataset: Dataset, ctx: RunContext) -> dict[str, float]:
        """Connect the reader and judges (cached under the run directory) and pin them."""
        from dataclasses import replace

        from mnemometer.llm import LLMClient, require_settings

        self._ctx = ctx
        settings = require_settings(ctx.llm)
        if settings.cache_dir is None:
            settings = replace(settings, cache_dir=ctx.run_dir / "llm-cache")
        self._reader = LLMClient.from_settings(settings)
        self._reader.check()
        P.check_counter(ctx.run_dir, self._reader)
        self._judge_llms = connect_judges(
            self.judges, self._reader, self.judge_model, self._endpoints
        )
        self._scorers = [
            self.answer_scorer(),
            *(
                Judge(
                    j.name, self.judge_rubric(j), self.judge_exclude, llm=self._judge_llms[j.name]
                )
                for j in self.judges
            ),
            *self.rule_scorers(),
        ]
        if self.judges and self.judge_probes:
            self._probes = probe_answers(
                [
                    (q.id, q.text, q.answer, q.type)
                    for q in self.selected(dataset)
                    if q.answer is not None
                    and not self._unjudged(q)
                    and not q.metadata.get("abstention")  # "not mentioned" is right there
                    and (ctx.planned is None or (q.conversation_id or "") in ctx.planned)
                ],
                ctx.seed,
                self.judge_probes,
            )
        (ctx.run_dir / "pins.json").write_text(json.dumps(self.pins(), indent=1), encoding="utf-8")
        self._start_progress(ctx)
        return {}

    def _unjudged(self, q: Query) -> bool:
        groups = self.groups(q)
        return any(groups.get(k) in vs for k, vs in self.judge_exclude.items())

    def pins(self) -> dict[str, Any]:
        """The reader and every judge, in full: what a number can be traced to."""
        model = self._reader.model if self._reader is not None else None
        jmodel = self.judge_model or model
        return {
            "reader": {
                "model": model,
                "prompt": self.protocol.text("prompt"),
                "prompt_sha256": self.protocol.reader_sha256,
                "temperature": self.protocol.temperature,
                "max_tokens": self.protocol.max_tokens,
                "context_budget_tokens": self.reader_budget,
                "top_k": self.top_k,
            },
            "judges": [self._judge_record(j, jmodel) for j in self.judges],
            "protocol": self.protocol.record(),
        }

    def _judge_record(self, j: J.JudgeSpec, default_model: str | None) -> dict[str, Any]:
        client = self._judge_llms.get(j.name)
        record = j.record(client.model if client is not None else j.model or default_model)
        record["base_url"] = client.settings.base_url if client is not None else None
        return record

    def teardown(self) -> None:
        """Release the LLM clients."""
        clients = (self._reader, *self._judge_llms.values())
        for c in {id(x): x for x in clients if x is not None}.values():
            c.close()

    def run_item(self, system: Any, item: Item) -> list[ItemResult | dict[str, Any]]:
        """Ingest one conversation, then ask, answer and judge each of its questions."""
        assert self._ctx is not None, "setup() first"
        stub, questions = item.payload
        kind = self._ctx.system.kind
        live: Any = None
        ingest_ms: float | None = None
        ingested: dict[str, Any] = {}
        failure: str | None = None
        try:
            conv, questions = self.conversation(stub, questions)
            turns = P.turn_index(conv)
            if self.baseline is None:
                ns = _namespace(conv.id)
                if kind == "agent":
                    live = system.create(ns)
                    ingest_ms = P.ingest_agent(live, conv)
                else:
                    live = self._ctx.isolated(ns)
                    ingest_ms = P.ingest_store(live, conv)
                ingested = P.ingested(live, len(turns))
        except deadline.Cancelled:
            raise  # the item was abandoned: the runner has recorded its timeout
        except Exception as e:  # every question is kept, failed, with the reason
            failure = f"ingest failed: {type(e).__name__}: {e}"
            conv, turns = stub, {}
        self._progress("ingest")
        out: list[ItemResult | dict[str, Any]] = []
        try:
            for q in questions:
                if failure is not None:
                    out.append(self._failed_question(item, q, failure, "error"))
                else:
                    deadline.check()
                    out.append(self._ask(item, conv, turns, q, live, kind, ingest_ms))
                    _extra(out[-1]).update(ingested)
                self._progress("questions")
        finally:
            if live is not None:
                close(live)
        return out

    def _start_progress(self, ctx: RunContext) -> None:
        """Totals of the ``ingest`` and ``questions`` phases (the run's --limit applied)."""
        from mnemometer.log._reader import read_header, read_items

        header = read_header(ctx.run_dir)
        plan = sorted(self.plan(self.dataset()), key=lambda it: it.index)
        if header.limit is not None:
            plan = plan[: header.limit]
        done = {r.item_id for r in read_items(ctx.run_dir) if r.status == "ok"}
        self._counts = {
            "ingest": [sum(it.id in done for it in plan), len(plan)],
            "questions": [
                sum(len(it.payload[1]) for it in plan if it.id in done),
                sum(len(it.payload[1]) for it in plan),
            ],
        }
        for phase, (n, total) in self._counts.items():
            ctx.report(phase, n, total)

    def _progress(self, phase: str) -> None:
        if self._ctx is None or phase not in self._counts:
            return
        with self._lock:
            count = self._counts[phase]
            count[0] += 1
            done, total = count
        self._ctx.report(phase, done, total)

    def groups(self, q: Query) -> dict[str, str]:
        """Breakdown keys: the category or type, and the conversation (for clustering)."""
        return {self.group_key: q.type, "conversation": q.conversation_id or ""}

    def _failed_question(
        self, item: Item, q: Query, error: str, status: str, extra: dict[str, Any] | None = None
    ) -> ItemResult:
        return ItemResult(
            item_id=item.id,
            index=item.index,
            step=q.id,
            status=status,
            error=error,
            success=False,
            input=q.text,
            groups=self.groups(q),
            expected=q.relevant_ids,
            extra={**(extra or {}), "gold": q.answer},
        )

    def failed(self, item: Item, error: str, status: str) -> ItemResult:
        """A conversation whose call failed as a whole: one result naming its questions."""
        _, questions = item.payload
        return failure(
            item,
            error,
            status,
            groups={"conversation": item.id},
            extra={"questions": [q.id for q in questions]},
        )


def _extra(result: ItemResult | dict[str, Any]) -> dict[str, Any]:
    """A question result's ``extra`` (a record or a failed result), to add to."""
    return result.extra if isinstance(result, ItemResult) else result.setdefault("extra", {})


_BENCHMARK_FORMATS = frozenset({"locomo", "longmemeval", "letta-core-memory", "memoryagentbench"})
"""The benchmark file formats; the suite that runs each format's files has its name."""


def _namespace(conversation_id: str) -> str:
    import hashlib

    digest = hashlib.sha1(conversation_id.encode()).hexdigest()[:8]
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", conversation_id)[:40] + "-" + digest
