"""Tools for people who write adapters: the conformance kit and a test LLM server.

``FakeLLMServer`` is a real OpenAI-compatible HTTP server on 127.0.0.1 that answers from
rules (text, structured output, tool calls, SSE streaming, embeddings), and
``AnthropicServer`` answers the same rules in Anthropic's Messages protocol; ``ToolRule`` and
``ToolCall`` script tool calls; ``remember`` and ``recall`` make it keep and read a memory
block the way a Letta/MemGPT model does; ``extraction_llm`` extracts like a literal model
for Graphiti, cognee and LangMem; ``FakeMem0Server`` speaks Mem0's hosted-platform and
self-hosted REST shapes. See docs/testing.md.
"""

from mnemometer.testing._anthropic import AnthropicServer
from mnemometer.testing._conformance import Check, ConformanceReport, check_store
from mnemometer.testing._extraction import extraction_llm
from mnemometer.testing._letta import memory_llm
from mnemometer.testing._mem0_server import FakeMem0Server
from mnemometer.testing._memory import is_question, memory_block, recall, remember
from mnemometer.testing._schema import instance
from mnemometer.testing._tools import ToolCall, ToolRule
from mnemometer.testing.llm_server import FakeLLMServer

__all__ = [
    "AnthropicServer",
    "Check",
    "ConformanceReport",
    "FakeLLMServer",
    "FakeMem0Server",
    "ToolCall",
    "ToolRule",
    "check_store",
    "extraction_llm",
    "instance",
    "is_question",
    "memory_block",
    "memory_llm",
    "recall",
    "remember",
]
