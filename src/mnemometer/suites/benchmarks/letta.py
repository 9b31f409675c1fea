"""``letta-core-memory``: Letta's core-memory read and update sets."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from mnemometer.datasets._models import Dataset
from mnemometer.scoring.judges import LETTA_RUBRIC_FILE
from mnemometer.suites.benchmarks._suite import BenchmarkSuite


class LettaCoreMemorySuite(BenchmarkSuite):
    """Letta's core-memory sets: seed the facts, then ask.

    The update set's contradicting fact comes after the facts. Letta grades the read set with a ``contains`` check and the
    update set with a model judge and its rubric (``--judge letta-rubric``, read from
    ``core_memory_update_rubric.txt`` beside the file); F1 and BLEU-1 are reported too.
    """

    name: ClassVar[str] = "letta-core-memory"
    version: ClassVar[str] = "1"
    reader_format: ClassVar[str] = "letta-core-memory"
    group_key: ClassVar[str] = "type"
    turn_ks: ClassVar[tuple[int, ...]] = (1, 5, 10)
    session_ks: ClassVar[tuple[int, ...]] = (1,)
    answer_rule: ClassVar[str] = "letta-core-memory"
    cluster_key: ClassVar[str] = "conversation"

    def load(self) -> Dataset:
        """The JSONL set through the ``letta-core-memory`` reader."""
        from mnemometer.datasets._io import load_dataset

        return load_dataset(self.path, format="letta-core-memory")

    def _default_rubric(self) -> Path | None:
        found = self.path.parent / LETTA_RUBRIC_FILE
        return found if found.is_file() else None
