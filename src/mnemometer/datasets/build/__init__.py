"""Building a dataset from a corpus with an LLM (``mnemometer build``).

Pipeline: read Markdown/text files (:mod:`._corpus`), ask the model for the facts of each
chunk against a JSON Schema (:mod:`._ask`, :mod:`._prompts`, :mod:`._schema`), classify
ambiguous locations, turn facts into memories with three versions and chains
(:mod:`._assemble`), and compute queries with complete ground truth (:mod:`._queries`).
"""

from mnemometer.datasets.build._build import (
    BuildConfig,
    BuildReport,
    build_dataset,
    checkpoint_path,
)
from mnemometer.datasets.build._corpus import read_corpus, split_paragraphs, strip_front_matter
from mnemometer.datasets.build._queries import QUERY_TYPES
from mnemometer.datasets.build._schema import Extraction, Fact

__all__ = [
    "QUERY_TYPES",
    "BuildConfig",
    "BuildReport",
    "Extraction",
    "Fact",
    "build_dataset",
    "checkpoint_path",
    "read_corpus",
    "split_paragraphs",
    "strip_front_matter",
]
