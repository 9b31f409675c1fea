"""Run log schema v3: a JSON header, a JSONL of item results and a JSON summary.

A run directory holds ``header.json`` (what determines the numbers), ``items.jsonl`` (one
line per finished item, appended as it finishes) and ``summary.json`` (the suite's own
aggregation, written when the run finishes or resumes). Reports, comparisons and gates read
these files only: a finished run reports without its suite, its suite directory or any
optional extra.

Field order matters: ``schema_version`` stays first. Changing the meaning or removing a field
needs a version bump and a migration in :mod:`mnemometer.log._migrate`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from mnemometer.config import StrictModel

LOG_SCHEMA_VERSION = 3
HEADER_FILE = "header.json"
ITEMS_FILE = "items.jsonl"
SUMMARY_FILE = "summary.json"


class Interval(StrictModel):
    """A confidence interval of an aggregate."""

    low: float | None
    """Lower bound (``None`` when undefined, e.g. one observation)."""
    high: float | None
    """Upper bound."""
    method: str
    """How it was computed: ``wilson``, ``t``, ``bootstrap``, ``newcombe``, ..."""
    confidence: float = 0.95
    """Nominal coverage."""


class Metric(StrictModel):
    """One metric value; its parameters are fields, never parts of the name."""

    name: str
    """Metric name: ``recall``, ``mrr``, ``accuracy``, ``latency``, ``success``, ..."""
    k: int | None = None
    """Cut-off, for metrics at k."""
    percentile: float | None = None
    """For distributions: which percentile (50, 95); ``None`` is the mean or the value."""
    unit: str | None = None
    """``ms``, ``tokens``, ...; ``None`` for rates and scores."""
    value: float | None
    """The value; ``None`` means not applicable (never a silent 0)."""
    higher_is_better: bool = True
    """Direction of improvement."""
    n: int | None = None
    """How many items the value aggregates (aggregates only)."""
    interval: Interval | None = None
    """Confidence interval of an aggregate, when the suite computed one."""

    @property
    def key(self) -> str:
        """Display key: ``recall@10``, ``latency.p95``, ``accuracy``."""
        key = self.name if self.k is None else f"{self.name}@{self.k}"
        return key if self.percentile is None else f"{key}.p{self.percentile:g}"


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


class HeadlineSpec(StrictModel):
    """The number a run is judged by, declared once by its suite (recorded in the header).

    Every report and every decision (``compare``, ``gate``, ``leaderboard``, ``sweep``)
    reads it from here: which per-item metric, over which items, and how its items cluster.
    A failed item counts as 0 wherever it is in scope.
    """

    metric: str
    """The per-item metric whose mean is the headline (``hit``, ``judge:lenient``, ``f1``,
    ``accuracy``, ``success``); for a composite headline, the summary metric's name."""
    k: int | None = None
    """Its cut-off, for metrics at k."""
    label: str
    """How people read it: ``hit@10``, ``accuracy (lenient judge)``."""
    scope: str = "every item"
    """Which items count, in words."""
    exclude: dict[str, list[str]] = Field(default_factory=dict)
    """Group key -> values whose items do not count (LoCoMo: ``category: [adversarial]``)."""
    needs_expected: bool = False
    """Only items with ground truth count (retrieval: negative queries are scored apart)."""
    binary: bool = False
    """Every item's value is 0 or 1 (a proportion)."""
    cluster: str | None = None
    """Group key whose items are not independent (``conversation``, ``scenario``); items
    without it, or every step of one multi-step item, cluster by item id."""
    composite: bool = False
    """Not a mean over items (MemTest's weighted overall): read from the summary."""
    higher_is_better: bool = True
    """Direction of improvement."""

    @property
    def key(self) -> str:
        """``metric@k`` or ``metric``: the per-item metric's key."""
        return self.metric if self.k is None else f"{self.metric}@{self.k}"


