"""The LLM client's append-only disk cache: crash safety, sharing, the old layout."""

from __future__ import annotations

import json
import threading

import pytest

from mnemometer.llm import LLMClient
from mnemometer.llm._cache import CACHE_FILE, ReplyCache, request_key
from mnemometer.testing import FakeLLMServer


def ask(n: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"question {n}"}]


@pytest.fixture
def server():
    with FakeLLMServer(default="OK") as srv:
        yield srv


def client(srv, cache):
    return LLMClient(srv.base_url, srv.model, backoff=0.001, cache_dir=cache)


def test_key_is_the_canonical_request_whatever_the_dict_order():
    a = request_key("http://h/v1", "/chat/completions", {"model": "m", "seed": 0})
    b = request_key("http://h/v1", "/chat/completions", {"seed": 0, "model": "m"})
    assert a == b and len(a) == 64
    assert a != request_key("http://h/v1", "/chat/completions", {"model": "m", "seed": 1})
    assert a != request_key("http://other/v1", "/chat/completions", {"model": "m", "seed": 0})


def test_one_line_per_reply_and_a_fresh_object_per_hit(tmp_path):
    cache = ReplyCache(tmp_path)
    assert cache.get("a" * 64) is None
    cache.put("a" * 64, {"choices": [1]})
    first = cache.get("a" * 64)
    assert first == {"choices": [1]}
    first["choices"].append(2)  # a caller mutating its reply changes no later hit
    assert cache.get("a" * 64) == {"choices": [1]}
    lines = (tmp_path / CACHE_FILE).read_bytes().splitlines()
    assert [json.loads(x)["key"] for x in lines] == ["a" * 64]


