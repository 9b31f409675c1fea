"""Memory Layer's five conditions: ``graph`` is Graphiti, ``full-memory`` fuses every channel.

Checked: the condition table names what Memory Layer named; ``graph`` without an LLM is a
clear error, never a silent substitute; ``full-memory`` without an LLM falls back to
lexical + semantic with the reason recorded; the fusion store really fuses (a memory only
one channel finds is still found, and the order is weighted RRF, checked against a sum
written out here); and, with the test LLM server as extraction stand-in, full-memory runs
all three channels, records them in the run log, and its graph channel's LLM calls are
metered.
"""

from __future__ import annotations

import pytest
from conftest import invoke_cli, needs

import mnemometer
from mnemometer.errors import MnemometerError
from mnemometer.llm import LLMSettings
from mnemometer.log import read_log
from mnemometer.runner._conditions import DEFAULT_CONDITIONS, Condition, resolve, system_for
from mnemometer.stores import create_store

_LLM_ENV = ("MNEMOMETER_LLM_BASE_URL", "MNEMOMETER_LLM_MODEL", "MNEMOMETER_LLM_CONFIG")


@pytest.fixture
def no_llm(monkeypatch):
    for name in _LLM_ENV:
        monkeypatch.delenv(name, raising=False)


def test_memory_layers_condition_names_are_all_defined() -> None:
    names = {"no-memory", "lexical", "semantic", "graph", "full-memory"}
    assert names <= set(DEFAULT_CONDITIONS)
    assert DEFAULT_CONDITIONS["graph"].store == "graphiti"
    assert DEFAULT_CONDITIONS["full-memory"].store == "fusion"


def test_graph_without_an_llm_is_an_error_not_a_substitute(no_llm) -> None:
    with pytest.raises(MnemometerError, match=r"condition 'graph': .*(--llm-base-url|graphiti)"):
        system_for("graph", resolve("graph", DEFAULT_CONDITIONS))


def test_full_memory_without_an_llm_falls_back_and_says_why(no_llm) -> None:
    with pytest.warns(UserWarning, match="fell back to"):
        spec = system_for("full-memory", resolve("full-memory", DEFAULT_CONDITIONS))
    assert spec.name in ("hybrid", "bm25") and spec.condition == "full-memory"
    assert "store 'fusion' unavailable" in spec.notes[0]


def test_a_fallback_chain_is_tried_in_order(no_llm) -> None:
    cond = Condition(store="no-such-store", fallback=["also-missing", "tfidf"])
    with pytest.warns(UserWarning):
        spec = system_for("x", cond)
    assert spec.name == "tfidf"
    assert "'no-such-store' unavailable" in spec.notes[0]
    assert "'also-missing' unavailable" in spec.notes[0]
    with pytest.raises(MnemometerError, match="'also-missing' unavailable"):
        system_for("x", Condition(store="no-such-store", fallback=["also-missing"]))


def test_fusion_asks_for_an_llm_only_with_a_graph_channel_of_its_own_without_one() -> None:
    from mnemometer.stores.fusion import FusionStore

    assert FusionStore.needs_llm({})
    assert not FusionStore.needs_llm({"channels": "lexical,semantic"})
    assert not FusionStore.needs_llm({"graph": {"base_url": "http://x/v1", "llm_model": "m"}})
    assert FusionStore.needs_llm({"graph": {"base_url": "http://x/v1"}})


@needs("graphiti_core", extras="[graphiti]")
def test_an_llm_in_the_run_settings_makes_graph_available(no_llm) -> None:
    llm = LLMSettings(base_url="http://127.0.0.1:9/v1", model="m")
    assert system_for("graph", resolve("graph", DEFAULT_CONDITIONS), llm).name == "graphiti"
    spec = system_for("full-memory", resolve("full-memory", DEFAULT_CONDITIONS), llm)
    assert spec.name == "fusion" and spec.notes == ()


def test_cli_graph_condition_names_the_flags(no_llm, tmp_path) -> None:
    r = invoke_cli(
        "run", "retrieval", "-d", "demo-en", "--condition", "graph", "-o", tmp_path / "r"
    )
    assert r.exit_code == 2 and "condition 'graph'" in r.output
    assert "Traceback" not in r.output


@needs("sentence_transformers", extras="[embeddings]")
def test_fusion_is_weighted_rrf_over_its_channels(no_llm) -> None:
    texts = {
        "m0": "The quarterly budget review moved to Thursday.",
        "m1": "Our puppy chewed the sofa again last night.",
        "m2": "Invoice 4471 was paid by the finance team.",
        "m3": "The dog destroyed a couch cushion.",
    }
    weights = {"lexical": 1.0, "semantic": 2.0}
    store = create_store("fusion", {"channels": "lexical,semantic", "weights": weights, "depth": 4})
    lexical = create_store("bm25")
    dense = create_store("dense")
    for s in (store, lexical, dense):
        s.store_many([(t, {"memory_id": m}) for m, t in texts.items()])
        s.flush()
    query = "What did the dog chew?"
    got = store.search(query, 4)
    assert store.resolved_options()["channels"] == ["lexical", "semantic"]
    expected: dict[str, float] = {}
    for weight, hits in ((1.0, lexical.search(query, 4)), (2.0, dense.search(query, 4))):
        for rank, h in enumerate(hits, start=1):
            expected[h.memory_id] = expected.get(h.memory_id, 0.0) + weight / (60 + rank)
    assert {h.memory_id: pytest.approx(h.score) for h in got} == expected
    # m3 shares no word with the question: only the semantic channel can bring it up
    assert "m3" in [h.memory_id for h in got[:2]]
    assert [h.score for h in got] == sorted((h.score for h in got), reverse=True)


def test_fusion_rejects_unknown_channels() -> None:
    with pytest.raises(MnemometerError, match="channels must be some of"):
        create_store("fusion", {"channels": "lexical,telepathy"})


@pytest.mark.slow
@needs("graphiti_core", "sentence_transformers", extras="[graphiti] and [embeddings]")
def test_full_memory_fuses_three_channels_with_the_test_llm(no_llm, tmp_path) -> None:
    from mnemometer.testing._extraction import extraction_llm

    with extraction_llm() as llm:
        settings = mnemometer.RunSettings(llm=LLMSettings(base_url=llm.base_url, model=llm.model))
        spec = system_for("full-memory", resolve("full-memory", DEFAULT_CONDITIONS), settings.llm)
        res = mnemometer.run(
            "retrieval", spec, dataset="demo-en", out=tmp_path / "run", settings=settings
        )
        calls = len(llm.chat_requests())
    header = read_log(tmp_path / "run").header
    assert header.system.name == "fusion" and header.system.condition == "full-memory"
    assert header.system.options["channels"] == ["lexical", "semantic", "graph"]
    assert header.system.options["graph"]["llm_model"] == llm.model
    s = res.summary
    assert calls > 0 and s.counts["errors"] == 0 and s.counts["ingest_failures"] == 0
    assert s.table("ingest").data[0]["llm_calls_per_memory"] >= 1
    hit5 = next(m.value for m in s.overall if m.name == "hit" and m.k == 5)
    assert hit5 >= 0.5


@needs("sentence_transformers", extras="[embeddings]")
def test_fusion_passes_the_store_conformance_kit(no_llm) -> None:
    from mnemometer.testing import check_store

    rep = check_store(create_store("fusion", {"channels": ["lexical", "semantic"]}))
    assert rep.ok, str(rep)
