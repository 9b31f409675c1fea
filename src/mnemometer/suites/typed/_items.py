"""Typed suite items: one pydantic model per ``eval_type``, in a small registry.

The shapes follow Memory Layer's ``items.jsonl`` so its suites load as they are. Item types
that need a shell or an agent (``command_task``, ``agent_build_*``) load and validate here;
running them is registered separately (see :func:`register_item_type`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from mnemometer.config import StrictModel

METADATA_FIELDS = ("reasoning_mode", "memory_capability", "difficulty")
"""Item metadata that becomes a comparison breakdown (``field:value``)."""


class _Item(StrictModel):
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


class RetrievalQA(_Item):
    """Does the right memory surface? Scored on ids, tags and files of the hits."""

    eval_type: Literal["retrieval_qa"]
    question: str
    """The question."""
    top_k: int = Field(8, ge=1)
    """Hits to ask for."""
    expected_memory_ids: list[str] = Field(default_factory=list)
    """Memory ids that should be retrieved."""
    expected_tags: list[str] = Field(default_factory=list)
    """Tags that should appear on the hits (any hit)."""
    expected_files: list[str] = Field(default_factory=list)
    """Files that should appear on the hits (any hit)."""
    hidden_facts: list[str] = Field(default_factory=list)
    """Facts the seed holds (documentation; never shown to the system)."""

    def text(self) -> str:
        """The question."""
        return self.question


class GroundedAnswer(_Item):
    """Does the answer state the required facts and avoid the forbidden ones?"""

    eval_type: Literal["grounded_answer"]
    question: str
    """The question."""
    top_k: int = Field(8, ge=1)
    """Hits to ask for."""
    expected_memory_ids: list[str] = Field(default_factory=list)
    """Memory ids that should be retrieved (optional retrieval metrics)."""
    required_assertions: list[str] = Field(default_factory=list)
    """Phrases the answer must assert."""
    forbidden_assertions: list[str] = Field(default_factory=list)
    """Phrases the answer must not assert (negated mentions do not count)."""
    hidden_facts: list[str] = Field(default_factory=list)
    """Facts the seed holds (documentation)."""

    def text(self) -> str:
        """The question."""
        return self.question


class AdversarialStale(_Item):
    """A stale memory competes with a fresh one (``prefer_fresh``) or nothing answers (``refuse``)."""

    eval_type: Literal["adversarial_stale"]
    question: str
    """The question."""
    top_k: int = Field(8, ge=1)
    """Hits to ask for."""
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

    def text(self) -> str:
        """The question."""
        return self.question


class ResumeQuality(_Item):
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


class CommandTask(_Item):
    """Run a shell command; success is its exit code (runs need the shell executor)."""

    eval_type: Literal["command_task"]
    prompt: str = ""
    """Documentation."""
    command: str
    """Shell command."""
    expected_exit_code: int = 0
    """Exit code that counts as success."""
    timeout_seconds: float = 900
    """Time allowed."""

    def text(self) -> str:
        """The command."""
        return self.command


class RequiredContent(StrictModel):
    """A file must contain a literal string."""

    file: str
    """Workspace-relative path."""
    contains: str
    """Literal text."""


class BuildStep(StrictModel):
    """One step of an ``agent_build_sequence``."""

    id: str = Field(min_length=1)
    """Step id, unique in the item."""
    prompt: str = ""
    """What the agent is asked."""
    reasoning_mode: str | None = None
    """Breakdown."""
    memory_capability: str | None = None
    """Breakdown."""
    difficulty: str | None = None
    """Breakdown."""
    claim: str | None = None
    """Documentation."""
    memory_questions: list[str] = Field(default_factory=list)
    """Questions the agent must ask memory."""
    score_commands: list[str] = Field(default_factory=list)
    """Commands that must exit 0 afterwards."""
    required_files: list[str] = Field(default_factory=list)
    """Files that must exist."""
    forbidden_files: list[str] = Field(default_factory=list)
    """Files that must not exist."""
    required_content: list[RequiredContent] = Field(default_factory=list)
    """File contents that must appear."""
    timeout_seconds: float | None = None
    """Overrides the item's timeout."""


class AgentBuildTask(_Item):
    """An agent builds something in a copy of a fixture; checks score the workspace."""

    eval_type: Literal["agent_build_task"]
    prompt: str = ""
    """What the agent is asked."""
    fixture: str
    """Fixture directory, relative to the suite."""
    agent_command: str
    """Agent command template."""
    memory_questions: list[str] = Field(default_factory=list)
    """Questions the agent must ask memory."""
    setup_commands: list[str] = Field(default_factory=list)
    """Commands run before the agent."""
    score_commands: list[str] = Field(default_factory=list)
    """Commands that must exit 0 afterwards."""
    timeout_seconds: float = 900
    """Time allowed."""
    required_files: list[str] = Field(default_factory=list)
    """Files that must exist."""
    forbidden_files: list[str] = Field(default_factory=list)
    """Files that must not exist."""
    required_content: list[RequiredContent] = Field(default_factory=list)
    """File contents that must appear."""
    require_token_usage: bool = False
    """Fail when the agent reports no token usage (always on for Codex-backed commands)."""

    def text(self) -> str:
        """The prompt."""
        return self.prompt


class AgentBuildSequence(_Item):
    """Several agent build steps over one workspace."""

    eval_type: Literal["agent_build_sequence"]
    fixture: str
    """Fixture directory, relative to the suite."""
    agent_command: str
    """Agent command template."""
    setup_commands: list[str] = Field(default_factory=list)
    """Commands run before the first step."""
    timeout_seconds: float = 900
    """Time allowed per step."""
    steps: list[BuildStep] = Field(min_length=1)
    """The steps, in order."""
    require_token_usage: bool = False
    """Fail a step when the agent reports no token usage (always on for Codex commands)."""


@dataclass(frozen=True)
class ItemType:
    """An item type: its model, and how to run it (``None``: loads but cannot run yet)."""

    name: str
    model: type[_Item]
    runner: Callable[..., Any] | None = None
    needs: str = ""
    """Why it cannot run here, when ``runner`` is ``None``."""


ITEM_TYPES: dict[str, ItemType] = {}
"""eval_type → item type. Add types with :func:`register_item_type`."""


def register_item_type(item_type: ItemType, *, replace: bool = False) -> None:
    """Register an item type (e.g. a shell task executor registers a runner)."""
    if item_type.name in ITEM_TYPES and not replace:
        raise ValueError(f"item type {item_type.name!r} is already registered")
    ITEM_TYPES[item_type.name] = item_type


_SHELL = "a shell/agent executor (not built yet: see the shell and agent build tasks issue)"
for _model in (RetrievalQA, GroundedAnswer, AdversarialStale, ResumeQuality):
    register_item_type(ItemType(_model.model_fields["eval_type"].annotation.__args__[0], _model))
for _model in (CommandTask, AgentBuildTask, AgentBuildSequence):
    register_item_type(
        ItemType(_model.model_fields["eval_type"].annotation.__args__[0], _model, needs=_SHELL)
    )
