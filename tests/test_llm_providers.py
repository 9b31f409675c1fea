"""Any provider (issue 31 §5): ``PROVIDER/MODEL`` through LiteLLM, sent by our HTTP layer.

Real local servers speak each protocol: Anthropic's Messages API (:class:`AnthropicServer`)
and the OpenAI-compatible test server (LiteLLM's ``hosted_vllm`` provider). The client's
accounting, cache, scrubbing and errors are the OpenAI path's.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from benchmark_helpers import locomo_cli, small_locomo
from build_helpers import EN_FILES, extraction_reply, write_corpus
from conftest import invoke_cli
from faultproxy import FaultProxy

from mnemometer.comparison._pairs import components
from mnemometer.datasets import load_dataset
from mnemometer.errors import MissingExtraError
from mnemometer.llm import (
    LLMClient,
    LLMError,
    LLMSettings,
    find_settings,
    require_settings,
    resolve_settings,
)
from mnemometer.llm._providers import PROVIDERS, no_endpoint, provider_of
from mnemometer.log import read_header, read_items
from mnemometer.scoring.benchmark.answers import judge_target
from mnemometer.scoring.judges import resolve_judges
from mnemometer.testing import AnthropicServer, FakeLLMServer
from mnemometer.testing._bench import benchmark_reply
from mnemometer.testing.llm_server import echo_memories

KEY = "sk-ant-test-5ecret0key1234567890"
CLAUDE = "claude-haiku-4-5"
USER = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Which city?"}]
JSON = re.compile(r"^json")
ASK_JSON = [{"role": "user", "content": "json: which city?"}]
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def _litellm():
    """LiteLLM imported as the client imports it (offline switches first), or a skip."""
    from mnemometer.llm._litellm import load_litellm

    try:
        return load_litellm()
    except MissingExtraError:
        pytest.skip("the [providers] extra is not installed")


@pytest.fixture
def anthropic():
    _litellm()
    models = [CLAUDE, "claude-3-5-haiku-20241022"]
    rules = [(JSON, '{"city": "Phoenix"}'), ("city", "Phoenix")]
    with AnthropicServer(rules=rules, models=models, api_key=KEY) as srv:
        yield srv


def claude(srv: AnthropicServer, model: str = CLAUDE, key: str = KEY, **kw) -> LLMClient:
    kw.setdefault("backoff", 0.001)
    return LLMClient(srv.url, f"anthropic/{model}", key, **kw)


def test_which_models_go_through_litellm():
    assert provider_of("anthropic/claude-haiku-4-5") == "anthropic"
    assert provider_of("vllm/Qwen/Qwen2.5-0.5B") == "hosted_vllm"  # a vLLM server
    # The core's names: OpenAI-compatible servers' ids, slashes and all.
    for name in ("smollm2", "Qwen/Qwen2.5-0.5B-Instruct", "openai/gpt-oss-20b", "anthropic/"):
        assert provider_of(name) is None
    assert "did you mean 'anthropic'" in no_endpoint("antropic/claude", "no endpoint")
    assert no_endpoint("smollm2", "no endpoint") == "no endpoint"


def test_the_provider_names_are_litellms_own():
    assert set(_litellm().provider_list) >= PROVIDERS


def test_a_providers_model_needs_no_base_url(monkeypatch):
    monkeypatch.delenv("MNEMOMETER_LLM_BASE_URL", raising=False)
    s = find_settings(model="anthropic/claude-haiku-4-5")
    assert s is not None and s.base_url == "" and s.provider == "anthropic"
    assert s.redacted()["provider"] == "anthropic"
    assert "provider" not in find_settings("http://x/v1", "smollm2").redacted()  # type: ignore[union-attr]
    assert find_settings(model="Qwen/Qwen2.5") is None  # no endpoint for it: as before
    with pytest.raises(LLMError, match="unknown LLM provider 'antropic'.*did you mean"):
        resolve_settings(model="antropic/claude-haiku-4-5")
    with pytest.raises(LLMError, match="unknown LLM provider 'gemnii'"):
        require_settings(None, model="gemnii/gemini-2.5-flash")
    with pytest.raises(LLMError, match="no LLM endpoint"):  # an embedding model of its own
        require_settings(s, model="text-embedding-3-small")


def test_chat_through_the_messages_api_counts_the_providers_tokens(anthropic):
    c = claude(anthropic)
    reply = c.chat(USER, max_tokens=16)
    assert reply.text == "Phoenix" and not reply.cached
    body = anthropic.requests[-1]  # what went over the wire: Anthropic's shape
    assert body["model"] == CLAUDE and body["max_tokens"] == 16 and "seed" not in body
    assert body["system"][0]["text"] == "Be brief." and body["messages"][0]["role"] == "user"
    usage = anthropic.log[-1]["response"]["usage"]
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (
        usage["input_tokens"],
        usage["output_tokens"],
    )
    assert c.usage.calls == 1 and c.usage.total_tokens == usage["input_tokens"] + 1
    c.check()  # one token, asked for the key, the model and the endpoint; not counted
    assert anthropic.requests[-1]["max_tokens"] == 1 and c.usage.calls == 1


@pytest.mark.parametrize("model", [CLAUDE, "claude-3-5-haiku-20241022"])
def test_chat_json_by_output_format_or_a_forced_tool(anthropic, model):
    assert claude(anthropic, model).chat_json(ASK_JSON, SCHEMA) == {"city": "Phoenix"}
    body = anthropic.requests[-1]
    assert ("output_format" in body) != ("tools" in body)  # newer models: output_format


def test_the_cache_answers_a_second_time_and_keeps_no_key(anthropic, tmp_path: Path):
    anthropic.add_rule("echo", f"the key is {KEY}")  # a careless server echoes it
    with claude(anthropic, cache_dir=tmp_path) as c:
        first = c.chat([{"role": "user", "content": "echo"}])
    with claude(anthropic, cache_dir=tmp_path) as c:
        again = c.chat([{"role": "user", "content": "echo"}])
        assert again.cached and c.usage.cached_calls == 1
    assert first.text == f"the key is {KEY}" and again.text == "the key is ***"  # as kept
    assert len(anthropic.requests) == 1
    assert KEY not in (tmp_path / "replies.jsonl").read_text()


def test_retries_go_through_the_http_layer(anthropic):
    anthropic.fail_next(2, status=529)  # Anthropic's "overloaded"
    assert claude(anthropic).chat(USER).text == "Phoenix"
    assert len(anthropic.requests) == 3


def test_errors_are_the_openai_paths(anthropic):
    with pytest.raises(LLMError, match=r"API key was rejected \(HTTP 401.*ANTHROPIC_API_KEY"):
        claude(anthropic, key="wrong-key-0123456789").chat(USER)
    with pytest.raises(LLMError, match="model 'anthropic/claude-nope' not found"):
        claude(anthropic, "claude-nope").chat(USER)
    dead = LLMClient("http://127.0.0.1:9", f"anthropic/{CLAUDE}", KEY, max_retries=1, backoff=0)
    with pytest.raises(LLMError, match=r"cannot reach the LLM endpoint http://127.0.0.1:9 after 2"):
        dead.chat(USER)
    with pytest.raises(LLMError, match="unknown LLM provider 'antropic'"):
        LLMClient("", "antropic/claude-haiku-4-5")
    # check() says the same before a run, and waits for a server still starting
    with pytest.raises(LLMError, match=r"API key was rejected \(HTTP 401"):
        claude(anthropic, key="wrong-key-0123456789").check()
    with pytest.raises(LLMError, match=r"cannot reach .* \(waited 0.2 s for it to start\)"):
        dead.check(startup_wait=0.2)


def test_the_openai_protocol_through_litellm_hosted_vllm():
    _litellm()
    rules = [(JSON, '{"city": "Phoenix"}'), ("city", "Phoenix")]
    with FakeLLMServer(rules=rules, models=["Qwen/Qwen2.5-0.5B"]) as srv:
        c = LLMClient(srv.base_url, "vllm/Qwen/Qwen2.5-0.5B", backoff=0.001)
        reply = c.chat(USER, max_tokens=8)
        assert reply.text == "Phoenix" and srv.chat_requests()[-1]["model"] == "Qwen/Qwen2.5-0.5B"
        assert reply.usage.total_tokens == srv.log[-1]["response"]["usage"]["total_tokens"]
        assert c.chat_json(ASK_JSON, SCHEMA) == {"city": "Phoenix"}
        assert srv.chat_requests()[-1]["response_format"]["type"] == "json_schema"


_BLOCK_LITELLM = """
import importlib.abc, sys
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "litellm":
            raise ModuleNotFoundError(name)
