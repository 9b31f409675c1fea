"""dense and hybrid stores: the real packaged MiniLM, loaded once for the module."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

pytest.importorskip("sentence_transformers", reason="needs the [embeddings] extra")

from conftest import MNEMOMETER  # noqa: E402

from mnemometer.cli.main import cli  # noqa: E402
from mnemometer.embeddings import load_embedder, model_path  # noqa: E402
from mnemometer.errors import MnemometerError  # noqa: E402
from mnemometer.stores import create_store  # noqa: E402
from mnemometer.stores.hybrid import rrf  # noqa: E402
from mnemometer.testing import check_store  # noqa: E402


@pytest.fixture(scope="module")
def embedder():
    return load_embedder()


def test_packaged_model_loads_by_path_and_normalises(embedder) -> None:
    assert Path(embedder.path).is_dir() and embedder.path == model_path("minilm")
    vecs = embedder.encode(
        ["My name is Darrin and I live in Phoenix", "Marriott", "Darrin Phoenix"]
    )
    assert vecs.shape == (3, embedder.dim) == (3, 384)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    # Meaning, not strings: the paraphrase is closer than the unrelated word.
    assert vecs[2] @ vecs[0] > vecs[2] @ vecs[1] + 0.2


def test_model_path_that_does_not_exist_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(MnemometerError, match="no such directory"):
        create_store("dense", {"model": str(tmp_path / "nope")})
    (tmp_path / "empty").mkdir()
    with pytest.raises(MnemometerError, match="could not load it"):
        create_store("dense", {"model": str(tmp_path / "empty")})


def test_cli_reports_a_bad_model_path_without_traceback(tmp_path: Path) -> None:
    res = subprocess.run(
        [
            MNEMOMETER,
            "run",
            "retrieval",
            "-d",
            "demo-en",
            "-s",
            "dense",
            "-S",
            f"model={tmp_path / 'missing'}",
            "-o",
            str(tmp_path / "r"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2
    assert res.stderr.startswith("error: embedding model") and "no such directory" in res.stderr
    assert "Traceback" not in res.stderr


@pytest.mark.parametrize("name", ["dense", "hybrid"])
def test_conformance(name: str, embedder) -> None:
    rep = check_store(create_store(name))
    assert rep.ok, str(rep)


def test_dense_finds_paraphrases_bm25_cannot(embedder) -> None:
    docs = [
        "The physician prescribed antibiotics for the infection.",
        "We adopted a small puppy from the shelter.",
        "Quarterly revenue grew by twelve percent.",
    ]
    q = "Which doctor gave medicine for an illness?"
    results = {}
    for name in ("dense", "bm25"):
        s = create_store(name, lang="en")
        for i, t in enumerate(docs):
            s.store(t, {"memory_id": f"d{i}"})
        results[name] = [h.memory_id for h in s.search(q, 3)]
    assert results["dense"][0] == "d0"
    assert "d0" not in results["bm25"]  # no shared word: lexical search cannot find it


def test_rrf_formula() -> None:
    fused = rrf([["a", "b"], ["b", "c"]], [1.0, 2.0], k=10)
    assert fused["a"] == pytest.approx(1 / 11)
    assert fused["b"] == pytest.approx(1 / 12 + 2 / 11)
    assert fused["c"] == pytest.approx(2 / 12)


def test_hybrid_weights_steer_the_fusion(embedder) -> None:
    docs = ["The physician prescribed antibiotics.", "The doctor's car is red."]
    q = "doctor medicine"
    tops = {}
    for w in ((1.0, 0.0), (0.0, 1.0)):
        s = create_store("hybrid", {"bm25_weight": w[0], "dense_weight": w[1]}, lang="en")
        for i, t in enumerate(docs):
            s.store(t, {"memory_id": f"d{i}"})
        tops[w] = s.search(q, 2)[0].memory_id
    assert tops[(1.0, 0.0)] == "d1"  # the only lexical match
    assert tops[(0.0, 1.0)] == "d0"  # the meaning


def test_hybrid_falls_back_to_bm25_on_chinese(embedder) -> None:
    s = create_store("hybrid", lang="zh")
    assert s.resolved_options() == {"mode": "bm25", "tie_seed": 0}
    auto = create_store("hybrid")  # language unknown: decided from the texts
    for st in (s, auto):
        st.store("张伟在杭州西湖边买了龙井茶", {"memory_id": "a"})
        st.store("李娜在上海开会讨论预算", {"memory_id": "b"})
        st.flush()
    assert auto.resolved_options()["mode"] == "bm25"
    assert s._dense is None  # the English-only model was never even loaded for Chinese
    bm25 = create_store("bm25", lang="zh")
    bm25.store_many(
        [
            ("张伟在杭州西湖边买了龙井茶", {"memory_id": "a"}),
            ("李娜在上海开会讨论预算", {"memory_id": "b"}),
        ]
    )
    assert [h.memory_id for h in s.search("龙井茶", 2)] == [
        h.memory_id for h in bm25.search("龙井茶", 2)
    ]
    assert create_store("hybrid", {"mode": "fused"}, lang="zh").resolved_options()["mode"] == (
        "fused"
    )


def test_bad_hybrid_options() -> None:
    with pytest.raises(MnemometerError, match="mode must be"):
        create_store("hybrid", {"mode": "magic"})
    with pytest.raises(MnemometerError, match="non-negative"):
        create_store("hybrid", {"dense_weight": -1})


def _metric(summary, key: str) -> float:
    return next(m.value for m in summary.overall if m.key == key)


@pytest.mark.parametrize(
    ("name", "dataset", "mode"),
    [("dense", "demo-en", None), ("hybrid", "demo-en", "fused"), ("hybrid", "demo-zh", "bm25")],
)
def test_cli_runs_retrieval_and_logs_resolved_options(
    name: str, dataset: str, mode: str | None, embedder, tmp_path: Path
) -> None:
    from mnemometer.runner import summarize

    runs = {}
    for store in (name, "bm25"):
        out = tmp_path / store
        res = CliRunner().invoke(
            cli,
            ["run", "retrieval", "-d", dataset, "-s", store, "-o", str(out), "--format", "none"],
        )
        assert res.exit_code == 0, res.output
        runs[store] = summarize(out)
    header = json.loads((tmp_path / name / "header.json").read_text())
    if mode:
        assert header["system"]["options"]["mode"] == mode
    else:
        assert header["system"]["options"]["model"] == embedder.path
    assert runs[name].counts.get("errors", 0) == 0
    hit = _metric(runs[name], "hit@20")
    assert 0.5 < hit <= 1.0
    if name == "hybrid":  # fusion (English) or fallback (Chinese) never loses to BM25 here
        assert hit >= _metric(runs["bm25"], "hit@20")


def test_embedding_cache_returns_the_same_vectors(embedder) -> None:
    from mnemometer.embeddings import Embedder, content_key

    fresh = Embedder(path=embedder.path, model=embedder.model, dim=embedder.dim)
    texts = ["a cat on a mat", "a dog in the fog", "a cat on a mat"]
    plain = fresh.encode(texts)
    fresh.enable_cache()
    cached = fresh.encode(texts)
    assert np.allclose(plain, cached, atol=1e-5) and len(fresh.cache) == 2
    assert (fresh.cache_misses, fresh.cache_hits) == (2, 1)  # the repeat is served, not run
    fresh.encode_one("a query")
    assert content_key("a query") not in fresh.cache  # queries are never cached: honest latency
    assert (fresh.cache_misses, fresh.cache_hits) == (2, 1)


def test_embedding_cache_is_shared_across_stores_by_content(embedder, monkeypatch) -> None:
    """A second store over the same texts runs the model on none of them; a new text is a miss."""
    from mnemometer.embeddings import Embedder
    from mnemometer.stores.dense import DenseStore

    fresh = Embedder(path=embedder.path, model=embedder.model, dim=embedder.dim)
    fresh.enable_cache()
    monkeypatch.setattr("mnemometer.stores.dense.load_embedder", lambda model: fresh)
    texts = [f"memory number {i} about {w}" for i, w in enumerate(["tea", "rain", "trains"])]
    first, second = DenseStore(), DenseStore()
    for store, extra in ((first, []), (second, ["a text only the second store has"])):
        store.store_many([(t, {"memory_id": f"m{i}"}) for i, t in enumerate(texts + extra)])
        store.flush()
    assert (fresh.cache_misses, fresh.cache_hits) == (4, 3)
    shared = [h for h in second.search("trains", 4) if h.memory_id != "m3"]
    assert [(h.memory_id, round(h.score, 5)) for h in first.search("trains", 3)] == [
        (h.memory_id, round(h.score, 5)) for h in shared
    ]


@pytest.mark.parametrize("store", ["dense", "hybrid", "fusion"])
def test_a_model_given_by_path_runs_dense_retrieval_on_chinese(
    store: str, embedder, tmp_path: Path
) -> None:
    # The seed used paraphrase-multilingual-MiniLM-L12-v2, which is not packaged here: the
    # packaged English MiniLM, named by its directory as a user's model would be, stands in.
    # It tests the path (a user model is loaded and used on Chinese), not Chinese quality.
    out = tmp_path / store
    args = ["run", "retrieval", "-d", "demo-zh", "-s", store, "-S", f"model={embedder.path}"]
    if store == "fusion":
        args += ["-S", "channels=lexical,semantic"]
    res = CliRunner().invoke(cli, [*args, "-o", str(out), "--format", "none"])
    assert res.exit_code == 0, res.output
    options = json.loads((out / "header.json").read_text())["system"]["options"]
    assert options["model"] == embedder.path
    if store == "hybrid":
        assert options["mode"] == "fused"  # not the bm25 fallback the default model gets
    if store == "fusion":
        assert options["channels"] == ["lexical", "semantic"]
    default = create_store(
        store, {"channels": "lexical,semantic"} if store == "fusion" else {}, lang="zh"
    )
    if store == "hybrid":
        assert default.resolved_options()["mode"] == "bm25"
    if store == "fusion":
        assert default.resolved_options()["channels"] == ["lexical"]
