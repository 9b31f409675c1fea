"""`.env` loading and the seeds' variable names: used, never written to a run log."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import MNEMOMETER

from mnemometer.envfile import ALIASES, apply_aliases, load_dotenv_file
from mnemometer.testing import FakeLLMServer

PLANTED = "sk-planted-0123456789abcdef"


def _clean_env() -> dict[str, str]:
    names = {n for aliases in ALIASES.values() for n in aliases} | set(ALIASES)
    return {k: v for k, v in os.environ.items() if k not in names and k != "MNEMOMETER_DOTENV"}


def test_aliases_fill_only_unset_canonical_names():
    env = {"OPENAI_API_KEY": "a", "DEEPSEEK_API_KEY": "b", "LETTA_BASE_URL": "http://x"}
    env["MNEMOMETER_LETTA_URL"] = "http://mine"
    used = apply_aliases(env)
    assert env["MNEMOMETER_LLM_API_KEY"] == "a"  # the first alias listed wins
    assert env["MNEMOMETER_LETTA_URL"] == "http://mine"  # an explicit setting wins
    assert used == {"MNEMOMETER_LLM_API_KEY": "OPENAI_API_KEY"}


def test_dotenv_never_overrides_the_environment(tmp_path, monkeypatch):
    (tmp_path / ".env").write_text("MNEMOMETER_X_TEST=file\nMNEMOMETER_Y_TEST=file\n")
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    monkeypatch.setenv("MNEMOMETER_X_TEST", "env")
    monkeypatch.delenv("MNEMOMETER_Y_TEST", raising=False)
    assert load_dotenv_file(sub) == tmp_path / ".env"  # found in a parent
    assert os.environ["MNEMOMETER_X_TEST"] == "env"
    assert os.environ["MNEMOMETER_Y_TEST"] == "file"
    monkeypatch.delenv("MNEMOMETER_Y_TEST")
    monkeypatch.setenv("MNEMOMETER_DOTENV", "0")
    assert load_dotenv_file(sub) is None
    assert "MNEMOMETER_Y_TEST" not in os.environ


def test_seed_key_in_dotenv_is_used_and_never_written_to_the_run(tmp_path: Path):
    with FakeLLMServer(api_key=PLANTED) as srv:
        (tmp_path / ".env").write_text(
            f"OPENAI_API_KEY={PLANTED}\nBENCH_DEFAULT_MODEL={srv.model}\n"
            f"MNEMOMETER_LLM_BASE_URL={srv.base_url}\n"
        )
        args = ["run", "scenarios", "--agent", "rag", "--store", "bm25", "--out", "r"]
        args += ["--scenario", "cross_session_recall", "-O", "similarity=none"]
        proc = subprocess.run(
            [MNEMOMETER, *args], cwd=tmp_path, env=_clean_env(), capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stderr
        assert srv.chat_requests()  # the key from .env was accepted by the server
    run_dir = tmp_path / "r"
    files = [p for p in run_dir.rglob("*") if p.is_file()]
    assert files
    leaked = [p for p in files if PLANTED.encode() in p.read_bytes()]
    assert not leaked
    assert PLANTED not in proc.stdout + proc.stderr