sys.meta_path.insert(0, Blocker())
"""


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_the_core_path_never_imports_litellm_and_a_provider_names_the_extra():
    p = _python(
        "import sys\n"
        "from mnemometer.testing import FakeLLMServer\n"
        "from mnemometer.llm import LLMClient\n"
        "with FakeLLMServer() as srv:\n"
        "    LLMClient(srv.base_url, srv.model).chat([{'role': 'user', 'content': 'hi'}])\n"
        "print('litellm' in sys.modules)\n"
    )
    assert p.returncode == 0 and p.stdout.strip() == "False", p.stderr
    p = _python(
        _BLOCK_LITELLM + "from mnemometer.llm import LLMClient\n"
        "try:\n    LLMClient('', 'anthropic/claude-haiku-4-5')\n"
        "except Exception as e:\n    print(type(e).__name__, e)\n"
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(MissingExtraError.__name__)
    assert "pip install 'mnemometer[providers]'" in p.stdout


# ---- a run through the command line ---------------------------------------------------


def _tokens(run: Path) -> list[tuple[str, dict]]:
    return [(r.step or r.item_id, r.tokens) for r in read_items(run)]


def test_a_locomo_run_counts_the_same_tokens_through_either_protocol(tmp_path: Path):
    """The same rules answer in both protocols (words counted alike), so every question's
    tokens, reader and judge, are equal; the header names the provider, compare tells the
    two readers apart."""
    _litellm()
    data = small_locomo(tmp_path / "locomo.json", conversations=2, questions=3)
    runs = {}
    with (
        AnthropicServer(default=benchmark_reply, models=[CLAUDE], api_key=KEY) as ant,
        FakeLLMServer(default=benchmark_reply, api_key=KEY) as oai,
    ):
        for name, url, model in (
            ("anthropic", ant.url, f"anthropic/{CLAUDE}"),
            ("openai", oai.base_url, oai.model),
        ):
            runs[name] = tmp_path / name
            argv = locomo_cli(data, url, runs[name], "--judge", "lenient", "--llm-api-key", KEY)
            argv[argv.index("fake-llm")] = model
            r = invoke_cli(*argv)
            assert r.exit_code == 0, r.output
    anthropic, openai = (read_header(runs[n]) for n in ("anthropic", "openai"))
    assert anthropic.llm and anthropic.llm["provider"] == "anthropic"
    assert anthropic.llm["api_key"] == "***" and "provider" not in (openai.llm or {})
    tokens = _tokens(runs["anthropic"])
    assert len(tokens) == 6 and all(t["reader_prompt"] and t["judge_prompt"] for _, t in tokens)
    assert tokens == _tokens(runs["openai"])
    reader = components(anthropic)["reader"]
    assert reader["provider"] == "anthropic" and reader != components(openai)["reader"]
    board = invoke_cli("leaderboard", runs["anthropic"], runs["openai"], "--format", "text")
    assert board.exit_code == 0, board.output
    assert f"anthropic/{CLAUDE}" in board.output and "fake-llm" in board.output  # two columns
    assert KEY not in "".join(p.read_text() for p in runs["anthropic"].rglob("*.json*"))


def test_a_dead_provider_stops_the_run_with_75_and_a_resume_finishes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """As the OpenAI path does (tests/reliability/test_endpoints.py): the stand-in goes down
    after five answers; the run says so in one line and exits 75; a resume, given only the
    key (the provider, model and endpoint are recorded), finishes it."""
    _litellm()
    data = small_locomo(tmp_path / "locomo.json", conversations=4, questions=3)
    run = tmp_path / "run"
    answered = []

    def reader(body: dict) -> str:
        answered.append(1)
        if len(answered) == 5:
            proxy.down = True
        return benchmark_reply(body)

    monkeypatch.setenv("MNEMOMETER_LLM_API_KEY", KEY)
    with (
        AnthropicServer(default=reader, models=[CLAUDE], api_key=KEY) as srv,
        FaultProxy(srv.url) as proxy,
    ):
        argv = locomo_cli(data, proxy.url, run)
        argv[argv.index("fake-llm")] = f"anthropic/{CLAUDE}"
        r = invoke_cli(*argv)
        assert r.exit_code == 75, r.output
        stops = [ln for ln in r.output.splitlines() if ln.startswith("stopped: ")]
        assert len(stops) == 1 and f"{proxy.url} is down (5 connection failures" in stops[0]
        proxy.down = False
        again = invoke_cli("run", "--resume", run, "--format", "none")
        assert again.exit_code == 0, again.output
    items = read_items(run)
    assert len(items) == 12 and all(r.status == "ok" and r.output for r in items)


def test_a_bad_key_or_an_unknown_provider_is_one_line_and_exit_2(tmp_path: Path):
    _litellm()
    data = small_locomo(tmp_path / "locomo.json", conversations=1, questions=1)
    with AnthropicServer(models=[CLAUDE], api_key=KEY) as srv:
        argv = locomo_cli(data, srv.url, tmp_path / "bad", "--llm-api-key", "wrong-0123456789")
        argv[argv.index("fake-llm")] = f"anthropic/{CLAUDE}"
        r = invoke_cli(*argv)
    assert r.exit_code == 2 and "the API key was rejected (HTTP 401" in r.output
    assert len(r.output.strip().splitlines()) == 1
    r = invoke_cli("build", data.parent, "-o", tmp_path / "b.json", "--llm-model", "antropic/x")
    assert r.exit_code == 2 and r.output.startswith("error: unknown LLM provider 'antropic'")


def test_build_through_the_messages_api_makes_the_openai_paths_dataset(tmp_path: Path):
    """``mnemometer build`` with a provider's model: the same facts, so the same dataset
    (content hash) as the OpenAI path's, with its tokens counted and its replies cached."""
    _litellm()
    corpus = write_corpus(tmp_path / "corpus", EN_FILES)
    hashes = []
    with (
        AnthropicServer(default=extraction_reply, models=[CLAUDE], api_key=KEY) as ant,
        FakeLLMServer(default=extraction_reply, api_key=KEY) as oai,
    ):
        for url, model in ((ant.url, f"anthropic/{CLAUDE}"), (oai.base_url, oai.model)):
            out = tmp_path / f"{model.replace('/', '-')}.json"
            llm = ["--llm-base-url", url, "--llm-model", model, "--llm-api-key", KEY]
            llm += ["--llm-cache", tmp_path / "cache"]  # one for both: keyed on the request
            r = invoke_cli("build", corpus, "-o", out, "--lang", "en", *llm)
            assert r.exit_code == 0, r.output
            assert re.search(r"tokens [1-9]\d* prompt \+ [1-9]\d* completion", r.output)
            hashes.append(load_dataset(out).info.content_hash)
        asked = len(ant.requests)
        again = tmp_path / "again.json"
        llm = ["--llm-base-url", ant.url, "--llm-model", f"anthropic/{CLAUDE}", "--llm-api-key"]
        llm += [KEY, "--llm-cache", tmp_path / "cache"]
        r = invoke_cli("build", corpus, "-o", again, "--lang", "en", *llm)
        assert r.exit_code == 0 and len(ant.requests) == asked  # nothing asked twice
    assert hashes[0] == hashes[1]
    assert all(b.get("output_format") for b in ant.requests)  # the schema, as Anthropic's


