"""conv-26 for the plug-ins' tests (``tests/claims/``): its turns, and a small LoCoMo run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import seed_file

import mnemometer
from mnemometer.llm import resolve_settings
from mnemometer.runner import RunResult, RunSettings
from mnemometer.systems import SystemSpec
from mnemometer.testing import FakeLLMServer
from mnemometer.testing._bench import benchmark_reply


def conv26() -> tuple[list[tuple[str, dict]], list[dict]]:
    """conv-26's turns as (text, metadata) and its questions, read from the seed file."""
    conv = json.loads(seed_file("locomo", "locomo10.json").read_text("utf-8"))[0]
    turns, n = [], 1
    while f"session_{n}" in conv["conversation"]:
        for t in conv["conversation"][f"session_{n}"]:
            turns.append((f"{t['speaker']}: {t['text']}", {"memory_id": t["dia_id"]}))
        n += 1
    return turns, conv["qa"]


def locomo_run(
    store: str, out: Path, questions: int, **store_options: Any
) -> tuple[RunResult, dict[str, dict[str, Any]]]:
    """conv-26's first ``questions`` questions through ``store``, read by the test server.

    Returns:
        The run and its rule-sensitivity rows by rule name.
    """
    with FakeLLMServer(default=benchmark_reply) as srv:
        res = mnemometer.run(
            "locomo",
            SystemSpec.store(store, **store_options),
            suite_options={
                "dataset": str(seed_file("locomo", "locomo10.json")),
                "questions": questions,
            },
            limit=1,
            out=out,
            settings=RunSettings(llm=resolve_settings(srv.base_url, srv.model)),
        )
    return res, {d["rule"]: d for d in res.summary.sections["rules"]["rules"]}
