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


def _leaks(root: Path, secret: str = CANARY) -> list[str]:
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and secret.encode() in p.read_bytes()
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


def test_a_server_echoing_credentials_leaves_no_key_in_the_cache_items_or_export(
    tmp_path: Path, monkeypatch
) -> None:
    """Issue 30 §2: a server that echoes the Authorization header into its replies, the
    key given by flag in one run and by environment in another; a resume in a process
    that was given no key reads the cached replies; the hypotheses are exported."""
    from benchmark_helpers import locomo_cli, small_locomo
    from faultproxy import FaultProxy

    from mnemometer import _env
    from mnemometer.testing._bench import benchmark_reply

    by_flag, by_env = "sk-flag-5e1d0c9b8a7f6e5d4c3b", "local-env-key-8c7b6a5f4e3d2c1b"
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    data = small_locomo(tmp_path / "locomo.json", conversations=2, questions=4)
    with (
        FakeLLMServer(default=benchmark_reply) as srv,
        FaultProxy(srv.base_url, echo=True, share=0.3, faults=("empty",), seed=1) as proxy,
    ):
        url = proxy.url + "/v1"
        r = invoke_cli(*locomo_cli(data, url, "flag", "--llm-api-key", by_flag))
        assert r.exit_code == 1, r.output  # some replies refused: a resume asks them again
        proxy.share = 0.0
        monkeypatch.setattr(_env, "_secrets", set())  # a new process: it knows no key
        r = invoke_cli("run", "--resume", "flag", "--llm-base-url", url, "--llm-model", srv.model)
        assert r.exit_code == 0, r.output
        monkeypatch.setenv("MNEMOMETER_LLM_API_KEY", by_env)
        assert invoke_cli(*locomo_cli(data, url, "env")).exit_code == 0
        echoed = [r.headers.get("Authorization") for r in proxy.requests]
        assert f"Bearer {by_flag}" in echoed and f"Bearer {by_env}" in echoed
    for run in ("flag", "env"):
        r = invoke_cli("export", run, "--format", "hypotheses", "-o", f"{run}.jsonl")
        assert r.exit_code == 0, r.output
    leaks = [p for key in (by_flag, by_env) for p in _leaks(work, key)]
    assert not leaks, f"a key was written to {leaks}"
    for run in ("flag", "env"):  # the echo was cached, without its key
        cached = (work / run / "llm-cache" / "replies.jsonl").read_text()
        assert "Authorization: Bearer ***" in cached


@pytest.mark.parametrize(
    ("text", "scrubbed"),
    [
        ("Authorization: Bearer abc123def456", "Authorization: Bearer ***"),
        ('{"key": "sk-proj-AbC123dEf456GhI789jKl0"}', '{"key": "***"}'),
        ("sk-ant-api03-abcdefghij0123456789 and hf_Zq8vT3mK1pL6wN9rX2cY5bJ4", "*** and ***"),
        ("gsk_0123456789abcdefghijkl ghp_1234567890abcdefghijABCDEFGHIJ", "*** ***"),
        ("AKIAIOSFODNN7EXAMPLE xoxb-1234-5678-abcdef", "*** ***"),
        # Prose and ordinary ids are left alone.
        ("the bearer of bad news; scikit's sk-learn-compatible-estimators", None),
        ("task-list-of-things-1234567890 duplicates_dropped conv-26/q001", None),
    ],
)
def test_key_shapes_are_scrubbed_and_prose_is_not(text: str, scrubbed: str | None) -> None:
    from mnemometer import _env

    assert _env.scrub(text, []) == (scrubbed or text)
    assert _env.scrub_bytes(text.encode(), []) == (scrubbed or text).encode()
