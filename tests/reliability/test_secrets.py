"""Secrets never land on disk: a planted key, given every way a user gives one, is in no file
a run, a resume, a report or a comparison writes (run directories, experiment plans, the
LLM cache, HTML pages)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import invoke_cli
from wrapped import WrappedBM25

from mnemometer._registry import STORES
from mnemometer.testing import FakeLLMServer
from mnemometer.testing.llm_server import echo_memories

CANARY = "sk-canary-7f3a9c21d4e8b6"


class KeyedStore(WrappedBM25):
    """bm25 that needs an API key (as hosted stores do) and fails without the right one."""

    def __init__(self, api_key: str = "", lang: str = "auto") -> None:
        import os

        key = api_key or os.environ.get("KEYED_TEST_API_KEY", "")
        if key != CANARY:
            raise RuntimeError(f"bad key {key!r}")
        super().__init__(lang)

    def search(self, query: str, top_k: int):
        if "Naples" in query:  # an error message that quotes the key, as careless SDKs do
            raise RuntimeError(f"401 for key {CANARY}")
        return self.inner.search(query, top_k)


@pytest.fixture
def keyed():
    STORES.register("keyed-test", KeyedStore)
    yield
    STORES.unregister("keyed-test")


def _leaks(root: Path) -> list[str]:
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and CANARY.encode() in p.read_bytes()
    )


def test_a_planted_key_lands_in_no_file(tmp_path: Path, keyed, monkeypatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("MNEMOMETER_LLM_CACHE", str(work / "llm-cache"))
    # A store key by flag, in an experiment (two repeats), resumed, reported and compared.
    r = invoke_cli(
        "run",
        "retrieval",
        "-d",
        "demo-en",
        "-s",
        "keyed-test",
        "-S",
        f"api_key={CANARY}",
        "--repeat",
        "2",
        "--out",
        "exp",
        "--format",
        "none",
    )
    assert r.exit_code == 1, r.output  # the Naples query failed, quoting the key
    monkeypatch.setenv("KEYED_TEST_API_KEY", CANARY)  # a resume takes the key from here
    (work / "exp" / "keyed-test-r1" / "summary.json").unlink()
    assert invoke_cli("run", "--resume", "exp", "--format", "none").exit_code == 1
    for fmt in ("html", "md", "json"):
        assert (
            invoke_cli("report", "exp/keyed-test-r0", "--format", fmt, "-o", f"r.{fmt}").exit_code
            == 0
        )
    # An LLM key by environment, by flag and in a config file, to a server that insists.
    scenarios = ["run", "scenarios", "--agent", "rag", "--store", "bm25"]
    scenarios += ["--scenario", "task_continuity", "-O", "similarity=none", "--format", "none"]
    cfg = work / "llm.toml"
    with FakeLLMServer(default=echo_memories, api_key=CANARY) as srv:
        cfg.write_text(
            f'[llm]\nbase_url = "{srv.base_url}"\nmodel = "{srv.model}"\napi_key = "{CANARY}"\n'
        )
        endpoint = ["--llm-base-url", srv.base_url, "--llm-model", srv.model]
        monkeypatch.setenv("MNEMOMETER_LLM_API_KEY", CANARY)
        for n, flags in enumerate(
            (endpoint, [*endpoint, "--llm-api-key", CANARY], ["--llm-config", str(cfg)])
        ):
            if n == 2:
                monkeypatch.delenv("MNEMOMETER_LLM_API_KEY")
            r = invoke_cli(*scenarios, *flags, "--out", f"sc{n}")
            assert r.exit_code == 0, r.output
    cfg.unlink()  # the user's own file holds the key, of course
    leaks = _leaks(work)
    assert not leaks, f"the key was written to {leaks}"
    assert list((work / "llm-cache").rglob("*")), "the LLM cache was used"


def test_a_mem0_key_lands_in_no_file(tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("mem0")
    from mnemometer.testing import FakeMem0Server

    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    run = ["run", "retrieval", "-d", "demo-en", "-s", "mem0", "--format", "none"]
    with (
        FakeMem0Server("platform", api_key=CANARY) as platform,
        FakeMem0Server("server", api_key=CANARY) as server,
    ):
        # The hosted platform with the seed's variable; the self-hosted server by flag.
        monkeypatch.setenv("MEM0_API_KEY", CANARY)
        r = invoke_cli(*run, "-S", "mode=platform", "-S", f"url={platform.url}", "-o", "plat")
        assert r.exit_code == 0, r.output
        monkeypatch.delenv("MEM0_API_KEY")
        r = invoke_cli(
            *run,
            "-S",
            "mode=server",
            "-S",
            f"url={server.url}",
            "-S",
            f"api_key={CANARY}",
            "-o",
            "srv",
        )
        assert r.exit_code == 0, r.output
        assert any(h.get("X-API-Key") == CANARY for *_, h in server.requests)  # it was sent
    for name in ("plat", "srv"):
        assert invoke_cli("report", name, "--format", "html", "-o", f"{name}.html").exit_code == 0
    leaks = _leaks(work)
    assert not leaks, f"the key was written to {leaks}"
