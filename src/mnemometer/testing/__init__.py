"""Tools for people who write adapters: the conformance kit and a fake LLM server."""

from mnemometer.testing._conformance import Check, ConformanceReport, check_store
from mnemometer.testing.llm_server import FakeLLMServer

__all__ = ["Check", "ConformanceReport", "FakeLLMServer", "check_store"]
