"""Create agent factories by registered name, with options and run context."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mnemometer._registry import AGENTS
from mnemometer.agents._protocol import AgentFactory
from mnemometer.llm import LLMClient, LLMSettings


def agent_names() -> list[str]:
    """Every registered agent name."""
    return AGENTS.names()


def create_agent_factory(
    name: str,
    options: dict[str, Any] | None = None,
    *,
    llm: LLMSettings | None = None,
    workdir: Path | None = None,
) -> AgentFactory:
    """Create the agent factory registered as ``name``.

    Args:
        name: ``rag``, ``mem0``, ``letta``, ``http`` or a plug-in's name.
        options: keyword arguments for the factory.
        llm: LLM endpoint settings, offered to factories that take ``llm``.
        workdir: a directory inside the run directory, offered as ``workdir``.

    Raises:
        MnemometerError: unknown name, bad option, missing extra, or not a factory.
    """
    return AGENTS.make(name, options, ("create",), llm=llm, workdir=workdir)


def llm_client(llm: LLMSettings | LLMClient | None) -> LLMClient:
    """An LLM client from the run's settings, or a clear error naming the flags to pass."""
    if isinstance(llm, LLMClient):
        return llm
    from mnemometer.llm import require_settings

    return LLMClient.from_settings(require_settings(llm))
