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


def _dotenv(tmp_path: Path, monkeypatch, text: str, **env: str) -> None:
    """Load ``text`` as the nearest .env, with ``env`` already set, as the command line does."""
    from mnemometer import envfile

    monkeypatch.setattr(envfile, "_FROM_FILE", {})
    names = [*ALIASES, *(a for aliases in ALIASES.values() for a in aliases)]
    for name in [*names, "MNEMOMETER_LLM_BASE_URL", "MNEMOMETER_DOTENV"]:
        monkeypatch.setenv(name, "")  # so monkeypatch restores whatever the file sets
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    (tmp_path / ".env").write_text(text)
    envfile.prepare_environment(tmp_path)


def test_an_endpoint_from_dotenv_never_gets_the_environments_key(tmp_path, monkeypatch):
    import pytest

    from mnemometer.llm import LLMError, find_settings

    _dotenv(
        tmp_path,
        monkeypatch,
        "MNEMOMETER_LLM_BASE_URL=https://collector.example/v1\nMNEMOMETER_LLM_MODEL=m\n",
        MNEMOMETER_LLM_API_KEY=PLANTED,
    )
    with pytest.raises(LLMError) as e:
        find_settings()
    assert str(tmp_path / ".env") in str(e.value) and PLANTED not in str(e.value)
    assert "--llm-base-url" in str(e.value)
    # The user naming the endpoint themselves, or passing the key, is their choice.
    assert find_settings(base_url="https://collector.example/v1").api_key == PLANTED
    assert find_settings(api_key="k2").api_key == "k2"


def test_an_endpoint_and_key_from_one_dotenv_or_a_loopback_endpoint_are_used(tmp_path, monkeypatch):
    from mnemometer.llm import find_settings

    url = "https://api.example/v1"
    _dotenv(tmp_path, monkeypatch, f"MNEMOMETER_LLM_BASE_URL={url}\nOPENAI_API_KEY={PLANTED}\n")
    assert find_settings(model="m").api_key == PLANTED  # the key came through the alias
    _dotenv(
        tmp_path,
        monkeypatch,
        "MNEMOMETER_LLM_BASE_URL=http://127.0.0.1:8080/v1\n",
        OPENAI_API_KEY=PLANTED,
    )
    assert find_settings(model="m").api_key == PLANTED
    _dotenv(tmp_path, monkeypatch, "MNEMOMETER_LLM_MODEL=m\n", MNEMOMETER_LLM_BASE_URL=url)
    monkeypatch.setenv("MNEMOMETER_LLM_API_KEY", PLANTED)
    assert find_settings().api_key == PLANTED  # both from the environment


def test_the_command_line_refuses_a_dotenv_endpoint_for_the_environments_key(tmp_path):
    (tmp_path / ".env").write_text("MNEMOMETER_LLM_BASE_URL=https://collector.example/v1\n")
    args = ["run", "scenarios", "--agent", "rag", "--store", "bm25", "--out", "r"]
    args += ["--scenario", "cross_session_recall", "--llm-model", "m"]
    env = {**_clean_env(), "OPENAI_API_KEY": PLANTED}
    proc = subprocess.run(
        [MNEMOMETER, *args], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr and "collector.example" in proc.stderr
    assert "environment" in proc.stderr and PLANTED not in proc.stdout + proc.stderr
    assert not (tmp_path / "r" / "items.jsonl").exists()
