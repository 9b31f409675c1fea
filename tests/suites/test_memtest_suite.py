"""The memtest suite: six behavioural dimensions on generated and MemTest seed data."""

from __future__ import annotations

import json
import re
import subprocess
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import MNEMOMETER, seed_file

from mnemometer import RunSettings, resume
from mnemometer._registry import STORES
from mnemometer.cli.main import cli
from mnemometer.datasets import Dataset, DatasetInfo, Query, load_dataset
from mnemometer.datasets.generate import generate, write_generated
from mnemometer.errors import DatasetError
from mnemometer.report import report
from mnemometer.runner import run
from mnemometer.scoring.memtest import kendall_tau
from mnemometer.stats import newcombe

_TOKEN = re.compile(r"[\u4e00-\u9fff]|[a-z0-9']+")
_STOP = frozenset("a an and at for in of on over so the to was with".split())


def _tokens(text: str) -> set[str]:
    return {t for t in _TOKEN.findall(text.lower()) if t not in _STOP}


SEEDS = [
    "sample_db_100.json",
    "sample_db_4875b98.json",
    "sample_db_a4ad044.json",
    "tianlongbabu_db.json",
    "hp_benchmark_db.json",
    "hp_benchmark_db_raw.json",
    "four_novels_db.json",
]


class ExactStore:
    """Keeps everything, forgets nothing: exact-text matches first, then word overlap."""

    seen_metadata: list[dict[str, Any]] = []

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.ids: list[str] = []
        self.exact: dict[str, list[int]] = {}
        self.postings: dict[str, list[int]] = {}

    def keep(self, memory_id: str) -> bool:
        return True

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        ExactStore.seen_metadata.append(dict(metadata))
        if self.keep(metadata["memory_id"]):
            doc = len(self.ids)
            self.ids.append(metadata["memory_id"])
            self.exact.setdefault(text, []).append(doc)
            for tok in _tokens(text):
                self.postings.setdefault(tok, []).append(doc)

    def search(self, query: str, top_k: int) -> list[dict[str, Any]]:
        scores: dict[int, float] = {}
        for tok in _tokens(query):
            for doc in self.postings.get(tok, ()):
                scores[doc] = scores.get(doc, 0.0) + 1.0
        for doc in self.exact.get(query, ()):
            scores[doc] = 1000.0
        out: list[dict[str, Any]] = []
        for doc in sorted(scores, key=lambda d: (-scores[d], d)):
            mid = self.ids[doc]
            if self.visible(mid) and all(h["memory_id"] != mid for h in out):
                out.append({"memory_id": mid, "score": scores[doc]})
                if len(out) == top_k:
                    break
        self.touched(out)
        return out

    def visible(self, memory_id: str) -> bool:
        return True

    def touched(self, hits: list[dict[str, Any]]) -> None:
        pass


class LossyStore(ExactStore):
    """Drops every third memory it is given (all versions of it)."""

    def reset(self) -> None:
        super().reset()
        self.order: dict[str, int] = {}

    def keep(self, memory_id: str) -> bool:
        n = self.order.setdefault(memory_id, len(self.order))
        return n % 3 != 2


class ForgetfulStore(ExactStore):
    """Time-aware: a memory not returned by a search for 60 simulated days is forgotten."""

    def reset(self) -> None:
        super().reset()
        self.now = datetime(2000, 1, 1)
        self.last: dict[str, datetime] = {}

    def set_time(self, now: datetime) -> None:
        self.now = now

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        super().store(text, metadata)
        self.last[metadata["memory_id"]] = self.now

    def visible(self, memory_id: str) -> bool:
        return self.now - self.last[memory_id] <= timedelta(days=60)

    def touched(self, hits: list[dict[str, Any]]) -> None:
        for h in hits:
            self.last[h["memory_id"]] = self.now


@pytest.fixture(autouse=True)
def _stores() -> Any:
    for name, cls in (
        ("t-exact", ExactStore),
        ("t-lossy", LossyStore),
        ("t-forgetful", ForgetfulStore),
    ):
        STORES.register(name, cls)
    yield
    for name in ("t-exact", "t-lossy", "t-forgetful"):
        STORES.unregister(name)


@pytest.fixture(scope="module")
def en_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("data") / "en.jsonl"
    write_generated(path, 600, "en", seed=11)
    return path


def _dims(result: Any) -> dict[str, dict[str, Any]]:
    return result.summary.sections["memtest"]["dimensions"]