class Headline(HeadlineSpec):
    """The declared headline with its value (``summary.json``)."""

    value: float | None = None
    """The mean over the items in scope (failures as 0), or the composite's value."""
    interval: Interval | None = None
    """Its interval, by the one interval policy (:mod:`mnemometer.scoring.intervals`)."""
    n: int = 0
    """Items counted."""
    clusters: int | None = None
    """Clusters among them, when items cluster."""


class ScorerSpec(StrictModel):
    """A scorer as a run used it: enough to build it again (recorded in the header)."""

    name: str
    """Registered name (``mnemometer list scorers``)."""
    version: str = "1"
    """Bumped when the scorer's rule changes."""
    args: dict[str, Any] = Field(default_factory=dict)
    """Its arguments, resolved (a judge's model and endpoint, a cut-off list)."""
    sha256: str = ""
    """Hash of name, version, arguments and any prompt or rule text behind them."""


class ScoringRecord(StrictModel):
    """How a run's records became metrics: per-item scorers, the summary, the headline."""

    scorers: list[ScorerSpec] = Field(default_factory=list)
    """Per-item scorers, in the order they ran."""
    summary: ScorerSpec
    """The scorer that builds the summary from the items."""
    headline: HeadlineSpec
    """The suite's headline."""


class ParentRun(StrictModel):
    """The run a re-scored run was made from (``mnemometer score``)."""

    run_id: str
    """The parent's run id."""
    path: str
    """Where the parent was when it was scored."""
    scoring: ScoringRecord | None = None
    """How the parent was scored."""


class SystemRef(StrictModel):
    """The system under test."""

    kind: Literal["store", "agent"] = "store"
    """Store or agent."""
    name: str
    """Registered name."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Resolved options, secrets removed."""
    condition: str | None = None
    """The condition this system ran as (``no-memory``, ``lexical``, ...), if any."""
    implementation: str
    """``module:Class`` of the object that ran."""
    version: str | None = None
    """Version of the distribution that provides it."""
    capabilities: list[str] = Field(default_factory=list)
    """Optional capabilities detected at run time."""


class ModelPrice(StrictModel):
    """One model a run asks: its price (USD per token) as found when the run started."""

    tokenizer: str
    """How its tokens are counted: ``tiktoken:o200k_base (...)``, ``estimate:4-chars (...)``."""
    key: str | None = None
    """The price map entry (or override) that priced it; ``None``: no price found."""
    source: str | None = None
    """``litellm`` (the bundled map) or ``override`` (``--prices``); ``None``: no price."""
    input_per_token: float | None = None
    """USD per prompt token."""
    output_per_token: float | None = None
    """USD per completion token."""


class CostRecord(StrictModel):
    """How a run prices its LLM calls, pinned when it starts (``header.json``)."""

    price_map: str
    """The price map: ``litellm 1.110.2 model_prices_and_context_window_backup.json``, or
    ``none`` when LiteLLM is not installed."""
    price_map_sha256: str | None = None
    """SHA-256 of the price map file."""
    overrides: str | None = None
    """The ``--prices`` file, if any."""
    overrides_sha256: str | None = None
    """Its SHA-256."""
    roles: dict[str, str] = Field(default_factory=dict)
    """Who asks which model: ``reader``, ``judge:<name>``, ``ingest`` -> model."""
    models: dict[str, ModelPrice] = Field(default_factory=dict)
    """Model -> its tokenizer and price."""


