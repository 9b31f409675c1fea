"""taosmd as a third-party store plug-in (examples/plugins/mnemometer-taosmd), offline.

Runs in the plug-ins' venv (``make test-plugins``); elsewhere it skips. Checked: the store
is found through the ``mnemometer.stores`` entry point; the conformance kit passes, its
warnings being taosmd's own (equal scores in reverse insertion order, one row per ``add``);
bad options name the fix; taosmd embeds with the packaged MiniLM exported to ONNX (the same
vectors as sentence-transformers') and the hits are exactly what ``VectorMemory.search``
returns for the recipe's query; and a small LoCoMo run (conv-26, its first questions, read
by the deterministic test server) scores every question under every rule and beats the
random ranking under the claim's rule (``sess-any``) and the neutral one (``turn-any``).
"""

from __future__ import annotations

import importlib.util
import re

import numpy as np
import pytest
from conftest import invoke_cli
from plugin_helpers import conv26, locomo_run

from mnemometer.embeddings import load_embedder
from mnemometer.errors import MnemometerError
from mnemometer.log import read_log
from mnemometer.stores import create_store
from mnemometer.testing import check_store

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("mnemometer_taosmd") is None,
        reason="runs in the plug-ins' venv: make test-plugins",
    ),
]

QUESTIONS = 40


def test_found_through_the_entry_point(tmp_path) -> None:
    from mnemometer_taosmd import TaosmdStore

    store = create_store("taosmd", workdir=tmp_path)
    assert type(store) is TaosmdStore
    store.close()
    res = invoke_cli("list", "stores")
    assert res.exit_code == 0 and re.search(r"^taosmd\s", res.output, re.M), res.output


def test_conformance(tmp_path) -> None:
    store = create_store("taosmd", workdir=tmp_path)
    rep = check_store(store)
    store.close()
    assert rep.ok, str(rep)
    # Both are taosmd's: identical texts tie and numpy's argsort, reversed, returns them in
    # reverse insertion order; every add is a row of its own, so versions come back apart.
    assert {w.name for w in rep.warnings} <= {
        "breaks score ties independently of insertion order",
        "returns each memory id at most once per result",
    }, str(rep)


def test_bad_options_name_the_fix(tmp_path) -> None:
    with pytest.raises(MnemometerError, match="fusion=boost"):
        create_store("taosmd", {"fusion": "cosine"}, workdir=tmp_path)
    with pytest.raises(MnemometerError, match="onnx_path"):
        create_store("taosmd", {"onnx_path": str(tmp_path / "nothing")}, workdir=tmp_path)
    with pytest.raises(MnemometerError, match="expand.*true or false"):
        create_store("taosmd", {"expand": "yes"}, workdir=tmp_path)


def test_packaged_minilm_offline_and_taosmds_own_ranking(tmp_path) -> None:
    store = create_store("taosmd", workdir=tmp_path)
    turns, qa = conv26()
    store.store_many(turns[:120])
    vmem = store._vmem
    # taosmd's own embedder (its ONNX session, its pooling) gives the packaged MiniLM's vectors.
    text = turns[7][0]
    ours = store._run(vmem.embed(text))
    assert float(np.dot(ours, load_embedder("minilm").encode_one(text))) >= 0.999
    for q in qa[:6]:
        asked = store.query_text(q["question"])
        direct = store._run(vmem.search(asked, limit=10, hybrid=True, fusion="boost"))
        hits = store.search(q["question"], 10)
        assert [h.memory_id for h in hits] == [r["metadata"]["memory_id"] for r in direct]
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # The recipe's expansion adds taosmd's entities; without it the question goes as it is.
    assert store.query_text("When did Caroline go to the LGBTQ support group?").endswith(
        "Caroline LGBTQ"
    )
    store.close()


def test_small_locomo_run_scores_every_question_and_beats_random(tmp_path) -> None:
    res, table = locomo_run("taosmd", tmp_path / "run", QUESTIONS)
    rows = read_log(res.path).items
    assert len(rows) == QUESTIONS and all(r.status == "ok" for r in rows)
    assert table["turn-any"]["n"] == sum(1 for r in rows if r.expected)
    assert table["sess-any"]["n"] == QUESTIONS  # the claim's rule counts every question
    for rule in ("sess-any", "turn-any", "distinct-session"):
        assert table[rule]["value"] > table[rule]["random"]["value"], rule
