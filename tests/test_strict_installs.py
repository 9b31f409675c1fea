"""`make test --strict-installs`: a test that skips for a missing install fails instead.

The fast group's venv holds only TEST_EXTRAS; a test needing more belongs in EXTRA_TESTS
(run by `make test-live`). Without the guard such a test would skip in the fast group and
run nowhere.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

CASES = """
import pytest

def test_missing_module():
    pytest.importorskip("mnemometer_no_such_module")

def test_missing_extra():
    pytest.skip("the [cost] extra is not installed")

def test_other_skip():
    pytest.skip("seed data not found")
"""


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_cases.py").write_text(CASES)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TESTS), os.environ["PYTHONPATH"]]))
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "conftest", "-p", "no:randomly", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_a_skip_for_a_missing_install_fails_under_the_flag(tmp_path: Path) -> None:
    done = _pytest(tmp_path, "--strict-installs", "-rA")
    assert done.returncode == 1, done.stdout
    assert "2 failed, 1 skipped" in done.stdout
    assert "FAILED test_cases.py::test_missing_module" in done.stdout
    assert "FAILED test_cases.py::test_missing_extra" in done.stdout
    assert "add it to EXTRA_TESTS in tests/conftest.py" in done.stdout


def test_a_module_skipped_whole_fails_too(tmp_path: Path) -> None:
    (tmp_path / "test_module.py").write_text(
        'import pytest\npytest.importorskip("mnemometer_no_such_module")\ndef test_x():\n    pass\n'
    )
    done = _pytest(tmp_path, "--strict-installs", "test_module.py")
    assert done.returncode != 0 and "missing install" in done.stdout, done.stdout


def test_without_the_flag_they_skip(tmp_path: Path) -> None:
    done = _pytest(tmp_path)
    assert done.returncode == 0 and "3 skipped" in done.stdout, done.stdout