def test_a_judge_of_another_provider_asks_that_providers_endpoint():
    local = LLMSettings("http://127.0.0.1:8080/v1", "smollm2")
    (claude_judge,) = resolve_judges([f"lenient@anthropic/{CLAUDE}"])
    (plain,) = resolve_judges(["lenient"])
    assert judge_target(claude_judge, None, {}, local) == (f"anthropic/{CLAUDE}", "")
    assert judge_target(plain, f"gemini/{CLAUDE}", {}, local) == (f"gemini/{CLAUDE}", "")
    assert judge_target(plain, None, {}, local) == ("smollm2", local.base_url)
    url = "http://127.0.0.1:9"  # --judge-endpoint wins; a reader of the same provider shares
    assert judge_target(claude_judge, None, {f"anthropic/{CLAUDE}": url}, local)[1] == url
    same = LLMSettings(url, "anthropic/claude-sonnet-4-5")
    assert judge_target(claude_judge, None, {}, same)[1] == url


def test_every_request_goes_through_our_http_layer(anthropic, monkeypatch):
    """LiteLLM translates and never sends: each request, chat or embeddings, is one
    ``HttpClient.request_json`` call (so retries, the run's outage verdict, deadlines)."""
    from mnemometer.http import HttpClient

    sent: list[str] = []
    real = HttpClient.request_json

    def spy(self, method, path, **kw):
        sent.append(f"{method} {self.base_url}{path}")
        return real(self, method, path, **kw)

    monkeypatch.setattr(HttpClient, "request_json", spy)
    claude(anthropic).chat(USER)
    assert sent == [f"POST {anthropic.url}/v1/messages"]
    with FakeLLMServer(embedding_models=["minilm"]) as srv:
        vectors = LLMClient(srv.base_url, "vllm/minilm").embed(["a text", "another"])
        direct = LLMClient(srv.base_url, "minilm").embed(["a text", "another"])
        assert vectors == direct and sent[1] == f"POST http://127.0.0.1:{srv.port}/v1/embeddings"


