from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SEED = SHARED / "seed-data"
MNEMOMETER = str(Path(sys.executable).with_name("mnemometer"))


def seed_file(*parts: str) -> Path:
    """A file from ../shared/seed-data (CI always has it beside the clone)."""
    path = SEED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"seed data not found at {path} (expected ../shared beside the repo)")
    return path


@pytest.fixture(autouse=True)
def _isolated_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Runs default to ./runs; keep every test's output in its own temp directory.
    monkeypatch.chdir(tmp_path)
    for key in list(os.environ):
        if key.startswith("MNEMOMETER_"):
            monkeypatch.delenv(key)


class _Main:
    """Let CliRunner drive ``mnemometer.cli.main.main``, which maps errors to exit code 2."""

    name = "mnemometer"

    def main(self, args, prog_name=None, **_):
        from mnemometer.cli.main import main

        main(list(args))


def invoke_cli(*args):
    """Run the mnemometer CLI in-process, exactly as the console script does."""
    from click.testing import CliRunner

    return CliRunner().invoke(_Main(), [str(a) for a in args])