def test_a_line_torn_by_a_crash_is_ignored_and_the_next_append_is_whole(tmp_path):
    cache = ReplyCache(tmp_path)
    cache.put("a" * 64, {"n": 1})
    cache.close()
    path = tmp_path / CACHE_FILE
    whole = json.dumps({"key": "b" * 64, "reply": {"n": 2}}).encode()
    with open(path, "ab") as f:  # killed in the middle of writing b's line
        f.write(whole[: len(whole) // 2])
    again = ReplyCache(tmp_path)
    assert again.get("a" * 64) == {"n": 1} and again.get("b" * 64) is None
    again.put("c" * 64, {"n": 3})
    again.close()
    third = ReplyCache(tmp_path)
    assert third.get("c" * 64) == {"n": 3} and third.get("a" * 64) == {"n": 1}
    assert third.get("b" * 64) is None


def test_a_killed_client_loses_no_reply_and_a_resumed_one_asks_nothing_again(server, tmp_path):
    first = client(server, tmp_path)
    answers = [first.chat(ask(i)).text for i in range(5)]
    # No close(): as after SIGKILL, only what reached the kernel counts.
    again = client(server, tmp_path)
    replies = [again.chat(ask(i)) for i in range(5)]
    assert [r.text for r in replies] == answers and all(r.cached for r in replies)
    assert len(server.chat_requests()) == 5


def test_clients_sharing_a_directory_see_each_others_replies(server, tmp_path):
    a, b = client(server, tmp_path), client(server, tmp_path)
    a.chat(ask(0))
    b.chat(ask(1))  # b opened the file after a's first line
    assert a.chat(ask(1)).cached and b.chat(ask(0)).cached
    assert len(server.chat_requests()) == 2


def test_concurrent_threads_keep_every_line_whole(server, tmp_path):
    c = client(server, tmp_path)
    threads = [
        threading.Thread(target=lambda k=k: [c.chat(ask(10 * k + i)) for i in range(10)])
        for k in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = (tmp_path / CACHE_FILE).read_bytes().splitlines()
    assert len(lines) == 40 and all(json.loads(x)["reply"]["choices"] for x in lines)
    fresh = client(server, tmp_path)
    assert all(fresh.chat(ask(n)).cached for n in range(40))


def test_a_cache_written_a_file_per_reply_is_still_read(server, tmp_path):
    key = request_key(
        server.base_url,
        "/chat/completions",
        {"model": server.model, "messages": ask(7), "temperature": 0.0, "seed": 0},
    )
    old = {"choices": [{"message": {"content": "from the old layout"}}]}
    (tmp_path / key[:2]).mkdir()
    (tmp_path / key[:2] / f"{key}.json").write_text(json.dumps(old))
    reply = client(server, tmp_path).chat(ask(7))
    assert reply.cached and reply.text == "from the old layout"
    assert server.chat_requests() == []


def test_the_file_is_indexed_a_chunk_at_a_time(tmp_path, monkeypatch):
    from mnemometer.llm import _cache

    cache = ReplyCache(tmp_path)
    replies = {f"{n:064x}": {"text": "x" * (n * 37 % 300)} for n in range(30)}
    for key, reply in replies.items():
        cache.put(key, reply)
    cache.close()
    monkeypatch.setattr(_cache, "_CHUNK", 50)  # most lines span several chunks
    again = ReplyCache(tmp_path)
    assert {key: again.get(key) for key in replies} == replies


# ---- what is kept (issue 30 §2) -------------------------------------------------------


def _key(srv, n: int) -> str:
    body = {"model": srv.model, "messages": ask(n), "temperature": 0.0, "seed": 0}
    return request_key(srv.base_url, "/chat/completions", body)


@pytest.mark.parametrize("kind", ["empty", "malformed"])
def test_a_reply_the_client_refuses_is_not_cached_and_is_asked_again(server, tmp_path, kind):
    from mnemometer.llm import LLMError

    c = LLMClient(server.base_url, server.model, max_retries=0, cache_dir=tmp_path)
    server.fail_next(1, kind=kind)  # "choices": [], or a body that is not JSON
    with pytest.raises(LLMError):
        c.chat(ask(1))
    assert not (tmp_path / CACHE_FILE).exists() or not (tmp_path / CACHE_FILE).read_bytes()
    reply = c.chat(ask(1))  # the healthy server is asked again, and that reply kept
    assert reply.text == "OK" and not reply.cached
    assert client(server, tmp_path).chat(ask(1)).cached
    assert len(server.chat_requests()) == 2


def test_content_that_is_not_the_json_asked_for_is_not_cached(tmp_path):
    from mnemometer.llm import LLMError

    replies = iter(["not json", '{"answer": 1}'])
    with FakeLLMServer(default=lambda body: next(replies)) as srv:
        c = client(srv, tmp_path)
        schema = {"type": "object"}
        with pytest.raises(LLMError, match="did not return valid JSON"):
            c.chat_json(ask(1), schema)
        assert c.chat_json(ask(1), schema) == {"answer": 1}
        assert client(srv, tmp_path).chat_json(ask(1), schema) == {"answer": 1}
        assert len(srv.chat_requests()) == 2


def test_a_bad_reply_an_older_version_cached_is_asked_again_and_superseded(server, tmp_path):
    ReplyCache(tmp_path).put(_key(server, 3), {"object": "chat.completion", "choices": []})
    reply = client(server, tmp_path).chat(ask(3))
    assert reply.text == "OK" and not reply.cached
    again = client(server, tmp_path).chat(ask(3))  # the good line wins over the bad one
    assert again.cached and again.text == "OK"
    assert len(server.chat_requests()) == 1


def test_embeddings_of_the_wrong_count_are_not_served_from_the_cache(tmp_path):
    with FakeLLMServer(embedding_models=["emb"]) as srv:
        ReplyCache(tmp_path).put(
            request_key(srv.base_url, "/embeddings", {"model": "emb", "input": ["a", "b"]}),
            {"data": [{"index": 0, "embedding": [1.0]}]},  # one vector for two texts
        )
        assert len(LLMClient(srv.base_url, "emb", cache_dir=tmp_path).embed(["a", "b"])) == 2
        assert len(LLMClient(srv.base_url, "emb", cache_dir=tmp_path).embed(["a", "b"])) == 2
        assert srv.paths.count("/v1/embeddings") == 1


def test_a_key_a_server_echoes_never_reaches_the_cache_file(tmp_path, monkeypatch):
    given = "sk-test-0f1e2d3c4b5a69788796a5b4"  # a key this process was given
    foreign = "sk-proj-9a8b7c6d5e4f3a2b1c0d9e8f"  # one it never was (another run's)
    hf = "hf_Zq8vT3mK1pL6wN9rX2cY5bJ4"
    echo = f"key {foreign}, token {hf}, AKIAIOSFODNN7EXAMPLE, and Bearer {given}"
    with FakeLLMServer(default=echo) as srv:
        LLMClient(srv.base_url, srv.model, api_key=given, cache_dir=tmp_path).chat(ask(1))
    data = (tmp_path / CACHE_FILE).read_text()
    for secret in (given, foreign, hf, "AKIAIOSFODNN7EXAMPLE"):
        assert secret not in data
    assert "Bearer ***" in data and data.count("***") == 4
