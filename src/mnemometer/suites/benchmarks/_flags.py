"""The benchmark suites' ``mnemometer run`` flags (``--judge``, ``--protocol``, ...)."""

from __future__ import annotations

from mnemometer.protocols import DEFAULT, PROTOCOL_NAMES
from mnemometer.suites._base import TOP_K, Flag
from mnemometer.suites.benchmarks._pipeline import BASELINES

FLAGS: tuple[Flag, ...] = (
    Flag(
        "--judge",
        "judges",
        "LLM judge (repeatable): lenient, strict, longmemeval, letta-rubric, zep, each optionally "
        "NAME@MODEL for its own model; the first decides success.",
        multiple=True,
    ),
    Flag(
        "--judge-endpoint",
        "judge_endpoints",
        "Where a NAME@MODEL judge's model is served: MODEL=URL (repeatable; default: the "
        "reader's endpoint).",
        multiple=True,
    ),
    Flag(
        "--judge-model",
        "judge_model",
        "Model for the judges at the same endpoint (default: the reader's).",
    ),
    Flag(
        "--questions",
        "questions",
        "Ask only the first N selected questions (--limit N counts conversations).",
        "int",
    ),
    Flag(
        "--category",
        "categories",
        "Only questions of this category or type (repeatable).",
        multiple=True,
    ),
    Flag(
        "--baseline",
        "baseline",
        "Answer from a baseline context instead of the system's retrieval.",
        "choice:" + ",".join(BASELINES),
    ),
    Flag(
        "--errata", "errata", "Errata file: corrected or excluded questions, with reasons.", "path"
    ),
    Flag(
        "--reader-budget",
        "reader_budget",
        "Token budget of the reader's context (default: the protocol's; mnemometer's 4000).",
        "int",
    ),
    Flag("--rubric", "rubric", "Letta's rubric file for --judge letta-rubric.", "path"),
    Flag(
        "--protocol",
        "protocol",
        "Evaluation protocol: whose reader prompt, top-k, formatting and judges "
        f"({', '.join(PROTOCOL_NAMES)}; default {DEFAULT}); other flags override it.",
    ),
    Flag(
        "--protocol-source",
        "protocol_source",
        "Your copy of the peer's repository (or the file) a protocol reads unshipped "
        "prompts from (default: beside the dataset).",
        "path",
    ),
    TOP_K,
)
