"""Models of the shell and agent build item types (``command_task``, ``agent_build_*``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from mnemometer.config import StrictModel
from mnemometer.suites.items._types import BaseItem


class CommandTask(BaseItem):
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


class AgentBuildTask(BaseItem):
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


class AgentBuildSequence(BaseItem):
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
