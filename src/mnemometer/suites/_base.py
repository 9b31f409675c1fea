"""What a suite is: items, and how to run and score one. The runner does everything else.

A suite declares what it provides: which systems it drives (stores, agents), whether it
brings its own dataset, which of its options are measured (runs compared must agree on them)
and which only say where its inputs live, the rule that decides an item's success, and how its
records are scored (:meth:`Suite.scoring`: registered scorers, the summary scorer and the
headline). The runner owns concurrency, timeouts, durable logging, resume, conditions and
repeats, and the summary engine (:func:`mnemometer.scoring.summarize`) owns summaries, so
every suite gets them for free.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from mnemometer.datasets._models import Dataset
from mnemometer.log._schema import ItemResult, RunHeader, ScoringRecord, Summary

if TYPE_CHECKING:
    from mnemometer.systems import SystemSpec


@dataclass(frozen=True)
class Flag:
    """A command-line flag of ``mnemometer run`` that sets one option of a suite.

    Suites declare their own flags, so the ``run`` command stays generic: a flag given to
    a suite that does not declare it is an error naming the suites that do.

    Attributes:
        flag: the flag, e.g. ``--top-k``.
        option: the suite option it sets, e.g. ``top_k``.
        help: one line for ``--help``.
        type: ``int``, ``float``, ``str``, ``path``, ``bool`` (an on/off flag) or
            ``choice:a,b``.
        multiple: repeatable; the option receives a list.
        user_only: only the person running the command may set it: from the command line
            (or the API), never from ``MNEMOMETER_RUN_*``, a ``.env`` file or a file such
            as a sweep. For consent to run code, the sandbox, and what reaches it (a
            suite directory may hold a ``.env``). A suite with such flags takes an
            ``origins`` option (option → ``command line``/``default``) to record. A
            resume takes them from its own caller again, never from the run header.
        narrows: values of a user-only option that only narrow what a run may do
            (``--sandbox bwrap``): a resume keeps them from the run header unless its
            caller gives another.
    """

    flag: str
    option: str
    help: str
    type: str = "str"
    multiple: bool = False
    user_only: bool = False
    narrows: tuple[Any, ...] = ()


def user_only_options(suite: Any) -> dict[str, str]:
    """Option → flag of ``suite``'s (a suite class or object) :attr:`Flag.user_only` flags."""
    return {f.option: f.flag for f in getattr(suite, "flags", ()) if f.user_only}


def user_given(suite: Any, options: dict[str, Any]) -> dict[str, Any]:
    """The options of ``options`` only the user gives (and their ``origins``), for a resume."""
    keep = {*user_only_options(suite), "origins"}
    return {k: v for k, v in options.items() if k in keep}