class RunHeader(StrictModel):
    """Everything that determines a run's numbers, and its status."""

    schema_version: int = LOG_SCHEMA_VERSION
    """Run-log schema version (always first)."""
    run_id: str
    """Unique run id."""
    run_group: str
    """Runs that are repeats of one configuration share a group id."""
    repeat: int = 0
    """This run's index within its group (0, 1, ...)."""
    suite: str
    """Suite name."""
    suite_version: str
    """Suite version; bumped when its procedure or scoring changes."""
    suite_options: dict[str, Any] = Field(default_factory=dict)
    """Suite options that determine what is measured (runs compared must agree on them)."""
    suite_inputs: dict[str, Any] = Field(default_factory=dict)
    """Suite options that do not change what is measured: where its files live, settings of
    the answering side. Needed to rebuild the suite on resume; compared runs may differ."""
    success_definition: str = ""
    """The suite's rule for item success, as recorded in each item's ``success``."""
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
    status: Literal["running", "interrupted", "finished"] = "running"
    """``finished`` once every item has a result; ``interrupted`` when Ctrl-C stopped it
    (``running`` when it was killed); both resume."""
    item_count: int = 0
    """How many items the run has (the suite's plan, cut to ``limit``)."""
    limit: int | None = None
    """Only the first ``limit`` items of the suite's plan ran (a quick run); compared runs
    must agree on it."""
    sample: int | None = None
    """Only a random sample of ``sample`` items ran, drawn with ``seed``; compared runs must
    agree on both."""
    timings: dict[str, float] = Field(default_factory=dict)
    """Seconds spent per phase (``setup``, ``items``, ``total``), summed over resumes."""
    resumes: int = 0
    """How many times the run was resumed."""
    executor: str = "local"
    """Where items ran (``local`` threads, ``ray``), for the last (re)start."""
    notes: list[str] = Field(default_factory=list)
    """Caveats of the run itself (a condition whose store fell back, ...)."""
    scoring: ScoringRecord | None = None
    """How records became metrics (``None``: a run from before scoring was a stage; its
    headline is its items' ``success``)."""
    parent: ParentRun | None = None
    """For a re-scored run: the run whose records it scored."""
    llm: dict[str, Any] | None = None
    """The LLM endpoint the suite asks (base URL, model, timeout, retries; never the key),
    when it asks one: the reader of a benchmark, the model of an LLM-answered suite."""
    cost: CostRecord | None = None
    """The prices and tokenizers of the models the run asks (``None``: a run from before
    cost was recorded)."""


class ItemResult(StrictModel):
    """The outcome of one item (or of one step of a multi-step item)."""

    item_id: str
    """Stable item id (query id, scenario id, ...)."""
    index: int
    """Position in the suite's plan (results are reported in this order)."""
    step: str | None = None
    """For a multi-step item (a build sequence), the step this result is for."""
    steps: int | None = None
    """For a multi-step item, how many step results its run logged (on every step line).
    The runner writes an item's lines together; an item with fewer lines than ``steps`` was
    cut short by a crash: the reader ignores it and a resume runs it again."""
    status: Literal["ok", "error", "timeout"] = "ok"
    """``error``/``timeout`` items are kept and counted, and score as failures."""
    error: str | None = None
    """Error type and message."""
    success: bool | None = None
    """The item's success under the suite's rule (the header's ``success_definition``);
    ``None`` when the item cannot be scored that way. Comparisons pair on it."""
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
    unscored: list[str] = Field(default_factory=list)
    """Metrics a scorer could not give this record (a judge whose call failed or whose
    reply could not be read): left out of every mean, counted, and asked again on resume."""


class Table(StrictModel):
    """A titled table a suite adds to its summary; every report format renders it."""

    name: str
    """Machine key (``scenarios``, ``dimensions``, ...)."""
    title: str
    """Heading."""
    columns: list[str]
    """Column names."""
    rows: list[list[str]]
    """Cells as display strings."""
    data: list[dict[str, Any]] = Field(default_factory=list)
    """The same rows as raw values, for machines."""


