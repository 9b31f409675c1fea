"""Run log schema v1: a JSON header and a JSONL of item results.

Field order matters: ``schema_version`` stays first. Changing the meaning or removing a field
needs a version bump and a migration in :mod:`mnemometer.log._reader`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from mnemometer.config import StrictModel

LOG_SCHEMA_VERSION = 1
HEADER_FILE = "header.json"
ITEMS_FILE = "items.jsonl"


class Metric(StrictModel):
    """One structured metric value."""

    name: str
    """Metric name, e.g. ``recall``, ``mrr``, ``latency_p95_ms``."""
    k: int | None = None
    """Cut-off, for metrics at k."""
    value: float | None
    """The value; ``None`` means not applicable (never a silent 0)."""
    higher_is_better: bool = True
    """Direction of improvement."""
    n: int | None = None
    """How many items the value aggregates (aggregates only)."""

    @property
    def key(self) -> str:
        """Display key such as ``recall@10``."""
        return f"{self.name}@{self.k}" if self.k is not None else self.name


class RetrievedHit(StrictModel):
    """A hit as recorded in the log."""

    id: str
    """Memory id."""
    score: float
    """Store score."""


class DatasetRef(StrictModel):
    """Which dataset a run used."""

    name: str
    """Dataset name."""
    version: str
    """Dataset version."""
    content_hash: str
    """SHA-256 of the canonical memories and queries."""
    language: str
    """Language code."""
    path: str | None = None
    """Where it was loaded from (a path or a built-in name), for resume."""
    reference_time: datetime | None = None
    """The dataset's "now"."""
    notes: list[str] = Field(default_factory=list)
    """What the reader changed on the way in."""


class SystemRef(StrictModel):
    """The system under test."""

    kind: Literal["store", "agent"] = "store"
    """Store or agent."""
    name: str
    """Registered name."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Resolved options, secrets removed."""
    implementation: str
    """``module:Class`` of the object that ran."""
    version: str | None = None
    """Version of the distribution that provides it."""
    capabilities: list[str] = Field(default_factory=list)
    """Optional capabilities detected at run time."""


class RunHeader(StrictModel):
    """Everything that determines a run's numbers, and its status."""

    schema_version: int = LOG_SCHEMA_VERSION
    """Run-log schema version (always first)."""
    run_id: str
    """Unique run id."""
    run_group: str
    """Runs that are repeats of one configuration share a group id."""
    repeat: int = 0
    """Repeat index within the group."""
    suite: str
    """Suite name."""
    suite_version: str
    """Suite version; bumped when its procedure or scoring changes."""
    suite_options: dict[str, Any] = Field(default_factory=dict)
    """Suite options as resolved (top_k, ks, ...)."""
    dataset: DatasetRef
    """The dataset."""
    system: SystemRef
    """The store or agent."""
    seed: int = 0
    """Seed for anything random in the run."""
    labels_exposed: bool = False
    """True only if the suite showed answer-key labels to the system."""
    config_fingerprint: str
    """SHA-256 of suite, options, system config (secrets removed) and dataset hash."""
    package_version: str
    """mnemometer version."""
    python_version: str
    """Python version."""
    platform: str
    """OS and machine."""
    git_revision: str | None = None
    """Git revision of the working directory, when it is a repository."""
    created_at: datetime
    """When the run started (UTC)."""
    status: Literal["running", "finished"] = "running"
    """``finished`` once every item has a result."""
    item_count: int = 0
    """How many items the suite planned."""
    timings: dict[str, float] = Field(default_factory=dict)
    """Seconds spent per phase (``setup``, ``items``, ``total``), summed over resumes."""
    resumes: int = 0
    """How many times the run was resumed."""


class ItemResult(StrictModel):
    """The outcome of one item."""

    item_id: str
    """Stable item id (query id, scenario id, ...)."""
    index: int
    """Position in the suite's plan (results are reported in this order)."""
    status: Literal["ok", "error", "timeout"] = "ok"
    """``error``/``timeout`` items are kept and counted, and score as failures."""
    error: str | None = None
    """Error type and message."""
    input: str = ""
    """What was asked."""
    groups: dict[str, str] = Field(default_factory=dict)
    """Breakdown keys (``type``, ``difficulty``, ...)."""
    expected: list[str] = Field(default_factory=list)
    """Expected ids, for retrieval items."""
    retrieved: list[RetrievedHit] = Field(default_factory=list)
    """What the system returned, in order."""
    output: str | None = None
    """Text the system answered, for agent items."""
    metrics: list[Metric] = Field(default_factory=list)
    """Per-item metric values."""
    latency_ms: float | None = None
    """Time spent in the system's call(s) for this item."""
    tokens: dict[str, int] = Field(default_factory=dict)
    """Token usage, when known."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Suite-specific detail."""


class Summary(StrictModel):
    """Aggregated results of a run (derived from the items; never stored as the truth)."""

    overall: list[Metric]
    """Aggregates over every scorable item."""
    groups: dict[str, dict[str, list[Metric]]] = Field(default_factory=dict)
    """Breakdown: group key → group value → metrics."""
    counts: dict[str, int] = Field(default_factory=dict)
    """Items, errors, timeouts, skipped, ..."""
    notes: list[str] = Field(default_factory=list)
    """Caveats the reader should see (not-applicable reasons, ...)."""
    sections: dict[str, Any] = Field(default_factory=dict)
    """Suite-specific structured results (e.g. one entry per dimension)."""
