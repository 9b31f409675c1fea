"""Long-conversation benchmarks: LoCoMo, LongMemEval, Letta core memory.

Each is a suite whose item is a conversation (a haystack, a fact set): ingest it into a
fresh system, ask its questions, answer them with one pinned reader prompt, and score them
with the benchmark's official metric and pinned LLM judges. See docs/benchmarks.md.
"""

from mnemometer.suites.benchmarks._pipeline import BASELINES, READER_PROMPT, READER_SHA256
from mnemometer.suites.benchmarks._suite import BenchmarkSuite
from mnemometer.suites.benchmarks.letta import LettaCoreMemorySuite
from mnemometer.suites.benchmarks.locomo import LocomoSuite
from mnemometer.suites.benchmarks.longmemeval import LongMemEvalSuite

__all__ = [
    "BASELINES",
    "READER_PROMPT",
    "READER_SHA256",
    "BenchmarkSuite",
    "LettaCoreMemorySuite",
    "LocomoSuite",
    "LongMemEvalSuite",
]