class RoleCost(StrictModel):
    """What one role's model (``reader``, ``judge:lenient``, ``ingest``) was paid for."""

    role: str
    """``reader``, ``judge:<name>`` or ``ingest``."""
    model: str
    """The model."""
    prompt_tokens: int
    """Prompt tokens billed: the endpoint's figure, or the count where the endpoint
    reported none or fewer than the count allows (see ``flags``)."""
    completion_tokens: int
    """Completion tokens billed, by the same rule."""
    reported_prompt_tokens: int = 0
    """Prompt tokens the endpoint reported."""
    reported_completion_tokens: int = 0
    """Completion tokens the endpoint reported."""
    counted_prompt_tokens: int | None = None
    """Prompt tokens mnemometer counted (``None``: its calls were not counted)."""
    counted_completion_tokens: int | None = None
    """Completion tokens mnemometer counted."""
    usd: float | None = None
    """Dollars, billed tokens times the pinned price; ``None`` when the model has no price."""


class CostSummary(StrictModel):
    """What a run's LLM calls cost, from its items and the prices its header pinned."""

    currency: Literal["USD"] = "USD"
    """Always US dollars (the price map's unit)."""
    usd: float | None
    """The whole run; ``None`` when a model that was paid has no price (never a silent 0)."""
    per_question: float | None = None
    """Per question (per item result)."""
    per_correct: float | None = None
    """Per successful item; ``None`` when none succeeded."""
    per_memory: float | None = None
    """Storing cost per memory stored (``None``: the store's LLM calls are not metered)."""
    questions: int = 0
    """Item results the run has."""
    correct: int = 0
    """Successful ones."""
    memories: int | None = None
    """Memories stored, when the suite counted them."""
    roles: list[RoleCost] = Field(default_factory=list)
    """Tokens and dollars by role."""
    unpriced: list[str] = Field(default_factory=list)
    """Models with tokens but no price."""
    tokenizers: dict[str, str] = Field(default_factory=dict)
    """Model -> how its tokens were counted."""
    price_map: str = ""
    """The price map the header pinned."""
    price_map_sha256: str | None = None
    """Its SHA-256."""
    flags: list[str] = Field(default_factory=list)
    """Where the endpoint's usage and mnemometer's count disagree."""


class Summary(StrictModel):
    """Aggregated results of a run, derived from its items by its suite (``summary.json``)."""

    schema_version: int = LOG_SCHEMA_VERSION
    """Run-log schema version (always first)."""
    run_id: str = ""
    """The run it summarises (a summary of another run is refused)."""
    results: int = 0
    """Item results it was computed from (a stale summary is recomputed or flagged)."""
    items_sha256: str | None = None
    """SHA-256 of ``items.jsonl`` as summarised: a report trusts this summary without reading
    the items only while the log is byte for byte the same (``None``: an older run, trusted
    while its line count matches ``results``)."""
    source: Literal["suite", "generic"] = "suite"
    """``suite``: the suite's own summary; ``generic``: means by group, computed from the
    items alone (old logs, unfinished runs)."""
    overall: list[Metric]
    """Aggregates over every scorable item."""
    groups: dict[str, dict[str, list[Metric]]] = Field(default_factory=dict)
    """Breakdown: group key → group value → metrics."""
    counts: dict[str, int] = Field(default_factory=dict)
    """Items, errors, timeouts, skipped, ..."""
    notes: list[str] = Field(default_factory=list)
    """Caveats the reader should see (not-applicable reasons, ...)."""
    tables: list[Table] = Field(default_factory=list)
    """Suite-specific tables (per scenario, per dimension, ...)."""
    sections: dict[str, Any] = Field(default_factory=dict)
    """Suite-specific structured results (e.g. one entry per dimension), for machines."""
    headline: Headline | None = None
    """The suite's declared headline with its value and interval (``None``: a summary from
    before headlines)."""
    cost: CostSummary | None = None
    """What the run's LLM calls cost (``None``: the run recorded no prices)."""

    def table(self, name: str) -> Table:
        """The table called ``name``.

        Raises:
            KeyError: no such table (the message lists the names).
        """
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(f"no table {name!r}; tables: {', '.join(t.name for t in self.tables)}")