def test_keep_everything_scores_full_storage_and_no_forgetting(en_path: Path) -> None:
    ExactStore.seen_metadata = []
    res = run("memtest", "t-exact", dataset=en_path, out="r")
    d = _dims(res)
    assert d["storage"]["mode"] == "read-back"  # verified by behaviour
    assert d["storage"]["score"] == 1.0 and d["storage"]["kept"] == 1800
    assert "ci95" not in d["storage"]  # every memory read back: no sampling error
    # Keeping everything keeps what was used but forgets nothing selectively: 0.5, scored.
    assert d["forgetting"]["verdict"] == "no forgetting" and d["forgetting"]["score"] == 0.5
    assert d["forgetting"]["n_high"] > 0 and d["forgetting"]["n_low"] > 0
    for name in ("retrieval", "organisation", "reasoning", "deep"):
        assert 0 < d[name]["score"] <= 1, name
    # Negatives: this store does not declare that it abstains, so they are n/a, not 0.
    assert d["retrieval"]["negative"]["n"] > 0
    assert d["retrieval"]["negative"]["abstention"] is None
    # The overall score is the documented weighted mean over scored dimensions.
    sec = res.summary.sections["memtest"]
    w = sec["weights"]
    scored = [n for n in d if d[n].get("score") is not None]
    want = sum(w[n] * d[n]["score"] for n in scored) / sum(w[n] for n in scored)
    assert sec["overall"] == round(want, 4)
    header = json.loads(Path("r/header.json").read_text())
    assert header["suite_options"]["weights"] == w  # recorded in the run log
    # The store never saw a label: text, memory_id and timestamp only.
    assert ExactStore.seen_metadata
    assert all(set(m) <= {"memory_id", "timestamp"} for m in ExactStore.seen_metadata)


def test_storage_none_reads_nothing_back_and_measures_the_rest_alike(en_path: Path) -> None:
    """``storage=none`` (MemTest's runner reads nothing back): every other item is the same."""
    from mnemometer.log import read_items

    full = run("memtest", "bm25", dataset=en_path, out="full")
    none = run("memtest", "bm25", dataset=en_path, out="none", suite_options={"storage": "none"})
    rest = {
        r.item_id: [h.id for h in r.retrieved]
        for r in read_items("full")
        if not r.item_id.startswith("storage/")
    }
    assert {r.item_id: [h.id for h in r.retrieved] for r in read_items("none")} == rest
    d, f = _dims(none), _dims(full)
    assert d["storage"]["status"] == "not applicable" and "storage=none" in d["storage"]["reason"]
    assert f["storage"]["score"] is not None
    for name in ("retrieval", "organisation", "forgetting", "reasoning", "deep"):
        assert d[name]["score"] == f[name]["score"], name
    assert none.header.suite_options["storage"] == "none"
    assert "storage" not in none.summary.sections["memtest"]["weights_used"]


def test_lossy_store_scores_exactly_what_it_kept(en_path: Path) -> None:
    ds = load_dataset(en_path)
    dropped = {m.id for i, m in enumerate(ds.memories) if i % 3 == 2}
    versions = sum(len(m.versions) for m in ds.memories)
    kept_versions = sum(len(m.versions) for m in ds.memories if m.id not in dropped)
    res = run("memtest", "t-lossy", dataset=en_path, out="r")
    d = _dims(res)
    assert d["storage"]["kept"] == kept_versions
    assert d["storage"]["score"] == kept_versions / versions
    for style in ("terse", "detailed", "colloquial"):
        assert d["storage"]["by_style"][style]["kept"] == len(ds.memories) - len(dropped)
    # Loss at storage time is not forgetting: dropped probes were never found.
    assert d["forgetting"]["verdict"] == "no forgetting"
    from mnemometer.log import read_items

    items = read_items("r")
    forget = {r.item_id.split("/")[1]: r for r in items if r.item_id.startswith("forget/")}
    for mid, r in forget.items():
        if mid in dropped:
            assert {m.name: m.value for m in r.metrics}["found_before"] == 0.0
    assert d["forgetting"]["not_found_before"] >= len(dropped & set(forget))
    assert all(h.id not in dropped for r in items for h in r.retrieved)
    # Recall of deep queries is exactly the share of their targets that were kept, at most.
    assert (
        d["deep"]["score"]
        < _dims(run("memtest", "t-exact", dataset=en_path, out="r2"))["deep"]["score"]
    )


