"""LLM client against the deterministic OpenAI-compatible server over real HTTP."""

from __future__ import annotations

import re
import threading

import pytest

from mnemometer.llm import LLMClient, LLMError, resolve_settings
from mnemometer.testing import FakeLLMServer

USER = [{"role": "user", "content": "What is my name and city?"}]


@pytest.fixture
def server():
    with FakeLLMServer(
        rules=[
            ("name and city", "Darrin Phoenix"),
            (re.compile(r"^json"), '{"verdict": "CORRECT"}'),
        ],
        default="OK",
        api_key="sk-test",
    ) as srv:
        yield srv


def client(srv, **kw):
    kw.setdefault("backoff", 0.001)
    return LLMClient(srv.base_url, srv.model, "sk-test", **kw)


def test_chat_reply_usage_and_request_shape(server):
    c = client(server)
    reply = c.chat(USER, max_tokens=16)
    assert reply.text == "Darrin Phoenix" and not reply.cached
    assert reply.usage.completion_tokens == 2 and reply.usage.prompt_tokens == 6
    body = server.chat_requests()[-1]
    assert body["max_tokens"] == 16 and body["temperature"] == 0.0 and body["seed"] == 0
    assert "max_completion_tokens" not in body
    c.chat([{"role": "user", "content": "hello"}])
    assert c.usage.calls == 2 and c.usage.completion_tokens == 3


@pytest.mark.parametrize(
    "fault",
    [
        {"status": 429},
        {"status": 500},
        {"status": 503},
        {"kind": "malformed"},
        {"kind": "truncated"},
    ],
)
def test_retries_transient_failures(server, fault):
    server.fail_next(2, **fault)
    assert client(server).chat(USER).text == "Darrin Phoenix"
    assert len(server.chat_requests()) == 3


def test_gives_up_after_max_retries(server):
    server.fail_next(3, status=500)
    with pytest.raises(LLMError, match="gave up after 2 attempts.*HTTP 500"):
        client(server, max_retries=1).chat(USER)


def test_no_retry_on_client_error(server):
    server.fail_next(1, status=400)
    with pytest.raises(LLMError, match="HTTP 400"):
        client(server).chat(USER)
    assert len(server.chat_requests()) == 1


def test_timeout_on_slow_reply(server):
    """A busy or slow endpoint is reported as a timeout with the knobs, never as unreachable."""
    server.fail_next(1, kind="slow", delay=1.0)
    with pytest.raises(LLMError) as info:
        client(server, timeout=0.2, max_retries=0).chat(USER)
    message = str(info.value)
    assert "timed out after 0.2 s (waiting for the reply)" in message
    assert "cannot reach" not in message and "is the server running" not in message
    assert "busy or slow" in message and "MNEMOMETER_LLM_TIMEOUT" in message


def test_clear_errors_for_key_model_and_endpoint(server):
    with pytest.raises(LLMError, match="API key was rejected.*MNEMOMETER_LLM_API_KEY"):
        LLMClient(server.base_url, server.model, "wrong").chat(USER)
    with pytest.raises(LLMError, match="model 'gpt-9' not found"):
        LLMClient(server.base_url, "gpt-9", "sk-test").chat(USER)
    with pytest.raises(LLMError, match="did you mean 'fake-llm'"):
        LLMClient(server.base_url, "fake-lm", "sk-test").check()
    url = server.base_url
    server.stop()  # the port is closed now: nothing listens
    with pytest.raises(LLMError, match="cannot reach the LLM endpoint.*serve-llm"):
        LLMClient(url, "m", max_retries=1, backoff=0.001).chat(USER)


def test_disk_cache_keyed_on_full_request(server, tmp_path):
    c = client(server, cache_dir=tmp_path)
    first = c.chat(USER)
    again = c.chat(USER)
    assert again.cached and again.text == first.text
    assert len(server.chat_requests()) == 1
    c.chat(USER, max_tokens=5)  # a different request is a different entry
    assert len(server.chat_requests()) == 2
    assert c.usage.cached_calls == 1
    c.close()
    fresh = client(server, cache_dir=tmp_path)  # a resumed run: both entries on disk
    assert fresh.chat(USER).cached and fresh.chat(USER, max_tokens=5).cached
    assert len(server.chat_requests()) == 2


