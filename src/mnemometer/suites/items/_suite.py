"""``items``: run a suite directory of typed items against a store.

Each item searches the store; answer-type items then build an answer from the hits. Under
the ``offline`` profile the answer is deterministic and extractive (no provider calls);
under ``llm`` an OpenAI-compatible model answers from the retrieved memories.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from mnemometer.datasets._models import Dataset, DatasetInfo, Query
from mnemometer.errors import MnemometerError
from mnemometer.log._schema import HeadlineSpec, ItemResult, Metric, ScoringRecord
from mnemometer.scoring import text as sc
from mnemometer.scoring.summaries import ItemsSummary
from mnemometer.stores._protocol import Hit
from mnemometer.suites._base import BaseSuite, Flag, Item, RunContext, failure
from mnemometer.suites._store_ids import StoreIds, run_ids
from mnemometer.suites.items._flags import FLAGS, check_requests, origins_of, set_by_manifest
from mnemometer.suites.items._manifest import MANIFEST, LoadedSuite, load_suite, suite_sandbox
from mnemometer.suites.items._types import (
    METADATA_FIELDS,
    BaseItem,
    item_type,
    runs_shell,
    shell_gate,
)
from mnemometer.suites.retrieval import store_dataset, timed_search

REFUSAL = "Insufficient evidence in memory to answer."
_AGENT_PERSONA = f"If your memories do not answer a question, reply exactly: {REFUSAL}"
_LLM_SYSTEM = (
    "Answer the question using only the memories given. Prefer the most recent memory when "
    f"memories disagree. If they do not contain the answer, reply exactly: {REFUSAL}"
)


@dataclass
class Answer:
    """What the answerer produced for one item."""

    text: str
    refused: bool
    cited: list[str]
    tokens: dict[str, int] = field(default_factory=dict)
    ms: float = 0.0
    counted: dict[str, int] = field(default_factory=dict)
    """``tokens`` as mnemometer counted them (the model's tokenizer, or the estimate)."""


@dataclass
class _Ctx:
    suite: ItemsSuite
    system: Any

    def search(self, text: str, top_k: int) -> tuple[list[Hit], float]:
        if self.suite._agent is not None:  # an agent shows no hits, only answers
            return [], 0.0
        return timed_search(self.system, text, top_k, ids=self.suite.store_ids)

    def memory_text(self, h: Hit) -> str:
        seed = self.suite.by_id.get(h.memory_id)
        return seed.memory.text if seed else h.text

    def tags(self, ids: list[str]) -> list[str]:
        return [t for i in ids if (s := self.suite.by_id.get(i)) for t in s.tags]

    def files(self, ids: list[str]) -> list[str]:
        return [f for i in ids if (s := self.suite.by_id.get(i)) for f in s.files]


HEADLINE = HeadlineSpec(
    metric="success",
    label="success",
    scope="every item (each step of a build sequence counts); a failed item fails",
    binary=True,
    cluster="fixture",
)
"""A suite directory's headline: its items' success under their types' checks."""


class ItemsSuite(BaseSuite):
    """A suite directory (``suite.toml`` + ``items.jsonl``) of typed items.

    The condition (which store or agent), the repeat and where builds go come from the run
    (:class:`~mnemometer.suites.RunContext`), not from options: the runner owns conditions
    and repeats.

    Args:
        suite_dir: the suite directory (or its ``suite.toml``).
        profile: ``offline`` or ``llm`` (default: the manifest's ``default_profile``).
        memories: seed memories overriding the manifest's.
        min_support: offline answers use hits holding at least this share of the
            question's content words; below it the answer is a refusal.
        answer_hits: offline answers quote this many supporting hits.
        resume_hits: hits a resume briefing draws on.
        skip_unsupported: skip (and record) shell items instead of refusing the suite
            when ``allow_shell`` is off.
        allow_shell: run items that execute suite-provided commands (suites are code).
        dry_run: validate shell items and execute nothing.
        pass_env: environment names (or ``*`` patterns) shell items receive, beyond the
            minimal environment. The manifest's ``pass_env`` is a request these must
            cover when commands run, else :class:`~mnemometer.errors.ConsentError`.
        isolation: how shell commands run: ``auto`` (bubblewrap where it works, else
            none), ``bwrap`` or ``none`` (see docs/sandbox.md).
        agent_home: whose bootstrap files the private HOME gets (default: none; the
            manifest's ``agent_home`` is a request this must name, or replace).
        sandbox_ro: more paths the sandbox shows read-only (an agent CLI's install).
        sandbox_network: keep the network inside the sandbox; it grants the manifest's
            ``[sandbox] network = true`` (so does ``isolation="none"``).
        origins: where each option only the user may give came from (``allow_shell``,
            ``isolation``, ``pass_env``, the sandbox flags): ``command line`` for the ones
            the command line named, ``default`` for the rest. Without it (the API), a value
            other than the default is an ``API argument``. What ``suite.toml`` asks for
            too (its ``pass_env``, ``[sandbox]`` ``network`` and ``agent_home``) is marked
            ``requested by suite.toml``. Recorded in the run header.
        suite_checksum: expected suite checksum (set on resume; a changed suite is refused).
        fixture_checksum: expected fixture checksum (likewise).
        memories_checksum: expected checksum of the memories file (likewise).
        suite_name: recorded manifest name.
        suite_version: recorded manifest version.
        label_status: recorded label status.
    """

    name: ClassVar[str] = "items"
    version: ClassVar[str] = "1"
    systems: ClassVar[frozenset[str]] = frozenset({"store", "agent"})
    flags: ClassVar[tuple[Flag, ...]] = FLAGS
    success_definition: ClassVar[str] = (
        "an item (or a build step) succeeds when its type's checks all hold (its 'success' "
        "metric is 1: see docs/ablations.md for each type); errored and timed-out items fail"
    )

    def __init__(
        self,
        suite_dir: str,
        profile: str | None = None,
        memories: str | None = None,
        min_support: float = 0.5,
        answer_hits: int = 1,
        resume_hits: int = 10,
        skip_unsupported: bool = False,
        allow_shell: bool = False,
        dry_run: bool = False,
        pass_env: list[str] | tuple[str, ...] = (),
        isolation: str = "auto",
        agent_home: str | None = None,
        sandbox_ro: list[str] | None = None,
        sandbox_network: bool = False,
        origins: dict[str, str] | None = None,
        suite_checksum: str | None = None,
        fixture_checksum: str | None = None,
        memories_checksum: str | None = None,
        suite_name: str | None = None,
        suite_version: str | None = None,
        label_status: str | None = None,
    ) -> None:
        del suite_name, suite_version, label_status  # recorded; the manifest is the truth
        self.loaded: LoadedSuite = load_suite(suite_dir, memories)
        for what, expected, actual in (
            ("suite", suite_checksum, self.loaded.checksum),
            ("fixture", fixture_checksum, self.loaded.fixture_checksum),
            ("memories", memories_checksum, self.loaded.memories_checksum),
        ):
            if expected is not None and expected != actual:
                raise MnemometerError(
                    f"{suite_dir}: the {what} changed since the run started "
                    "(checksum differs); start a new run"
                )
        m = self.loaded.manifest
        self.profile = profile or m.default_profile
        if self.profile not in ("offline", "llm"):
            raise MnemometerError(f"profile must be 'offline' or 'llm', got {self.profile!r}")
        if not 0.0 <= min_support <= 1.0:
            raise MnemometerError(f"min_support must be in [0, 1], got {min_support}")
        self.suite_dir = str(self.loaded.root.resolve())
        self.memories = str(self.loaded.memories_path.resolve()) if memories else None
        self.min_support, self.answer_hits, self.resume_hits = min_support, answer_hits, resume_hits
        self.by_id = {s.memory.id: s for s in self.loaded.memories}
        self.items, self.skipped = shell_gate(
            self.loaded.items, allow_shell, dry_run, skip_unsupported, str(self.loaded.root)
        )
        self.allow_shell, self.dry_run = allow_shell, dry_run
        self.origins = origins_of(
            origins,
            set_by_manifest(m, agent_home),
            allow_shell=allow_shell,
            isolation=isolation != "auto",
            pass_env=bool(pass_env),
            agent_home=agent_home is not None,
            sandbox_ro=bool(sandbox_ro),
            sandbox_network=sandbox_network,
        )
        if m.sandbox.network and not sandbox_network and isolation == "none":
            how = self.origins["isolation"]  # no isolation keeps the host's network anyway
            self.origins["sandbox_network"] = f"{how} (--sandbox none), requested by suite.toml"
        self.skip_unsupported = skip_unsupported
        self._sandbox_ro = list(sandbox_ro or [])
        self._shell = any(runs_shell(it) for it in self.items) and not dry_run
        if self._shell:  # suite.toml asks; the user grants (before anything runs)
            where = str(self.loaded.root / MANIFEST)
            check_requests(m, where, pass_env, isolation, agent_home, sandbox_network)
        # Only the user's: what suite.toml asked for is granted by these or refused above.
        self.user_pass_env = list(pass_env)
        self.pass_env = list(pass_env)
        self.sandbox = suite_sandbox(
            self.loaded, self._shell, isolation, agent_home, self._sandbox_ro, sandbox_network
        )
        # Set per run by setup() from the RunContext.
        self.condition = ""
        self.repeat = 0
        self.build_root: str | None = None
        self.memory_store: str | None = None
        self.memory_store_options: dict[str, Any] = {}
        self._llm: Any = None
        self._agent: Any = None  # set when the condition is an agent, not a store
        self._agent_lock = threading.Lock()
        self.store_ids = StoreIds({})  # the ids the store sees (drawn in setup)

    def options(self) -> dict[str, Any]:
        """What is measured: the suite's checksums and the answering settings."""
        m = self.loaded.manifest
        return {
            "suite_name": m.name,
            "suite_version": m.suite_version,
            "label_status": m.label_status,
            **({"held_out": True} if m.held_out else {}),  # absent when false: old runs pair
            "suite_checksum": self.loaded.checksum,
            "fixture_checksum": self.loaded.fixture_checksum,
            "memories_checksum": self.loaded.memories_checksum,
            "min_support": self.min_support,
            "answer_hits": self.answer_hits,
            "resume_hits": self.resume_hits,
            "skip_unsupported": self.skip_unsupported,
            "allow_shell": self.allow_shell,
            "dry_run": self.dry_run,
            # Names only (never values); absent when empty so older runs still pair.
            **({"pass_env": self.user_pass_env} if self.user_pass_env else {}),
            # Recorded when commands run: which isolation they had (old runs pair).
            **(
                {
                    "isolation": self.sandbox.isolation,
                    "agent_home": self.sandbox.agent_home,
                    "sandbox_network": self.sandbox.network,
                }
                if self._shell
                else {}
            ),
        }

    def inputs(self) -> dict[str, Any]:
        """Where the suite and its memories live, and the answer profile."""
        ro = [str(p) for p in self._sandbox_ro]
        return {
            "suite_dir": self.suite_dir,
            "memories": self.memories,
            "profile": self.profile,
            **({"sandbox_ro": ro} if ro else {}),
            "origins": self.origins,
        }

    @property
    def needs_llm(self) -> bool:
        """The ``llm`` profile asks a model: the runner checks for one before the run."""
        return self.profile == "llm"

    def dataset(self) -> Dataset:
        """The seed memories plus one query per item (so the dataset hash covers both)."""
        m = self.loaded.manifest
        queries = [
            Query(
                id=it.id,
                text=it.text() or it.id,
                type=it.eval_type,
                relevant_ids=list(getattr(it, "expected_memory_ids", [])),
                difficulty=it.difficulty,
                metadata=it.model_dump(mode="json"),
            )
            for it in self.loaded.items
        ]
        ds = Dataset(
            info=DatasetInfo(
                name=self.loaded.slug,
                version=m.suite_version,
                source=f"suite directory {self.loaded.root.name}",
            ),
            memories=[s.memory for s in self.loaded.memories],
            queries=queries,
        )
        return ds.with_hash()

    def plan(self, dataset: Dataset) -> list[Item]:
        """Every runnable item, in file order."""
        return [Item(it.id, i, it) for i, it in enumerate(self.items)]

    def item_timeout(self, default: float | None) -> float | None:
        """Long enough for every command of a shell item at its own timeout."""
        budgets = [b(it) for it in self.items if (b := item_type(it.eval_type).budget)]
        if default is None or not budgets:
            return default
        return max(default, *budgets)

    def setup(self, system: Any, dataset: Dataset, ctx: RunContext) -> dict[str, float]:
        """Seed the memories (the store sees text, id and timestamp only).

        For an agent condition the system is an agent factory: one agent is created and
        told each memory as a message; every item then asks it in a fresh session.
        """
        spec = ctx.system
        self.condition = spec.condition or spec.name
        self.repeat = ctx.repeat
        # Builds go beside the run directories of an experiment (OUT/build-runs/...).
        self.build_root = str(ctx.run_dir.resolve().parent)
        if spec.kind == "store":
            self.memory_store, self.memory_store_options = spec.name, dict(spec.options)
        if self._shell and self.loaded.manifest.sandbox.database == "pgvector":
            self.sandbox.start_database()  # a fresh one per run
        if spec.kind == "agent":
            return self._seed_agent(system, dataset)
        if self.profile == "llm":
            from mnemometer.llm import LLMClient, require_settings

            self._llm = LLMClient.from_settings(require_settings(ctx.llm))
        self.store_ids = run_ids(dataset, ctx)
        return store_dataset(system, dataset, "first", ctx.report, ids=self.store_ids)

    def teardown(self) -> None:
        """Stop this run's database, if it had one."""
        self.sandbox.stop_database()

    def _seed_agent(self, factory: Any, dataset: Dataset) -> dict[str, float]:
        t0 = time.perf_counter()
        self._agent = factory.create(self.loaded.slug)
        self._agent.start_session(_AGENT_PERSONA)
        for m in dataset.memories:
            self._agent.send(f"Please remember this: {m.text}")
        return {"index": time.perf_counter() - t0}

    def run_item(self, system: Any, item: Item) -> ItemResult | list[ItemResult]:
        """Run and score one item with its type's runner (a sequence: one result a step)."""
        it: BaseItem = item.payload
        t0 = time.perf_counter()
        runner: Callable[..., ItemResult | list[ItemResult]] = item_type(it.eval_type).runner
        out = runner(it, _Ctx(self, system))
        wall = (time.perf_counter() - t0) * 1000.0
        results = out if isinstance(out, list) else [out]
        done = [
            r.model_copy(
                update={
                    "item_id": it.id,
                    "index": item.index,
                    "groups": r.groups or it.groups(),
                    "success": _success(r),
                    "extra": {**r.extra, "duration_ms": wall},
                }
            )
            for r in results
        ]
        return done if isinstance(out, list) else done[0]

    def failed(self, item: Item, error: str, status: str) -> ItemResult:
        """A failed item is a failure: success 0."""
        it: BaseItem = item.payload
        return failure(
            item,
            error,
            status,
            input=it.text(),
            groups=it.groups(),
            metrics=[Metric(name="success", value=0.0)],
        )

    def scoring(self, llm: Any = None) -> ScoringRecord:
        """Scored by each item type in the run; summarised by ``items``; headline success."""
        del llm  # nothing here asks a model
        summary = ItemsSummary(["eval_type", *METADATA_FIELDS], list(self.skipped))
        return ScoringRecord(summary=summary.spec(), headline=HEADLINE)

    # ---- answering --------------------------------------------------------------------

    def answer(self, ctx: _Ctx, question: str, hits: list[Hit]) -> Answer:
        """Answer ``question`` from ``hits`` under the suite's profile (or ask the agent)."""
        t0 = time.perf_counter()
        if self._agent is not None:
            text, tokens = self.ask_agent(question)
            refused = REFUSAL.lower().rstrip(".") in text.lower() or not text.strip()
            return Answer(text, refused, [], tokens, (time.perf_counter() - t0) * 1000.0)
        ans = (
            self._llm_answer(ctx, question, hits)
            if self.profile == "llm"
            else self._offline_answer(ctx, question, hits)
        )
        ans.ms = (time.perf_counter() - t0) * 1000.0
        return ans

    def ask_agent(self, message: str) -> tuple[str, dict[str, int]]:
        """One question to the condition's agent, in a fresh session (memory persists)."""
        with self._agent_lock:  # one agent serves every item: keep sessions apart
            self._agent.start_session(_AGENT_PERSONA)
            reply = self._agent.send(message)
        inp = int(reply.tokens.get("prompt", reply.tokens.get("input", 0)))
        out = int(reply.tokens.get("completion", reply.tokens.get("output", 0)))
        return reply.text.strip(), {"input": inp, "output": out, "total": inp + out}

    def _offline_answer(self, ctx: _Ctx, question: str, hits: list[Hit]) -> Answer:
        """Extractive and deterministic: quote the newest of the best-supported hits.

        A hit supports the question when it holds at least ``min_support`` of the
        question's content words. Among hits within 0.15 of the best support, newer
        memories come first (then store rank); none supporting means a refusal.
        """
        scored = []
        for rank, h in enumerate(hits):
            s = sc.support(question, ctx.memory_text(h))
            if s >= self.min_support:
                seed = self.by_id.get(h.memory_id)
                ts = seed.memory.timestamp.timestamp() if seed and seed.memory.timestamp else None
                scored.append((s, rank, ts, h))
        if not scored:
            return Answer(REFUSAL, True, [], {"input": 0, "output": 0, "total": 0})
        best = max(s for s, *_ in scored)
        near = [x for x in scored if x[0] >= best - 0.15]
        near.sort(key=lambda x: (x[2] is None, -(x[2] or 0.0), x[1]))
        chosen = near[: self.answer_hits]
        text = " ".join(ctx.memory_text(h) for *_, h in chosen)
        return Answer(
            text, False, [h.memory_id for *_, h in chosen], {"input": 0, "output": 0, "total": 0}
        )

    def _llm_answer(self, ctx: _Ctx, question: str, hits: list[Hit]) -> Answer:
        memories = "\n".join(f"[{h.memory_id}] {ctx.memory_text(h)}" for h in hits)
        reply = self._llm.chat(
            [
                {"role": "system", "content": _LLM_SYSTEM},
                {
                    "role": "user",
                    "content": f"Memories:\n{memories or '(none)'}\n\nQuestion: {question}",
                },
            ]
        )
        text = reply.text.strip()
        refused = REFUSAL.lower().rstrip(".") in text.lower() or not text
        cited = [h.memory_id for h in hits if f"[{h.memory_id}]" in text] or (
            [h.memory_id for h in hits[:1]] if not refused else []
        )
        u = reply.usage
        tokens = {"input": u.prompt_tokens, "output": u.completion_tokens, "total": u.total_tokens}
        counted = {"input": u.counted_prompt_tokens, "output": u.counted_completion_tokens}
        return Answer(text, refused, cited, tokens, counted=counted)


def _success(r: ItemResult) -> bool | None:
    """The suite's rule: the type's ``success`` metric; failures fail."""
    if r.status != "ok":
        return False
    v = next((m.value for m in r.metrics if m.name == "success" and m.k is None), None)
    return None if v is None else v >= 1.0


__all__ = ["REFUSAL", "Answer", "ItemsSuite", "shell_gate"]