def resume_options(
    suite: Any, recorded: dict[str, Any], given: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The options a resumed run's ``suite`` (a class) gets: the recorded ones, consent aside.

    A run header or ``experiment.json`` is a file anyone may have written (a shared
    archive, a downloaded run), so the :attr:`Flag.user_only` options (consent to run
    code, the sandbox, what environment passes in) come from ``given``, the resuming
    caller's, as :func:`mnemometer.run` takes them; a recorded value a flag
    :attr:`~Flag.narrows` with is kept unless given. ``origins`` says where each came
    from: as ``given`` says (the command line), else ``API argument``; ``run header`` for
    a kept one.

    Raises:
        MnemometerError: ``given`` names an option that is not a user-only one.
    """
    from mnemometer.errors import MnemometerError

    flags = {f.option: f for f in getattr(suite, "flags", ()) if f.user_only}
    given = dict(given or {})
    origins = given.pop("origins", None)
    if other := sorted(given.keys() - flags.keys()):
        takes = ", ".join(sorted(flags)) or f"suite {getattr(suite, 'name', '?')!r} has none"
        raise MnemometerError(
            f"suite option {other[0]!r} does not apply to a resume: the run's directory holds "
            f"its configuration (a resume takes again only what the user alone gives: {takes})"
        )
    options = {k: v for k, v in recorded.items() if k not in flags and k != "origins"}
    if not flags:
        return options
    origins = dict(origins) if origins is not None else dict.fromkeys(given, "API argument")
    for key, f in flags.items():
        if key not in given and recorded.get(key) in f.narrows:
            given[key], origins[key] = recorded[key], "run header"
    return {**options, **given, "origins": origins}


def consent_note(resume: int, suite: Any) -> str | None:
    """The run header's note of where resume number ``resume`` took each user-only option."""
    options = {**suite.options(), **suite.inputs()}
    origins = options.get("origins")
    if not user_only_options(suite) or not isinstance(origins, dict):
        return None
    if all(origin == "default" for origin in origins.values()):
        return None  # nothing given, nothing kept: a suite that runs no commands
    shown = [
        f"{k}={_value(options[k])} ({origin})" if k in options else f"{k} ({origin})"
        for k, origin in origins.items()
    ]
    return f"resume {resume} took consent and the sandbox from its caller: {', '.join(shown)}"


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    return ",".join(map(str, v)) if isinstance(v, list | tuple) else str(v)


TOP_K = Flag("--top-k", "top_k", "Hits to ask for per query (default 20).", "int")
"""``--top-k``, shared by the suites that search (``run`` shows one flag for all of them)."""


@dataclass(frozen=True, slots=True)
class Item:
    """One scored unit of a suite, with a stable id and its position in the plan."""

    id: str
    index: int
    payload: Any


def failure(
    item: Item, error: str, status: str, *, success: bool | None = False, **fields: Any
) -> ItemResult:
    """The result of ``item`` whose call failed (what a suite's ``failed`` returns).

    ``fields`` are the suite's own: the input, groups, expected ids and the metrics the
    failure scores; ``success`` is ``None`` for items the success rule does not score.
    """
    return ItemResult(
        item_id=item.id, index=item.index, status=status, error=error, success=success, **fields
    )


@dataclass(frozen=True)
class RunContext:
    """What the runner tells a suite about the run it is part of (given to ``setup``).

    Attributes:
        run_dir: the run directory; a suite keeps its own files under it.
        system: the spec of the system under test (its name, options and condition).
        repeat: the run's index within its group.
        seed: the run's seed.
        llm: the run's LLM endpoint (:class:`~mnemometer.llm.LLMSettings`, resolved where
            the run started), for suites that ask a model; ``None`` when none is configured.
            Take it with :func:`mnemometer.llm.require_settings` (never the environment).
        progress: the run's progress callback, ``(phase, done, total)``; use
            :meth:`report` from setup so long phases (index, ingest) show their counts.
        pending: ids of the items this session will run; ``None`` when all of them (a
            fresh run). A resumed run lists only what is left, so setup can skip phases
            only finished items needed.
        planned: ids of every item of the run (its plan after ``--limit``/``--sample``);
            ``None`` when not known (a remote worker).
        concurrency: the run's ``--concurrency``: items in flight at once, and how many
            isolated systems a suite may fill at once in setup (one per conversation).
    """

    run_dir: Path
    system: SystemSpec
    repeat: int = 0
    seed: int = 0
    llm: Any = None
    progress: Any = None
    pending: frozenset[str] | None = None
    planned: frozenset[str] | None = None
    concurrency: int = 1

    def report(self, phase: str, done: int, total: int | None = None) -> None:
        """Tell the user how far a phase of setup has come (a no-op without a listener)."""
        if self.progress is not None:
            self.progress(phase, done, total)

    def isolated(self, namespace: str, *, lang: str | None = None) -> Any:
        """A fresh system of the same spec whose memory is private to ``namespace``.

        Suites whose items must not share memory (one conversation each) build one per
        item; its files live under ``run_dir/isolated/<namespace>``.
        """
        return self.system.create(self.run_dir / "isolated" / namespace, lang=lang, llm=self.llm)


ItemOutput = ItemResult | dict[str, Any] | Sequence[ItemResult | dict[str, Any]]
"""What ``run_item`` returns: a result, plain data shaped like one (the log writer
serialises it directly, the reader validates it), or a multi-step item's results, one per
step (each with ``step`` set; models or plain data)."""


@runtime_checkable
class Suite(Protocol):
    """A named procedure plus its items.

    The runner asks ``cannot_score`` (optional; see :class:`BaseSuite`) before anything is
    written, then calls ``scoring`` once (recorded in the header), ``plan`` once, ``setup``
    once per (re)start, ``run_item`` per item (concurrently, each under a timeout),
    ``failed`` for items whose call raised or timed out, the summary engine when the run
    finishes, and ``write_outputs`` after it. Every result carries ``success`` under the
    suite's rule (``success_definition``); failed items fail. What reports and decisions
    read is the headline ``scoring`` declares. Subclass :class:`BaseSuite` for the defaults.
    """

    name: ClassVar[str]
    """Registered name."""
    version: ClassVar[str]
    """Bumped when the procedure or scoring changes (compared runs must agree)."""
    systems: ClassVar[frozenset[str]]
    """What it drives: ``store``, ``agent`` or both."""
    flags: ClassVar[tuple[Flag, ...]]
    """Its ``mnemometer run`` flags."""
    success_definition: ClassVar[str]
    """The rule behind each item's ``success``, in words (recorded in the header)."""

    def options(self) -> dict[str, Any]:
        """Resolved options that determine what is measured."""
        ...

    def inputs(self) -> dict[str, Any]:
        """Options that do not change what is measured.

        Where inputs live, answer-side settings; with :meth:`options` they rebuild the suite
        on resume.
        """
        ...

    def dataset(self) -> Dataset | None:
        """The suite's own dataset, or ``None`` when it runs on the caller's.

        Scenarios and suite directories bring their own items.
        """
        ...

    def plan(self, dataset: Dataset) -> list[Item]:
        """The items to run, in a stable order with stable ids."""
        ...

    def setup(self, system: Any, dataset: Dataset, ctx: RunContext) -> dict[str, float]:
        """Prepare the system (e.g. store every memory); return phase timings in seconds."""
        ...

    def item_timeout(self, default: float | None) -> float | None:
        """Seconds allowed per item call (the run's default, or more for long items)."""
        ...

    def run_item(self, system: Any, item: Item) -> ItemOutput:
        """Run one item and score it (see :data:`ItemOutput`)."""
        ...

    def failed(self, item: Item, error: str, status: str) -> ItemResult:
        """The result of an item whose call failed (it scores as a failure)."""
        ...

    def scoring(self, llm: Any = None) -> ScoringRecord:
        """How records become metrics: per-item scorers, the summary scorer, the headline.

        ``llm`` is the run's LLM settings (``None`` when the run has none), for scorers
        that ask a model (their model and endpoint are recorded).
        """
        ...

    def write_outputs(self, run_dir: Path, header: RunHeader, summary: Summary) -> None:
        """Write extra files beside the run log (e.g. a CSV), after the summary."""
        ...

    def teardown(self) -> None:
        """Release what ``setup`` made (isolated systems); called after the items, always."""
        ...


class BaseSuite:
    """Defaults for the optional parts of :class:`Suite`.

    A store suite on the caller's dataset (any it is given), no inputs, the run's timeout, no
    extra outputs.
    """

    systems: ClassVar[frozenset[str]] = frozenset({"store"})
    flags: ClassVar[tuple[Flag, ...]] = ()
    needs_llm: bool = False
    """The suite itself asks the run's LLM endpoint (a reader, a judge, an embedder): the
    runner refuses to start without one, and the run header records the endpoint so a
    comparison knows when two runs asked different ones."""
    success_definition: ClassVar[str] = "an item succeeds when its 'success' metric is 1"
    independent_items: ClassVar[bool] = False
    """Whether items share no state once ``setup`` has run, so several workers that each ran
    ``setup`` measure what one process measures (then a remote executor may spread items)."""

    def inputs(self) -> dict[str, Any]:
        """No inputs beyond the options."""
        return {}

    def dataset(self) -> Dataset | None:
        """Runs on the caller's dataset."""
        return None

    def cannot_score(self, dataset: Dataset) -> str | None:
        """Why this suite cannot score ``dataset``, or ``None`` when it can (the default).

        The runner asks before anything is written and refuses the run with the reason in
        one line naming the file (a suite on the caller's dataset overrides this).
        """
        del dataset
        return None

    def item_timeout(self, default: float | None) -> float | None:
        """The run's timeout."""
        return default

    def write_outputs(self, run_dir: Path, header: RunHeader, summary: Summary) -> None:
        """Nothing beyond the run log."""
        del run_dir, header, summary

    def teardown(self) -> None:
        """Nothing to release."""