def test_chat_json_and_embeddings(server):
    c = client(server)
    assert c.chat_json([{"role": "user", "content": "json please"}], {"type": "object"}) == {
        "verdict": "CORRECT"
    }
    assert server.chat_requests()[-1]["response_format"]["type"] == "json_object"
    with pytest.raises(LLMError, match="valid JSON"):
        c.chat_json(USER, {"type": "object"})
    a, b, a2 = c.embed(["Darrin lives in Phoenix", "a cat", "Darrin lives in Phoenix"])
    assert a == a2 and len(a) == 64 and a != b


def test_thread_safe_usage(server):
    c = client(server)
    threads = [threading.Thread(target=lambda: [c.chat(USER) for _ in range(5)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert c.usage.calls == 20 and c.usage.completion_tokens == 40


def test_settings_precedence(tmp_path, monkeypatch):
    cfg = tmp_path / "llm.toml"
    cfg.write_text('[llm]\nbase_url = "http://file/v1"\nmodel = "file-model"\napi_key = "f"\n')
    monkeypatch.setenv("MNEMOMETER_LLM_MODEL", "env-model")
    s = resolve_settings(config_file=cfg)
    assert (s.base_url, s.model, s.api_key) == ("http://file/v1", "env-model", "f")
    assert resolve_settings(model="arg", config_file=cfg).model == "arg"
    assert s.redacted()["api_key"] == "***"
    bad = tmp_path / "bad.toml"
    bad.write_text("[llm]\nbase_ur = 'x'\n")
    with pytest.raises(
        LLMError, match=r"\[llm\] unknown key 'base_ur' \(did you mean 'base_url'\?\)"
    ):
        resolve_settings(config_file=bad)
    monkeypatch.delenv("MNEMOMETER_LLM_MODEL")
    monkeypatch.delenv("MNEMOMETER_LLM_BASE_URL", raising=False)
    with pytest.raises(LLMError, match="--llm-base-url"):
        resolve_settings()


def test_settings_numbers_are_kept_or_refused(tmp_path, monkeypatch):
    s = resolve_settings("http://x/v1", "m", max_retries=0, timeout=2.5)
    assert (s.max_retries, s.timeout) == (0, 2.5)  # 0 used to fall back to 3
    cfg = tmp_path / "llm.toml"
    cfg.write_text("[llm]\nmax_retries = 0\ntimeout = 5\n")
    assert resolve_settings("http://x/v1", "m", config_file=cfg).max_retries == 0
    with pytest.raises(LLMError, match="timeout must be a positive number, got 0"):
        resolve_settings("http://x/v1", "m", timeout=0)
    monkeypatch.setenv("MNEMOMETER_LLM_MAX_RETRIES", "lots")
    with pytest.raises(LLMError, match="max_retries must be a whole number >= 0, got 'lots'"):
        resolve_settings("http://x/v1", "m")
    cfg.write_text("[llm]\ntimeout = -1\n")
    with pytest.raises(
        LLMError, match=r"llm.toml: \[llm\] timeout: Input should be greater than 0"
    ):
        resolve_settings("http://x/v1", "m", config_file=cfg)


def test_check_waits_for_a_server_that_is_still_starting():
    """`serve-llm ... &` then a run at once: the pre-flight check gives the server time."""
    import threading

    from mnemometer.local_llm import free_port

    port = free_port()
    late = FakeLLMServer(port=port)
    starter = threading.Timer(1.5, late.start)  # the server comes up 1.5 s from now
    starter.start()
    try:
        LLMClient(f"http://127.0.0.1:{port}/v1", late.model, max_retries=0).check()
    finally:
        starter.join()
        late.stop()


def test_check_gives_up_on_a_server_that_never_starts():
    from mnemometer.local_llm import free_port

    port = free_port()
    client = LLMClient(f"http://127.0.0.1:{port}/v1", "m", max_retries=0)
    with pytest.raises(LLMError, match=r"is the server running\?.*\(waited 0.5 s"):
        client.check(startup_wait=0.5)
