"""Run logs: a versioned header, every item result and a summary, with a typed reader."""

from mnemometer.log._reader import RunLog, read_header, read_items, read_log, read_summary
from mnemometer.log._schema import (
    HEADER_FILE,
    ITEMS_FILE,
    LOG_SCHEMA_VERSION,
    SUMMARY_FILE,
    DatasetRef,
    Headline,
    HeadlineSpec,
    Interval,
    ItemResult,
    Metric,
    ParentRun,
    RetrievedHit,
    RunHeader,
    ScorerSpec,
    ScoringRecord,
    Summary,
    SystemRef,
    Table,
)
from mnemometer.log._writer import ItemWriter, write_header, write_summary

__all__ = [
    "HEADER_FILE",
    "ITEMS_FILE",
    "LOG_SCHEMA_VERSION",
    "SUMMARY_FILE",
    "DatasetRef",
    "Headline",
    "HeadlineSpec",
    "Interval",
    "ItemResult",
    "ItemWriter",
    "Metric",
    "ParentRun",
    "RetrievedHit",
    "RunHeader",
    "RunLog",
    "ScorerSpec",
    "ScoringRecord",
    "Summary",
    "SystemRef",
    "Table",
    "log_json_schema",
    "read_header",
    "read_items",
    "read_log",
    "read_summary",
    "write_header",
    "write_summary",
]


def log_json_schema() -> dict:
    """JSON Schema of the header, of one item line and of the summary."""
    return {
        "header": RunHeader.model_json_schema(),
        "item": ItemResult.model_json_schema(),
        "summary": Summary.model_json_schema(),
    }
