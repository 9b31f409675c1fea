"""Facts about the environment recorded in every run header."""

from __future__ import annotations

import hashlib
import json
import platform
import re
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, packages_distributions, version
from typing import Any

_SECRET = re.compile(r"(key|token|secret|password|passwd|auth|credential)", re.I)


def redact(options: dict[str, Any]) -> dict[str, Any]:
    """Copy ``options`` with secret-looking values replaced by ``"***"`` (recursively)."""
    out: dict[str, Any] = {}
    for k, v in options.items():
        if _SECRET.search(str(k)) and v not in (None, ""):
            out[k] = "***"
        elif isinstance(v, dict):
            out[k] = redact(v)
        else:
            out[k] = v
    return out


def fingerprint(obj: Any) -> str:
    """SHA-256 of the canonical JSON of ``obj``."""
    blob = json.dumps(obj, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


def package_version() -> str:
    """The installed mnemometer version."""
    try:
        return version("mnemometer")
    except PackageNotFoundError:
        return "0+unknown"


def distribution_version(obj: object) -> str | None:
    """Version of the distribution that provides ``obj``'s top-level module."""
    top = type(obj).__module__.split(".")[0]
    try:
        dists = packages_distributions().get(top) or [top]
        return version(dists[0])
    except (PackageNotFoundError, IndexError):
        return None


def git_revision() -> str | None:
    """The working directory's git revision (``+dirty`` when modified), if any."""
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5
        )
        if rev.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
        )
        return rev.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def python_version() -> str:
    """Python version."""
    return sys.version.split()[0]


def platform_name() -> str:
    """OS and machine."""
    return f"{platform.system()}-{platform.machine()}"


def new_header(
    *,
    suite: str,
    the_suite: Any,
    dataset: Any,
    dataset_path: str | None,
    system: Any,
    seed: int,
    run_group: str | None,
    repeat: int,
    item_count: int,
) -> Any:
    """The header of a new run: what determines its numbers, plus the environment.

    Args:
        suite: registered suite name.
        the_suite: the suite object (its version and resolved options are recorded).
        dataset: the loaded :class:`~mnemometer.datasets.Dataset`.
        dataset_path: where to reload it on resume, or ``None`` for an in-memory dataset.
        system: the :class:`~mnemometer.log.SystemRef` (options already redacted).
        seed: recorded seed.
        run_group: group id shared by repeats (a new one when ``None``).
        repeat: repeat index within the group.
        item_count: how many items the suite planned.
    """
    import uuid
    from datetime import UTC, datetime

    from mnemometer.log._schema import DatasetRef, RunHeader

    info = dataset.info
    return RunHeader(
        run_id=uuid.uuid4().hex[:12],
        run_group=run_group or uuid.uuid4().hex[:12],
        repeat=repeat,
        suite=suite,
        suite_version=the_suite.version,
        suite_options=the_suite.options(),
        dataset=DatasetRef(
            name=info.name,
            version=info.version,
            content_hash=info.content_hash or "",
            language=info.language,
            path=dataset_path,
            reference_time=info.reference_time,
            notes=info.notes,
        ),
        system=system,
        seed=seed,
        config_fingerprint=fingerprint(
            [suite, the_suite.options(), system.name, system.options, info.content_hash]
        ),
        package_version=package_version(),
        python_version=python_version(),
        platform=platform_name(),
        git_revision=git_revision(),
        created_at=datetime.now(UTC),
        item_count=item_count,
    )