def test_forgetting_store_is_measured_and_what_it_lost_stays_lost(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    write_generated(path, 1200, "en", seed=4)
    # 75 days on, the never-searched memories (60-day window) are gone and the ones
    # searched up to day 30 are kept: selective forgetting.
    opts = {"cluster_probes": 50, "storage_limit": 100, "horizon_days": 75}
    res = run("memtest", "t-forgetful", dataset=path, out="r", suite_options=opts)
    plain = run("memtest", "t-exact", dataset=path, out="r2", suite_options=opts)
    f = _dims(res)["forgetting"]
    assert f["verdict"] == "frequency-aware", f
    assert f["retention_high"] > 0.9 and f["retention_low"] < 0.25  # some are touched as side hits
    assert f["ci95"][0] > 0 and f["ci95"][0] <= f["difference"] <= f["ci95"][1]
    assert f["score"] == pytest.approx(f["retention_high"] - f["retention_low"] / 2, abs=1e-4)
    assert f["score"] > 0.8 > 0.5 == _dims(plain)["forgetting"]["score"]
    assert "index_again" in json.loads(Path("r/header.json").read_text())["timings"]
    # What it had lost by the horizon is gone for every other dimension: each search is the
    # fresh store's ranking without those memories, filled from below.
    gone = set(json.loads(Path("r/memtest-replay.json").read_text())["gone"])
    assert len(gone) == _dims(res)["storage"]["gone_at_horizon"] > 600
    from mnemometer.log import read_items

    mine = {r.item_id: r for r in read_items("r")}
    for r in read_items("r2"):
        if r.retrieved and not r.item_id.startswith("forget/"):
            got, fresh = [h.id for h in mine[r.item_id].retrieved], [h.id for h in r.retrieved]
            kept = [x for x in fresh if x not in gone]
            assert got[: len(kept)] == kept and not gone & set(got), r.item_id
    for name in ("storage", "retrieval", "reasoning", "deep"):
        assert _dims(res)[name]["score"] < _dims(plain)[name]["score"], name
    assert res.summary.sections["memtest"]["overall"] < plain.summary.sections["memtest"]["overall"]
    assert any("gone at the forgetting horizon" in n for n in res.summary.notes)
    # A resume reads what was lost from the checkpoint: the same summary.
    lines = Path("r/items.jsonl").read_text().splitlines(keepends=True)
    Path("r/items.jsonl").write_text("".join(lines[: len(lines) // 2]))
    assert resume("r").summary.sections == res.summary.sections


def test_chinese_generated_data_runs_every_dimension(tmp_path: Path) -> None:
    path = tmp_path / "zh.json"
    write_generated(path, 800, "zh", seed=1)
    res = run("memtest", "bm25", dataset=path, out="r")
    d = _dims(res)
    # Read back by content: a few Chinese versions lose a word to segmentation once their
    # names are gone (see test_bm25_keeps_a_sensible_profile).
    assert d["storage"]["mode"] == "read-back" and d["storage"]["score"] > 0.98
    assert d["storage"]["listed"] == d["storage"]["stored"]  # its claim, reported beside
    assert d["retrieval"]["negative"]["abstention"] is not None  # bm25 declares abstains
    for name in ("retrieval", "reasoning", "deep"):
        assert d[name]["score"] > 0.3, name
    org = d["organisation"]
    assert 0 <= org["score"] <= 1 and org["baseline"] > 0 and org["lift"] > 0
    assert set(d["deep"]["by_distance"]) == {"near", "mid", "far"}
    assert res.summary.sections["memtest"]["overall"] > 0.3
    text = report("r", "text")
    assert "MemTest dimensions" in text and "organisation" in text
    md = report("r", "md")
    assert "### MemTest dimensions" in md and "| forgetting |" in md


@pytest.mark.parametrize("name", SEEDS)
def test_every_memtest_seed_dataset_runs(name: str) -> None:
    path = seed_file("memtest", name)
    res = run(
        "memtest",
        "bm25",
        dataset=path,
        out="r",
        suite_options={"storage": "self-query", "storage_limit": 300},
    )
    d = _dims(res)
    assert res.failed_items == 0
    assert d["storage"]["score"] > 0.9 and d["retrieval"]["score"] is not None
    for dim in d.values():  # a dimension is scored, neutral, or n/a with a reason
        assert dim.get("score") is not None or dim.get("reason") or dim.get("verdict")
    if name.startswith(("hp_", "four_", "tianlong")):
        assert d["organisation"]["status"] == "not applicable"
        assert d["forgetting"]["status"] == "not applicable"
    if name == "sample_db_100.json":  # seed labels mapped: clusters, decay levels, depth
        assert d["organisation"]["probes"] == 2
        assert d["forgetting"]["n_high"] == 8 and d["forgetting"]["n_low"] == 8
        assert set(d["deep"]["by_distance"]) == {"near", "mid", "far"}
    if name == "sample_db_a4ad044.json":  # chain order from chain_position
        assert d["reasoning"]["n_chain"] > 0 and d["reasoning"]["n_tau"] > 0


def test_not_a_dataset_is_a_one_line_error() -> None:
    path = seed_file("memtest", "results_llm_rerank_benchmark.json")
    r = CliRunner().invoke(
        cli, ["run", "memtest", "--dataset", str(path), "--store", "bm25"], standalone_mode=False
    )
    assert r.exception is not None and "not a dataset" in str(r.exception)


@pytest.mark.parametrize("extra", [[], ["--repeat", "2"]], ids=["run", "experiment"])
def test_a_conversation_dataset_is_refused_in_one_line(extra: list[str], tmp_path: Path) -> None:
    # It used to run: "overall 0.0%" over 1,982 queries against an empty store, exit 0.
    path = seed_file("locomo", "locomo10.json")
    out = tmp_path / "r"
    args = ["run", "memtest", "--dataset", str(path), "--store", "bm25", "--out", str(out)]
    p = subprocess.run([MNEMOMETER, *args, *extra], capture_output=True, text=True)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    [line] = p.stderr.strip().splitlines()
    assert line.startswith(f"error: {path}: suite 'memtest' cannot score it: ")
    assert "a conversation dataset (10 conversations, 1,986 questions)" in line
    assert line.endswith(f"run `mnemometer run locomo --dataset {path}`")
    assert not out.exists()  # refused before anything was written


def test_a_dataset_without_memories_is_refused(tmp_path: Path) -> None:
    ds = Dataset(info=DatasetInfo(name="empty"), queries=[Query(id="q", text="who?")])
    with pytest.raises(DatasetError, match="dataset 'empty': .* no memories to store$"):
        run("memtest", "bm25", dataset=ds, out=tmp_path / "r")
    assert not (tmp_path / "r").exists()


def test_a_dataset_without_queries_is_refused_by_retrieval(tmp_path: Path) -> None:
    path = tmp_path / "memories.jsonl"
    lines = [{"kind": "info", "name": "no-queries"}, {"kind": "memory", "id": "m1", "text": "Ann"}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = tmp_path / "r"
    args = ["run", "retrieval", "--dataset", str(path), "--store", "bm25", "--out", str(out)]
    p = subprocess.run([MNEMOMETER, *args], capture_output=True, text=True)
    assert p.returncode == 2 and "Traceback" not in p.stderr, (p.stdout, p.stderr)
    [line] = p.stderr.strip().splitlines()
    assert line == (
        f"error: {path}: suite 'retrieval' cannot score it: the dataset has no queries to "
        "search (memories alone measure nothing)"
    )
    assert not out.exists()


def test_resume_gives_the_same_summary(en_path: Path) -> None:
    full = run("memtest", "bm25", dataset=en_path, out="r", settings=RunSettings(concurrency=2))
    lines = Path("r/items.jsonl").read_text().splitlines(keepends=True)
    Path("r/items.jsonl").write_text("".join(lines[: len(lines) // 2]))
    resumed = resume("r")
    assert resumed.summary.sections == full.summary.sections


def test_bad_options_are_one_line_errors(en_path: Path) -> None:
    cases = [
        (["-O", 'weights={"speed": 1}'], "unknown dimension 'speed'"),
        (["-O", "k=50"], "need 1 <= k <= top_k"),
        (["-O", "storage=ids"], "storage must be read-back"),
    ]
    for extra, message in cases:
        args = ["run", "memtest", "--dataset", str(en_path), "--store", "bm25", *extra]
        r = CliRunner().invoke(cli, args, standalone_mode=False)
        assert r.exception is not None and message in str(r.exception), (extra, r.exception)


def test_kendall_tau_and_newcombe() -> None:
    assert kendall_tau(["a", "b", "c"], ["a", "b", "c"]) == 1.0
    assert kendall_tau(["c", "b", "a"], ["a", "b", "c"]) == -1.0
    assert kendall_tau(["x", "b", "a", "y"], ["a", "b", "c"]) == -1.0
    assert kendall_tau(["a"], ["a", "b"]) is None
    iv = newcombe(56, 70, 48, 80)  # Newcombe (1998), table II, example (a), method 10
    assert (round(iv.low, 4), round(iv.high, 4)) == (0.0524, 0.3339)
    iv = newcombe(5, 10, 5, 10)
    assert iv.low < 0 < iv.high


def test_generated_dataset_in_memory_runs() -> None:
    res = run("memtest", "keyword", dataset=generate(200, "en", seed=9), out="r")
    assert res.summary.sections["memtest"]["overall"] is not None
