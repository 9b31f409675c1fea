"""The formatter formats and the linter passes (ruff is in the dev group)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TREES = ["src", "tests", "benchmarks", "scripts", "examples"]


def _ruff() -> list[str]:
    exe = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if exe is None:
        pytest.fail("ruff is not installed: pip install --group dev")
    return [exe]


def test_ruff_check_passes():
    p = subprocess.run([*_ruff(), "check", *TREES], cwd=REPO, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-3000:]


def test_ruff_format_leaves_nothing_to_change():
    p = subprocess.run(
        [*_ruff(), "format", "--check", *TREES], cwd=REPO, capture_output=True, text=True
    )
    assert p.returncode == 0, p.stdout[-3000:]


def test_no_fmt_skip_pragmas():
    found = [
        f"{f.relative_to(REPO)}:{i}"
        for tree in TREES
        for f in (REPO / tree).rglob("*.py")
        for i, line in enumerate(f.read_text("utf-8").splitlines(), 1)
        if "fmt: skip" in line and f.name != "test_style.py"
    ]
    assert not found, "let the formatter format: " + ", ".join(found)


# Modules our dependencies import when they find them (lancedb: Hugging Face's datasets).
_PROBED = {"datasets", "pandas", "polars", "torch", "transformers", "tensorflow", "jax"}


def test_no_test_folder_passes_for_a_package():
    """``tests/`` is on ``sys.path`` while tests run: a folder named like a package a library
    probes for (``tests/datasets``) becomes an empty namespace package, the library's
    ``try: import datasets`` succeeds, and it fails one line later."""
    import importlib.metadata

    installed = set(importlib.metadata.packages_distributions())
    clashes = [
        d.name
        for d in (REPO / "tests").iterdir()
        if d.is_dir() and (d.name in _PROBED or d.name in installed)
    ]
    assert not clashes, f"rename these test folders (e.g. with a trailing _): {clashes}"
