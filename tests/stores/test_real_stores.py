"""Real memory systems as stores: mem0, chroma, qdrant, lancedb (embedded, offline) and http.

Every system runs for real; the HTTP memory service and the LLM endpoint are real HTTP
servers on 127.0.0.1 started by the tests. Each store is checked by the conformance kit and
runs the retrieval suite from the CLI in a subprocess whose HOME is a fresh directory, which
must stay empty.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import MNEMOMETER

from mnemometer.errors import MissingExtraError, MnemometerError
from mnemometer.stores import create_store
from mnemometer.testing import check_store

needs = {
    "chroma": "chromadb",
    "qdrant": "qdrant_client",
    "lancedb": "lancedb",
    "mem0": "mem0",
}


def _have(module: str) -> bool:
    import importlib.util

    return (
        importlib.util.find_spec(module) is not None
        and importlib.util.find_spec("sentence_transformers") is not None
    )


def _skip_without(name: str) -> None:
    if not _have(needs[name]):
        pytest.skip(f"needs the optional dependency {needs[name]} (see Makefile TEST_EXTRAS)")


def _cli(
    args: list[str], home: Path, env: dict[str, str] | None = None, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMOMETER_", "MEM0_"))}
    e.update(HOME=str(home), **(env or {}))
    return subprocess.run(
        [MNEMOMETER, *args], capture_output=True, text=True, env=e, timeout=timeout
    )


# ---- embedded systems ----------------------------------------------------------------------

STORES = [
    ("chroma", {}),
    ("qdrant", {}),
    ("lancedb", {"mode": "vector"}),
    ("lancedb", {"mode": "fts"}),
    ("lancedb", {"mode": "hybrid"}),
    ("mem0", {}),
]


@pytest.mark.parametrize(("name", "opts"), STORES, ids=lambda x: str(x))
def test_conformance_in_a_run_directory(name: str, opts: dict, tmp_path: Path) -> None:
    _skip_without(name)
    store = create_store(name, opts, lang="en", workdir=tmp_path / "store")
    rep = check_store(store)
    assert rep.ok and not rep.warnings, str(rep)  # no insertion-ordered ties, no duplicates
    assert {"delete", "list_ids"} <= set(rep.capabilities)
    assert any((tmp_path / "store").iterdir())  # its files are in the run directory
    getattr(store, "close", lambda: None)()


@pytest.mark.parametrize("name", ["chroma", "qdrant", "lancedb", "mem0"])
def test_cli_runs_retrieval_offline_leaving_home_untouched(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _skip_without(name)
    home = tmp_path / "home"
    home.mkdir()
    out = tmp_path / "run"
    args = ["run", "retrieval", "-d", "demo-en", "-s", name, "-o", str(out), "--format", "json"]
    if name == "mem0":
        # mem0 writes its config directory at import: prove it in a fresh process.
        res = _cli(args, home)
        assert res.returncode == 0, res.stderr[-2000:]
        stdout = res.stdout
        # Notices a user cannot act on stay out of the output (mem0 logs them per add).
        assert not re.search(r"spacy|fastembed|Loading weights", res.stderr, re.I), res.stderr
    else:
        # In-process (the model is already loaded), with HOME pointed at an empty directory.
        from click.testing import CliRunner

        from mnemometer.cli.main import cli

        monkeypatch.setenv("HOME", str(home))
        res = CliRunner().invoke(cli, args)
        assert res.exit_code == 0, res.output[-2000:]
        stdout = res.stdout
    assert list(home.iterdir()) == []  # nothing in the user's home
    assert any((out / "store").iterdir())  # its files are in the run directory
    report = json.loads(stdout)
    header = report["header"]
    assert header["system"]["name"] == name and header["system"]["options"]["model"]
    overall = {(m["name"], m.get("k")): m["value"] for m in report["summary"]["overall"]}
    assert overall[("hit", 20)] > 0.5  # a real ranking, not noise
    assert report["summary"]["counts"].get("errors", 0) == 0


def test_hybrid_lancedb_search_matches_words_vector_search_misses(tmp_path: Path) -> None:
    _skip_without("lancedb")
    docs = [
        ("a", "Invoice INV-88231 was paid late."),
        ("b", "The bill arrived after the deadline."),
        ("c", "We planted tulips in the garden."),
    ]
    tops = {}
    for mode in ("fts", "vector", "hybrid"):
        s = create_store("lancedb", {"mode": mode}, lang="en", workdir=tmp_path / mode)
        s.store_many([(t, {"memory_id": m}) for m, t in docs])
        tops[mode] = [h.memory_id for h in s.search("INV-88231", 3)]
    assert tops["fts"] == ["a"]  # only the exact token matches
    assert tops["hybrid"][0] == "a"
    assert len(tops["vector"]) == 3  # vector search ranks everything


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "opts", "in_run_dir", "without_run_dir"),
    [
        ("chroma", {}, True, False),
        ("qdrant", {}, True, False),
        ("qdrant", {"in_memory": True}, False, False),
        ("lancedb", {}, True, True),  # no in-memory mode: a temporary directory
    ],
)
def test_where_vector_stores_keep_their_files(
    name: str, opts: dict, in_run_dir: bool, without_run_dir: bool, tmp_path: Path
) -> None:
    _skip_without(name)
    s = create_store(name, opts, workdir=tmp_path)
    s.store("a red fox", {"memory_id": "m1"})
    s.store("a blue whale", {"memory_id": "m2"})
    s.delete("m1")  # flushes first, then forgets every version of m1
    assert [h.memory_id for h in s.search("fox", 5)] == ["m2"] and s.list_ids() == ["m2"]
    assert (s.path == tmp_path / name) is in_run_dir
    assert any(tmp_path.iterdir()) is in_run_dir
    getattr(s, "close", lambda: None)()
    alone = create_store(name, opts)
    assert (alone.path is not None) is without_run_dir
    getattr(alone, "close", lambda: None)()


def test_qdrant_directory_locked_by_another_process(tmp_path: Path) -> None:
    _skip_without("qdrant")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, qdrant_client; c = qdrant_client.QdrantClient(path=sys.argv[1]); "
            "print('ready', flush=True); sys.stdin.read()",
            str(tmp_path / "run" / "store" / "qdrant"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        with pytest.raises(MnemometerError, match="locked by another process"):
            create_store("qdrant", workdir=tmp_path / "run" / "store")
    finally:
        holder.communicate("", timeout=30)


def test_mem0_bad_vector_store_option() -> None:
    _skip_without("mem0")
    with pytest.raises(MnemometerError, match="vector_store must be one of"):
        create_store("mem0", {"vector_store": "pinecone"})


def test_mem0_batched_ingest_keeps_every_memory_and_ranks_as_one_by_one(tmp_path: Path) -> None:
    """store_many (batched embedding, one add per memory) equals store() text by text."""
    _skip_without("mem0")
    facts = ["Ana likes green tea", "Ben drives a red bus", "Ana visited Lisbon", "Cy plays cello"]
    # Three versions per memory, adjacent, as the runner gives them; then a repeated text.
    items = [
        (fact + suffix, {"memory_id": f"m{i}", "timestamp": f"2024-01-0{1 + i}"})
        for i, fact in enumerate(facts)
        for suffix in ("", ".", " (again)")
    ]
    items.append(items[0])
    one = create_store("mem0", {}, workdir=tmp_path / "one")
    for text, meta in items:
        one.store(text, meta)
    many = create_store("mem0", {}, workdir=tmp_path / "many")
    many.store_many(items)
    assert sorted(many.list_ids()) == sorted(one.list_ids()) == ["m0", "m1", "m2", "m3"]
    assert sum(map(len, many._ids.values())) == len(items)  # every version is its own record
    for q in ("who likes tea", "a bus", "Lisbon", "music"):
        a, b = one.search(q, 4), many.search(q, 4)
        assert [h.memory_id for h in a] == [h.memory_id for h in b], q
        assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-4)
    one.close()
    many.close()


def test_missing_extra_names_the_install_command(tmp_path: Path) -> None:
    # A subprocess where the SDK cannot be imported, exactly as on a machine without it.
    code = (
        "import sys; sys.modules['chromadb'] = None\n"
        "from mnemometer.cli.main import main\n"
        "main(['run', 'retrieval', '-d', 'demo-en', '-s', 'chroma', '-o', sys.argv[1]])"
    )
    res = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "r")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2
    assert "pip install 'mnemometer[vector]'" in res.stderr and "Traceback" not in res.stderr


def test_missing_extra_error_type() -> None:
    from mnemometer._registry import require

    with pytest.raises(MissingExtraError, match=r"mnemometer\[mem0\]"):
        require("mem0_not_installed_here", "mem0", "the mem0 store")


# ---- mem0 with infer=True against a real OpenAI-compatible server on 127.0.0.1 -------------


def test_mem0_infer_true_extracts_through_the_llm_endpoint(tmp_path: Path) -> None:
    _skip_without("mem0")
    from mnemometer.testing.llm_server import FakeLLMServer

    def extract(body: dict) -> str:
        # Answer mem0's extraction prompt with the new message, rephrased as a fact.
        prompt = body["messages"][-1]["content"]
        new = re.search(r"## New Messages\s*\nuser: (.*)", prompt)
        return json.dumps({"memory": [{"text": f"Fact: {new.group(1).strip()}"}]})

    with FakeLLMServer(default=extract) as srv:
        store = create_store(
            "mem0",
            {"infer": True, "base_url": srv.base_url, "llm_model": srv.model},
            workdir=tmp_path,
        )
        store.store("Darrin lives in Phoenix.", {"memory_id": "m1"})
        store.store("The budget review moved to Thursday.", {"memory_id": "m2"})
        hits = store.search("Where does Darrin live?", 2)
        assert len(srv.chat_requests()) == 2  # one extraction call per memory
        assert srv.chat_requests()[0]["response_format"]["type"] == "json_object"
    assert hits[0].memory_id == "m1" and hits[0].text == "Fact: Darrin lives in Phoenix."
    store.close()


# ---- http: a real memory service on 127.0.0.1 ------------------------------------------------


class _Service(BaseHTTPRequestHandler):
    """A tiny memory service: word-overlap search, bearer auth, faults on demand."""

    memories: dict[str, str] = {}
    fault: str | None = None
    token = "s3cret"

    def log_message(self, *args: object) -> None:
        pass

    def _reply(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802
        if self.headers.get("Authorization") != f"Bearer {self.token}":
            return self._reply(401, b'{"error": "unauthorised"}')
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"] or 0)) or b"{}")
        svc = type(self)
        if self.path == "/reset":
            svc.memories = {}
            return self._reply(200, b"{}")
        if self.path == "/memories":
            svc.memories[body["id"]] = body["text"]
            return self._reply(201, b'{"ok": true}')
        if self.path == "/search":
            if svc.fault == "500":
                return self._reply(500, b'{"error": "index unavailable"}')
            if svc.fault == "malformed":
                return self._reply(200, b'{"results": [')
            if svc.fault == "shape":
                return self._reply(200, b'{"results": [{"unexpected": 1}]}')
            words = set(re.findall(r"\w+", body["query"].lower()))
            scored = sorted(
                (
                    (len(words & set(re.findall(r"\w+", t.lower()))), mid, t)
                    for mid, t in svc.memories.items()
                ),
                key=lambda x: (-x[0], x[1]),
            )
            hits = [
                {"metadata": {"memory_id": mid}, "score": s, "memory": t}
                for s, mid, t in scored
                if s > 0
            ][: int(body["limit"])]
            return self._reply(200, json.dumps({"results": hits}).encode())
        return self._reply(404, b"{}")


@pytest.fixture
def service(tmp_path: Path):
    _Service.memories, _Service.fault = {}, None
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Service)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    cfg = tmp_path / "memsvc.toml"
    cfg.write_text(f"""
