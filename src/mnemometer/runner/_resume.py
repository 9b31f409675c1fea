"""What a resume checks before it continues a run: consent, the LLM, the dataset, the system.

A resume continues a run from its header; these are the checks that the header is still
true (the dataset's hash, the LLM it asked) and the questions only the resuming user can
answer (consent to run the suite's commands).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mnemometer.datasets._io import load_dataset
from mnemometer.datasets._models import Dataset
from mnemometer.errors import RunLogError
from mnemometer.log._schema import RunHeader
from mnemometer.runner._setup import scoring_of
from mnemometer.suites._base import Suite
from mnemometer.systems import SystemSpec

RESUME_WITH_SHELL = (
    "this run executes the suite's commands: resume it with --allow-shell (and the sandbox "
    "flags you want)"
)
"""Why a resume without consent stops (the run header's own consent is not the user's)."""


def refused(error: Exception, options: dict[str, Any]) -> str:
    """Why a resume stopped: no consent, or what ``suite.toml`` asks that was not granted."""
    return str(error) if options.get("allow_shell") else RESUME_WITH_SHELL


def llm_change(
    path: Path,
    header: RunHeader,
    asked: Any,
    suite: Suite,
    llm: Any,
    allow: bool,
) -> str | None:
    """The note of an allowed change of LLM on resume; ``None`` when nothing changed.

    Raises:
        RunLogError: the resume names another model or endpoint than the run recorded (for
            its reader, ``header.llm``, or its judges' scorers) without ``allow``.
    """
    if asked is None:
        return None  # the run's own, recorded
    was = header.llm or {}
    differs = []
    if was and (asked.base_url, asked.model) != (was.get("base_url"), was.get("model")):
        differs.append(f"the reader {was.get('model')} at {was.get('base_url')}")
    now = scoring_of(suite, llm)
    if header.scoring is not None and now is not None:
        before = [s.args for s in header.scoring.scorers if s.name == "judge"]
        after = [s.args for s in now.scorers if s.name == "judge"]
        if before != after:
            differs += [f"judge {b['judge']} ({b['model']} at {b['base_url']})" for b in before]
    if not differs:
        return None
    what = ", ".join(dict.fromkeys(differs))
    if not allow:
        raise RunLogError(
            f"{path}: this run asked {what}; the resume asks {asked.model} at "
            f"{asked.base_url}. Resume without --llm-* flags to keep the run's own, or pass "
            "--allow-llm-change to mix them (recorded in the run)"
        )
    return f"resumed asking {asked.model} at {asked.base_url} where it had asked {what}"


def dataset_to_resume(
    path: Path, header: RunHeader, suite: Suite, dataset: Dataset | None
) -> Dataset:
    """The dataset a resumed run reads, checked against the hash the run recorded.

    Its suite's own, the one passed, or its file.

    Raises:
        RunLogError: a dataset passed in memory was not passed again, or it changed.
    """
    ds = suite.dataset()
    if ds is None and dataset is not None:
        ds = dataset
    if ds is not None and not ds.info.content_hash:
        # A suite's own dataset (LongMemEval's streamed index) is hashed here, as at start.
        ds.with_hash()
    if ds is None:
        if header.dataset.path is None:
            raise RunLogError(
                f"{path}: the dataset was passed in memory; resume with the same dataset: "
                "resume(run_dir, dataset=ds)"
            )
        ds = load_dataset(header.dataset.path)
    # Runs that recorded no hash (LongMemEval's before it was hashed) cannot be checked.
    if header.dataset.content_hash and ds.info.content_hash != header.dataset.content_hash:
        where = header.dataset.path or "the suite's items"
        raise RunLogError(
            f"{path}: {where} changed since the run started (content hash differs); start a new run"
        )
    return ds


def registered(spec: SystemSpec) -> bool:
    """Whether the system is a registered store or agent (else it was an object)."""
    from mnemometer._registry import AGENTS, STORES

    return spec.name in (STORES if spec.kind == "store" else AGENTS).names()
