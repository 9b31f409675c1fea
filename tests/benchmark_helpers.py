"""What the long-conversation benchmark tests share: the LongMemEval mini file run on bm25,
a metric read from a summary, and the CLI arguments of a LoCoMo run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import REPO, seed_file

import mnemometer
from mnemometer.runner import RunResult, RunSettings

MINI = REPO / "tests/data/longmemeval_mini.json"


def metric(summary: Any, name: str) -> float:
    """The overall value of metric ``name`` in a run summary."""
    return next(m.value for m in summary.overall if m.name == name)


def run_longmemeval(settings: RunSettings, out: Path) -> RunResult:
    """The mini LongMemEval file on bm25, judged by LongMemEval's own judge."""
    return mnemometer.run(
        "longmemeval",
        "bm25",
        suite_options={"dataset": str(MINI), "judges": ["longmemeval"]},
        out=out,
        settings=settings,
    )


def llm_flags(srv: Any) -> list[str]:
    """The CLI flags that point a run at the test LLM server ``srv``."""
    return ["--llm-base-url", srv.base_url, "--llm-model", srv.model]


def locomo_argv(srv: Any, questions: int, judge: str, *more: Any) -> list[Any]:
    """``run locomo`` on the seed's LoCoMo file with bm25, read and judged by ``srv``."""
    data = seed_file("locomo", "locomo10.json")
    return [
        "run",
        "locomo",
        "--dataset",
        str(data),
        "--store",
        "bm25",
        "--questions",
        str(questions),
        "--judge",
        judge,
        *llm_flags(srv),
        *more,
    ]


def small_locomo(path: Path, conversations: int = 3, questions: int = 10) -> Path:
    """The seed's LoCoMo file cut to its first conversations and their first questions.

    ``--questions`` counts questions over the whole file; this keeps several conversations
    (several items) with a few questions each.
    """
    data = json.loads(seed_file("locomo", "locomo10.json").read_text("utf-8"))
    path.write_text(json.dumps([{**c, "qa": c["qa"][:questions]} for c in data[:conversations]]))
    return path


def locomo_cli(dataset: Path, base_url: str, out: Path, *more: Any) -> list[Any]:
    """``run locomo`` on ``dataset`` with bm25, read by the model at ``base_url``, no judge."""
    return [
        "run",
        "locomo",
        "--dataset",
        dataset,
        "--store",
        "bm25",
        "--llm-base-url",
        base_url,
        "--llm-model",
        "fake-llm",
        "--out",
        out,
        "--format",
        "none",
        *more,
    ]
