"""Agents: memory-backed conversational systems under test, and how to create them by name."""

from mnemometer.agents._factory import agent_names, create_agent_factory
from mnemometer.agents._prompt import SYSTEM_PROMPT, answer_messages
from mnemometer.agents._protocol import Agent, AgentFactory, Reply

__all__ = [
    "register_agent",
    "unregister_agent",
    "SYSTEM_PROMPT",
    "Agent",
    "AgentFactory",
    "Reply",
    "agent_names",
    "answer_messages",
    "create_agent_factory",
]


def register_agent(name: str, factory: object) -> None:
    """Register a agent factory in-process (notebooks, tests); plug-ins use entry points.

    Raises:
        MnemometerError: ``name`` is already registered.
    """
    from mnemometer._registry import AGENTS

    AGENTS.register(name, factory)  # type: ignore[arg-type]


def unregister_agent(name: str) -> None:
    """Remove an in-process registration (a no-op for names it did not add)."""
    from mnemometer._registry import AGENTS

    AGENTS.unregister(name)
