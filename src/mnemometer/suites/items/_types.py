"""Typed suite items: one pydantic model per ``eval_type``, in a small registry.

The shapes follow Memory Layer's ``items.jsonl`` so its suites load as they are. The
question-answering types live here; the shell and agent build types live in
:mod:`mnemometer.suites.tasks`. Both register through the ``mnemometer.item_types``
entry-point group, so a plug-in adds a type the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from mnemometer._registry import Registry
from mnemometer.config import StrictModel
from mnemometer.errors import ConsentError, MnemometerError

METADATA_FIELDS = ("reasoning_mode", "memory_capability", "difficulty")
"""Item metadata that becomes a comparison breakdown (``field:value``)."""


class BaseItem(StrictModel):
    """Fields every item type shares; subclass it for a new ``eval_type``."""

    id: str = Field(min_length=1)
    """Stable item id, unique in the suite."""
    eval_type: str
    """Item type tag."""
    project: str | None = None
    """Project slug (Memory Layer); recorded, not used."""
    reasoning_mode: str | None = None
    """Breakdown: deductive, inductive, abductive, ..."""
    memory_capability: str | None = None
    """Breakdown: retrieval, grounding, staleness, ..."""
    difficulty: str | None = None
    """Breakdown: easy, medium, hard."""
    claim: str | None = None
    """What the item is evidence for (documentation)."""

    def groups(self) -> dict[str, str]:
        """Breakdown keys for the run log."""
        g = {"eval_type": self.eval_type}
        for f in METADATA_FIELDS:
            v = getattr(self, f)
            if v:
                g[f] = v
        return g

    def text(self) -> str:
        """What is asked."""
        return ""


class _Question(BaseItem):
    """An item that asks the system a question (over its top hits)."""

    question: str
    """The question."""
    top_k: int = Field(8, ge=1)
    """Hits to ask for."""

    def text(self) -> str:
        """The question."""
        return self.question


class RetrievalQA(_Question):
    """Does the right memory surface? Scored on ids, tags and files of the hits."""

    eval_type: Literal["retrieval_qa"]
    expected_memory_ids: list[str] = Field(default_factory=list)
    """Memory ids that should be retrieved."""
    expected_tags: list[str] = Field(default_factory=list)
    """Tags that should appear on the hits (any hit)."""
    expected_files: list[str] = Field(default_factory=list)
    """Files that should appear on the hits (any hit)."""
    hidden_facts: list[str] = Field(default_factory=list)
    """Facts the seed holds (documentation; never shown to the system)."""


class GroundedAnswer(_Question):
    """Does the answer state the required facts and avoid the forbidden ones?"""

    eval_type: Literal["grounded_answer"]
    expected_memory_ids: list[str] = Field(default_factory=list)
    """Memory ids that should be retrieved (optional retrieval metrics)."""
    required_assertions: list[str] = Field(default_factory=list)
    """Phrases the answer must assert."""
    forbidden_assertions: list[str] = Field(default_factory=list)
    """Phrases the answer must not assert (negated mentions do not count)."""
    hidden_facts: list[str] = Field(default_factory=list)
    """Facts the seed holds (documentation)."""


class AdversarialStale(_Question):
    """A stale memory competes with a fresh one (``prefer_fresh``) or nothing answers (``refuse``)."""

    eval_type: Literal["adversarial_stale"]
    expect: Literal["refuse", "prefer_fresh"]
    """What a good system does."""
    stale_tags: list[str] = Field(default_factory=list)
    """Tags of stale memories: citing one fails."""
    fresh_tags: list[str] = Field(default_factory=list)
    """Tags of fresh memories: ``prefer_fresh`` must cite one when given."""
    stale_assertions: list[str] = Field(default_factory=list)
    """Stale facts the answer must not assert."""
    fresh_assertions: list[str] = Field(default_factory=list)
    """Fresh facts the answer must assert (``prefer_fresh``)."""


class ResumeQuality(BaseItem):
    """Does a "get me up to speed" briefing cover the right topics?"""

    eval_type: Literal["resume_quality"]
    prompt: str = ""
    """The request for a briefing."""
    required_topics: list[str] = Field(default_factory=list)
    """Topics the briefing must cover."""
    forbidden_topics: list[str] = Field(default_factory=list)
    """Topics it must not assert."""

    def text(self) -> str:
        """The prompt."""
        return self.prompt


@dataclass(frozen=True)
class ItemType:
    """An item type: the model its lines validate as, and the function that runs one.

    ``runner(item, ctx)`` returns the item's :class:`~mnemometer.log.ItemResult` (or a list:
    the item's result, then one result per step).
    """

    name: str
    """The ``eval_type`` tag."""
    model: type[BaseItem]
    """The pydantic model of one line of ``items.jsonl``."""
    runner: Callable[..., Any]
    """Runs and scores one item."""
    shell: Callable[[Any], bool] | None = None
    """Whether an item runs suite-provided commands (then ``--allow-shell`` gates it)."""
    budget: Callable[[Any], float] | None = None
    """Seconds an item may take at most, when that is more than a run's default timeout."""


ITEM_TYPES = Registry("mnemometer.item_types", "eval_type")
"""``eval_type`` → :class:`ItemType`. Built-ins register through the
``mnemometer.item_types`` entry-point group, as plug-ins do; :func:`register_item_type`
adds one in-process."""


def register_item_type(item_type: ItemType) -> None:
    """Register an item type in-process (tests, notebooks)."""
    ITEM_TYPES.register(item_type.name, item_type)  # type: ignore[arg-type]


def item_type(name: str) -> ItemType:
    """The registered item type ``name``.

    Raises:
        UnknownNameError: with "did you mean" and the known types.
        MnemometerError: a plug-in item type failed to load.
    """
    found = ITEM_TYPES.load(name)
    if not isinstance(found, ItemType):
        raise MnemometerError(f"item type {name!r} is not an ItemType: {found!r}")
    return found


def runs_shell(it: BaseItem) -> bool:
    """Whether ``it`` runs suite-provided commands (its type says so)."""
    pred = item_type(it.eval_type).shell
    return bool(pred and pred(it))


def shell_gate(
    items: list[BaseItem], allow_shell: bool, dry_run: bool, skip: bool, where: str
) -> tuple[list[BaseItem], list[str]]:
    """Refuse items that run suite-provided commands without ``--allow-shell``.

    A dry run needs neither flag; with ``skip`` (``--skip-unsupported``) they are skipped
    instead and their ids returned.

    Returns:
        ``(items that may run, ids skipped)``.

    Raises:
        ConsentError: naming the items, their types and the flags.
    """
    shell = [it for it in items if runs_shell(it)]
    if not shell or allow_shell or dry_run:
        return items, []
    if skip:
        return [it for it in items if not runs_shell(it)], [it.id for it in shell]
    kinds = ", ".join(sorted({it.eval_type for it in shell}))
    shown = ", ".join(it.id for it in shell[:3]) + (" ..." if len(shell) > 3 else "")
    raise ConsentError(
        f"{where}: {len(shell)} item(s) of type {kinds} run suite-provided commands "
        f"({shown}); suites are code: read them, then pass --allow-shell to run them, "
        "--dry-run to validate without executing anything, or --skip-unsupported to run "
        "the rest (skips are recorded)"
    )