def test_the_rag_agent_answers_through_the_messages_api(tmp_path: Path):
    """Scenarios with the rag agent: the same replies and tokens as through the OpenAI
    protocol, and the agent's resolved endpoint names the provider."""
    _litellm()
    runs = {}
    with (
        AnthropicServer(default=echo_memories, models=[CLAUDE], api_key=KEY) as ant,
        FakeLLMServer(default=echo_memories, api_key=KEY) as oai,
    ):
        for name, url, model in (
            ("anthropic", ant.url, f"anthropic/{CLAUDE}"),
            ("openai", oai.base_url, oai.model),
        ):
            runs[name] = tmp_path / name
            llm = ["--llm-base-url", url, "--llm-model", model, "--llm-api-key", KEY]
            argv = ["run", "scenarios", "--agent", "rag", "--store", "bm25", *llm]
            r = invoke_cli(*argv, "--out", runs[name], "--format", "none", "--limit", "3")
            assert r.exit_code == 0, r.output

    def seen(run: Path) -> list:
        return [(i.status, i.output, i.tokens) for i in read_items(run)]

    assert seen(runs["anthropic"]) == seen(runs["openai"]) and len(seen(runs["openai"])) == 3
    resolved = read_header(runs["anthropic"]).system.options["resolved"]["llm"]
    assert resolved["provider"] == "anthropic" and resolved["api_key"] == "***"