base_url = "http://127.0.0.1:{srv.server_address[1]}"
timeout = 5
auth_env = "MEMSVC_TOKEN"

[reset]
path = "/reset"

[store]
path = "/memories"
body = {{ text = "{{text}}", id = "{{memory_id}}" }}

[search]
path = "/search"
body = {{ query = "{{query}}", limit = "{{top_k}}" }}
results = "results"
id = "metadata.memory_id"
score = "score"
text = "memory"
""")
    yield cfg
    srv.shutdown()
    srv.server_close()


def _run_over_http(
    service: Path, out: Path, fmt: str, home: Path, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    """`mnemometer run retrieval` on demo-en against the fake service, its token set."""
    args = ["run", "retrieval", "-d", "demo-en", "-s", "http", "-S", f"config={service}"]
    args += ["-o", str(out), "--format", fmt]
    return _cli(args, home, {"MEMSVC_TOKEN": _Service.token}, timeout)


def test_http_store_conformance(service: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSVC_TOKEN", _Service.token)
    rep = check_store(create_store("http", {"config": str(service)}))
    assert rep.ok, str(rep)


def test_http_store_runs_retrieval_from_the_cli(service: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    res = _run_over_http(service, tmp_path / "run", "json", home)
    assert res.returncode == 0, res.stderr[-2000:]
    report = json.loads(res.stdout)
    assert _Service.token not in res.stdout  # the secret never reaches the log
    overall = {(m["name"], m.get("k")): m["value"] for m in report["summary"]["overall"]}
    assert overall[("hit", 20)] > 0.3
    assert list(home.iterdir()) == []


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        # The server's own error message, unwrapped from its JSON body.
        ("500", "/search: HTTP 500: index unavailable"),
        ("malformed", "/search: malformed JSON reply (HTTP 200, application/json)"),
        ("shape", "does not match the mapping"),
    ],
)
def test_http_errors_are_recorded_per_item(
    fault: str, message: str, service: Path, tmp_path: Path
) -> None:
    _Service.fault = fault
    out = tmp_path / "run"
    res = _run_over_http(service, out, "none", tmp_path, timeout=120)
    assert res.returncode == 1, res.stderr[-2000:]  # items failed, recorded; not a crash
    items = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    assert items and all(r["status"] == "error" and message in r["error"] for r in items)


def test_http_timeout_does_not_hang(tmp_path: Path) -> None:
    import socket

    quiet = socket.socket()  # accepts connections, never answers
    quiet.bind(("127.0.0.1", 0))
    quiet.listen()
    cfg = tmp_path / "slow.json"
    cfg.write_text(
        json.dumps(
            {
                "base_url": f"http://127.0.0.1:{quiet.getsockname()[1]}",
                "timeout": 0.5,
                "store": {"path": "/m", "body": {"t": "{text}"}},
                "search": {"path": "/s", "body": {"q": "{query}"}},
            }
        )
    )
    store = create_store("http", {"config": str(cfg)})
    with pytest.raises(MnemometerError, match="timed out after 0.5 s"):
        store.search("anything", 5)
    quiet.close()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "svc.json:1:1: malformed JSON"),
        ('{"base_url": "http://x", "store": {"path": "/m"}}', "missing key 'search'"),
        (
            '{"base_url": "http://x", "store": {"path": "/m"}, "search": {"path": "/s"}, "extra": 1}',
            "unknown key 'extra'",
        ),
    ],
)
def test_http_bad_config_file(content: str, message: str, tmp_path: Path) -> None:
    cfg = tmp_path / "svc.json"
    cfg.write_text(content)
    with pytest.raises(MnemometerError, match=message):
        create_store("http", {"config": str(cfg)})


def test_http_missing_auth_env_and_missing_file(
    service: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMSVC_TOKEN", raising=False)
    with pytest.raises(MnemometerError, match="MEMSVC_TOKEN, which is not set"):
        create_store("http", {"config": str(service)})
    res = _cli(
        [
            "run",
            "retrieval",
            "-d",
            "demo-en",
            "-s",
            "http",
            "-S",
            f"config={tmp_path / 'nope.toml'}",
            "-o",
            str(tmp_path / "r"),
        ],
        tmp_path,
    )
    assert res.returncode == 2 and "no such http store config" in res.stderr
    assert "Traceback" not in res.stderr


def test_mem0_infer_true_with_a_providers_model_extracts_through_its_protocol(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``llm_model=anthropic/...`` (the [providers] extra): mem0 speaks OpenAI to a relay on
    127.0.0.1 that asks the model in Anthropic's Messages protocol."""
    _skip_without("mem0")
    if importlib.util.find_spec("litellm") is None:
        pytest.skip("needs pip install 'mnemometer[providers]'")
    from mnemometer.testing import AnthropicServer

    def extract(body: dict) -> str:
        prompt = body["messages"][-1]["content"]  # the stand-in reads it as OpenAI's shape
        new = re.search(r"## New Messages\s*\nuser: (.*)", prompt)
        return json.dumps({"memory": [{"text": f"Fact: {new.group(1).strip()}"}]})

    key = "sk-ant-test-0123456789abcdef"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    with AnthropicServer(default=extract, models=["claude-haiku-4-5"], api_key=key) as srv:
        opts = {"infer": True, "base_url": srv.url, "llm_model": "anthropic/claude-haiku-4-5"}
        store = create_store("mem0", opts, workdir=tmp_path)
        try:
            store.store("Darrin lives in Phoenix.", {"memory_id": "m1"})
            store.store("The budget review moved to Thursday.", {"memory_id": "m2"})
            hits = store.search("Where does Darrin live?", 2)
            assert srv.paths == ["/v1/messages", "/v1/messages"]  # one call per memory
        finally:
            store.close()
    assert hits[0].memory_id == "m1" and hits[0].text == "Fact: Darrin lives in Phoenix."
