"""Agents: memory-backed conversational systems under test, and how to create them by name."""

from mnemometer._registry import AGENTS
from mnemometer.agents._factory import agent_names, create_agent_factory
from mnemometer.agents._prompt import SYSTEM_PROMPT, answer_messages
from mnemometer.agents._protocol import Agent, AgentFactory, Reply

# In-process registration (notebooks, tests); plug-ins use entry points.
register_agent = AGENTS.register
unregister_agent = AGENTS.unregister

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
