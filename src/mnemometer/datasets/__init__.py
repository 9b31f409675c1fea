"""Datasets: memories and queries with complete ground truth, and their readers."""

from mnemometer.datasets._io import (
    builtin_datasets,
    dataset_json_schema,
    load_dataset,
    save_dataset,
)
from mnemometer.datasets._models import Dataset, DatasetInfo, Memory, MemoryVersion, Query

__all__ = [
    "Dataset",
    "DatasetInfo",
    "Memory",
    "MemoryVersion",
    "Query",
    "builtin_datasets",
    "dataset_json_schema",
    "load_dataset",
    "save_dataset",
]
