"""Datasets: memories, conversations and queries with complete ground truth, and their readers."""

from mnemometer.datasets._check import check_dataset
from mnemometer.datasets._io import (
    builtin_datasets,
    dataset_json_schema,
    load_dataset,
    save_dataset,
)
from mnemometer.datasets._locomo import LOCOMO_CATEGORIES
from mnemometer.datasets._models import (
    Conversation,
    Dataset,
    DatasetInfo,
    Memory,
    MemoryVersion,
    Query,
    Session,
    Turn,
)
from mnemometer.datasets._readers import READERS, Reader, get_reader, readers, register_reader

__all__ = [
    "LOCOMO_CATEGORIES",
    "READERS",
    "Conversation",
    "Dataset",
    "DatasetInfo",
    "Memory",
    "MemoryVersion",
    "Query",
    "Reader",
    "Session",
    "Turn",
    "builtin_datasets",
    "check_dataset",
    "dataset_json_schema",
    "get_reader",
    "load_dataset",
    "readers",
    "register_reader",
    "save_dataset",
]