def test_no_key_anywhere_is_one_line_before_anything_is_sent(anthropic, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(LLMError) as e:
        LLMClient(anthropic.url, f"anthropic/{CLAUDE}").check()
    assert "Missing Anthropic API Key" in str(e.value) and "\n" not in str(e.value)
    assert str(e.value).endswith("(pass --llm-api-key, or set ANTHROPIC_API_KEY)")
    assert anthropic.requests == []


def test_an_abandoned_items_call_is_cancelled_not_an_llm_error(anthropic):
    """The HTTP layer's deadline stops a provider's call as it stops the OpenAI path's:
    ``Cancelled`` comes out of LiteLLM as it is, and nothing is sent."""
    from mnemometer import deadline

    budget = deadline.Deadline.after(None, "item q1")
    budget.cancel()
    with deadline.bound(budget), pytest.raises(deadline.Cancelled, match="item q1"):
        claude(anthropic).chat(USER)
    assert anthropic.requests == []


def test_openais_key_from_the_environment_is_never_sent_to_another_provider(anthropic, monkeypatch):
    """``OPENAI_API_KEY`` fills ``MNEMOMETER_LLM_API_KEY`` (envfile's aliases): a provider's
    model does not take it, and LiteLLM reads the provider's own variable instead."""
    from mnemometer.envfile import apply_aliases

    openai_key = "sk-openai-0123456789abcdefXYZ"
    monkeypatch.delenv("MNEMOMETER_LLM_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", openai_key)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    env = dict(os.environ)
    apply_aliases(env)  # what the command line does at start-up
    monkeypatch.setenv("MNEMOMETER_LLM_API_KEY", env["MNEMOMETER_LLM_API_KEY"])
    s = find_settings(anthropic.url, f"anthropic/{CLAUDE}")
    assert s is not None and s.api_key is None
    assert LLMClient.from_settings(s).chat(USER).text == "Phoenix"
    assert find_settings(anthropic.url, "smollm2").api_key == openai_key  # type: ignore[union-attr]
    explicit = find_settings(anthropic.url, f"anthropic/{CLAUDE}", api_key=openai_key)
    assert explicit is not None and explicit.api_key == openai_key  # a flag is a flag
