"""Agents: memory-backed conversational systems under test, and how to create them by name."""

from mnemometer.agents._factory import agent_names, create_agent_factory
from mnemometer.agents._prompt import SYSTEM_PROMPT, answer_messages
from mnemometer.agents._protocol import Agent, AgentFactory, Reply

__all__ = [
    "SYSTEM_PROMPT",
    "Agent",
    "AgentFactory",
    "Reply",
    "agent_names",
    "answer_messages",
    "create_agent_factory",
]
