"""MemoryAgentBench: the reader on files written in its exact shape, its metrics, a real run.

The data is on the Hugging Face hub only (``ai-hyz/MemoryAgentBench``); the files in
``tests/data/memoryagentbench/`` are hand-written rows in its format, one per split. The
end-to-end run uses real bm25 and the deterministic test LLM server on 127.0.0.1 as reader.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from conftest import REPO, invoke_cli

import mnemometer
from mnemometer.datasets import load_dataset
from mnemometer.datasets._memoryagentbench import CHUNK_WORDS, chunk
from mnemometer.errors import DatasetError
from mnemometer.llm import resolve_settings
from mnemometer.log import read_log
from mnemometer.runner import RunSettings
from mnemometer.scoring import memoryagentbench as mab
from mnemometer.testing import FakeLLMServer
from mnemometer.testing._bench import benchmark_reply

DATA = REPO / "tests" / "data" / "memoryagentbench"
SPLITS = {
    "Accurate_Retrieval": "AR",
    "Test_Time_Learning": "TTL",
    "Long_Range_Understanding": "LRU",
    "Conflict_Resolution": "CR",
}


@pytest.fixture
def server():
    with FakeLLMServer(default=benchmark_reply) as srv:
        yield srv


# ---- metrics -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("metric", "prediction", "answers", "value"),
    [
        # normalisation: case, punctuation and a/an/the go; "and" stays (unlike LoCoMo's)
        ("substring_exact_match", "It is in France.", ["france"], 1.0),
        ("substring_exact_match", "The answer: Tarrow!", ["Esk", "tarrow"], 1.0),
        ("substring_exact_match", "Fran", ["France"], 0.0),  # gold in prediction, not back
        ("exact_match", "The Heir.", ["the heir"], 1.0),
        ("exact_match", "the heir lied", ["the heir"], 0.0),
        ("exact_match", "salt and pepper", ["salt pepper"], 0.0),
        ("f1", "silver key", ["the silver key"], 1.0),
        ("f1", "a silver door key", ["silver key"], 0.8),  # P 2/3, R 1
        ("f1", "nothing", ["silver key"], 0.0),
        ("f1", "Esk", ["Tarrow", "esk"], 1.0),  # best over the gold answers
        # the text after "Answer:" / "label:" is a second candidate, as upstream parses it
        ("exact_match", "The facts say so.\nAnswer: Tarrow", ["tarrow"], 1.0),
        ("exact_match", "my card was declined\nlabel: 12", ["12"], 1.0),
        ("exact_match", "label: 3\nlabel: 12", ["3"], 0.0),  # the last one counts
        ("f1", "Answer: silver key", ["silver key"], 1.0),
    ],
)
def test_metrics_follow_the_benchmarks_rules(metric, prediction, answers, value) -> None:
    assert mab.METRICS[metric](prediction, answers) == pytest.approx(value)


def test_official_metric_by_source() -> None:
    assert mab.official_metric("ruler_qa1_197K") == "substring_exact_match"
    assert mab.official_metric("factconsolidation_mh_32k") == "substring_exact_match"
    assert mab.official_metric("icl_banking77_5900shot_balance") == "exact_match"
    assert mab.official_metric("detective_qa") == "exact_match"
    assert mab.official_metric("recsys_redial_full") == "recall@5"


def test_recall_at_5_cannot_be_gamed_by_long_lists_or_repeats() -> None:
    gold = ["Harbor of Glass", "Seven Lanterns"]
    assert mab.recall_at_5("1. Harbor of Glass\n2. Quiet Comet\n3. Seven Lanterns", gold) == 1.0
    assert mab.recall_at_5("Harbor of Glass, Quiet Comet", gold) == 0.5
    # only the first five items count: listing the whole catalogue does not help
    catalogue = [f"Film {i}" for i in range(50)] + gold
    assert mab.recall_at_5("\n".join(catalogue), gold) == 0.0
    # repeating a hit does not push the others out of the five, nor count twice
    assert mab.recall_at_5("Harbor of Glass\n" * 9, gold) == 0.5


def test_exact_match_is_not_fooled_by_listing_every_label() -> None:
    # substring match would credit a list of every label; the TTL metric does not
    assert mab.substring_exact_match("3, 7, 12", ["12"]) == 1.0
    assert mab.exact_match("3, 7, 12", ["12"]) == 0.0


# ---- the reader --------------------------------------------------------------------------


@pytest.mark.parametrize("split", list(SPLITS))
def test_each_split_reads_as_chunked_conversations(split) -> None:
    path = DATA / f"{split}.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    ds = load_dataset(path)  # sniffed, not told
    assert ds.info.source == f"MemoryAgentBench: {path.name}"
    assert len(ds.conversations) == len(rows)
    assert len(ds.queries) == sum(len(r["questions"]) for r in rows)
    for conv, row in zip(ds.conversations, rows, strict=True):
        turns = conv.sessions[0].turns
        assert all(len(t.text.split()) <= CHUNK_WORDS for t in turns)
        # nothing of the context is lost or reordered by chunking
        assert " ".join(t.text for t in turns).split() == row["context"].split()
    for q in ds.queries:
        assert q.metadata["competency"] == SPLITS[split]
        assert q.answer == q.metadata["answers"][0]
    first = rows[0]
    q0 = ds.queries[0]
    assert q0.id == first["metadata"]["qa_pair_ids"][0] and q0.type == first["metadata"]["source"]
    assert q0.metadata["answers"] == first["answers"][0]


def test_long_contexts_are_cut_and_the_ruler_row_spans_several_chunks() -> None:
    ds = load_dataset(DATA / "Accurate_Retrieval.jsonl")
    assert len(ds.conversations[0].sessions[0].turns) >= 2
    assert chunk("one two three four five", words=2) == ["one two", "three four", "five"]
    assert chunk("a b\nc d\ne", words=4) == ["a b c d", "e"]


def test_parquet_as_the_hub_ships_it(tmp_path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rows = [json.loads(x) for x in (DATA / "Conflict_Resolution.jsonl").read_text().splitlines()]
    path = tmp_path / "Conflict_Resolution-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    got = load_dataset(path)
    want = load_dataset(DATA / "Conflict_Resolution.jsonl")
    assert [q.model_dump() for q in got.queries] == [q.model_dump() for q in want.queries]
    assert got.conversations[0].sessions == want.conversations[0].sessions


def test_bad_rows_name_the_row_and_key(tmp_path) -> None:
    row = json.loads((DATA / "Conflict_Resolution.jsonl").read_text().splitlines()[0])
    row["answers"] = row["answers"][:2]
    bad = tmp_path / "Conflict_Resolution.jsonl"
    bad.write_text(json.dumps(row) + "\n")
    with pytest.raises(DatasetError, match=r"line 1: 3 questions but 2 answers"):
        load_dataset(bad, format="memoryagentbench")
    r = invoke_cli(
        "run", "memoryagentbench", "--dataset", bad, "--store", "bm25", "-o", tmp_path / "r"
    )
    assert r.exit_code == 2 and "3 questions but 2 answers" in r.output
    assert "Traceback" not in r.output


# ---- runs --------------------------------------------------------------------------------


def _run(srv, path: Path, out: Path, system: str = "bm25"):
    settings = RunSettings(llm=resolve_settings(srv.base_url, srv.model))
    opts = {"dataset": str(path)}
    return mnemometer.run(
        "memoryagentbench", system, suite_options=opts, out=out, settings=settings
    )


def _scores(path: Path) -> dict[str, float]:
    items = read_log(path).items
    return {r.step: next(m.value for m in r.metrics if m.name == "score") for r in items}


def test_cli_runs_every_split_end_to_end_with_bm25(server, tmp_path) -> None:
    for split, code in SPLITS.items():
        out = tmp_path / split
        r = invoke_cli(
            "run",
            "memoryagentbench",
            "--dataset",
            DATA / f"{split}.jsonl",
            "--store",
            "bm25",
            "--llm-base-url",
            server.base_url,
            "--llm-model",
            server.model,
            "--out",
            out,
        )
        assert r.exit_code == 0, r.output
        log = read_log(out)
        assert log.summary.counts["errors"] == 0
        names = {m.name for m in log.summary.overall}
        assert {"score", "substring_exact_match", "f1"} <= names
        section = log.summary.sections["competency"]
        assert list(section) == [code]
        by_source = log.summary.table("categories")
        assert by_source.columns[2] == "score [95% CI]"
        assert [r[0] for r in log.summary.table("competency").rows] == [code]
    # the deterministic reader echoes what was retrieved: bm25 finds the AR answers, though
    # the reader's 64-token cap cuts some echoes before the answer (and the run says so)
    ar = read_log(tmp_path / "Accurate_Retrieval").summary
    assert next(m.value for m in ar.overall if m.name == "score") > 0.5
    assert any(n.startswith("VERBOSE ANSWERS") for n in ar.notes)


def test_a_store_that_keeps_nothing_scores_nothing(server, tmp_path) -> None:
    path = DATA / "Accurate_Retrieval.jsonl"
    kept = _run(server, path, tmp_path / "bm25")
    empty = _run(server, path, tmp_path / "none", system="none")
    assert all(v == 0.0 for v in _scores(empty.path).values())
    assert sum(_scores(kept.path).values()) > 0
    assert all(r.success is False for r in read_log(empty.path).items)


def test_row_order_does_not_change_any_score(server, tmp_path) -> None:
    rows = (DATA / "Accurate_Retrieval.jsonl").read_text().splitlines()
    rows += (DATA / "Conflict_Resolution.jsonl").read_text().splitlines()
    a = tmp_path / "a.jsonl"
    a.write_text("\n".join(rows) + "\n")
    random.Random(3).shuffle(rows)
    b = tmp_path / "b.jsonl"
    b.write_text("\n".join(rows) + "\n")
    assert _scores(_run(server, a, tmp_path / "ra").path) == _scores(
        _run(server, b, tmp_path / "rb").path
    )
