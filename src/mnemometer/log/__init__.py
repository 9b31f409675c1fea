"""Run logs: versioned headers plus every item result, with a typed reader."""

from mnemometer.log._reader import RunLog, read_header, read_items, read_log
from mnemometer.log._schema import (
    LOG_SCHEMA_VERSION,
    DatasetRef,
    ItemResult,
    Metric,
    RetrievedHit,
    RunHeader,
    Summary,
    SystemRef,
)

__all__ = [
    "LOG_SCHEMA_VERSION",
    "DatasetRef",
    "ItemResult",
    "Metric",
    "RetrievedHit",
    "RunHeader",
    "RunLog",
    "Summary",
    "SystemRef",
    "read_header",
    "read_items",
    "read_log",
    "log_json_schema",
]


def log_json_schema() -> dict:
    """JSON Schema of the header and of one item line."""
    return {
        "header": RunHeader.model_json_schema(),
        "item": ItemResult.model_json_schema(),
    }
