from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import plugins
import pytest
from conftest import MNEMOMETER, seed_file

from mnemometer import RunSettings, SystemSpec, resume, run
from mnemometer._registry import STORES
from mnemometer.errors import MnemometerError
from mnemometer.log import read_header, read_items


def comparable(items):
    return [
        (
            r.item_id,
            r.status,
            [h.id for h in r.retrieved],
            [(m.name, m.k, m.value) for m in r.metrics],
        )
        for r in items
    ]


def test_run_writes_header_and_every_item(tmp_path: Path) -> None:
    res = run("retrieval", "bm25", dataset="demo-en", out=tmp_path / "r")
    h = read_header(res.path)
    items = read_items(res.path)
    assert list(json.loads((res.path / "header.json").read_text()))[0] == "schema_version"
    assert h.status == "finished" and h.item_count == len(items) == 15
    assert h.system.name == "bm25" and "flush" in h.system.capabilities
    assert h.dataset.content_hash and h.config_fingerprint and h.package_version
    assert h.suite_options["ks"] == [1, 5, 10, 20]
    assert not h.labels_exposed
    assert [r.index for r in items] == list(range(15))
    hit20 = next(m for m in res.summary.overall if m.name == "hit" and m.k == 20)
    assert 0.5 < hit20.value <= 1.0 and hit20.n == 13


def test_the_header_records_the_work_trees_git_revision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # git runs in a thread while the dataset loads; the header must still get its answer.
    tree = tmp_path / "tree"
    tree.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], cwd=tree, check=True)
    (tree / "notes.txt").write_text("one\n")
    subprocess.run([*git, "add", "notes.txt"], cwd=tree, check=True)
    subprocess.run([*git, "commit", "-qm", "c"], cwd=tree, check=True)
    rev = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=tree, capture_output=True, text=True, check=True
    ).stdout.strip()
    monkeypatch.chdir(tree)
    clean = run("retrieval", "keyword", dataset="demo-en", out=tmp_path / "clean", limit=1)
    assert read_header(clean.path).git_revision == rev
    (tree / "notes.txt").write_text("two\n")
    dirty = run("retrieval", "keyword", dataset="demo-en", out=tmp_path / "dirty", limit=1)
    assert read_header(dirty.path).git_revision == rev + "+dirty"
    monkeypatch.chdir(tmp_path)  # not a work tree
    assert (
        read_header(run("retrieval", "keyword", dataset="demo-en", limit=1).path).git_revision
        is None
    )


def test_versions_read_from_metadata_headers_match_importlib_metadata() -> None:
    # _env._version reads only the header lines; importlib.metadata parses the whole file.
    from importlib.metadata import distributions, version

    from mnemometer import _env

    names = {d.metadata["Name"] for d in distributions()}
    assert "mnemometer" in names and len(names) > 20
    assert {n: _env._version(n) for n in names} == {n: version(n) for n in names}
    assert _env.package_version() == version("mnemometer")


def test_concurrency_gives_identical_results(tmp_path: Path) -> None:
    one, four = (
        run(
            "retrieval",
            "bm25",
            dataset="demo-zh",
            out=tmp_path / f"c{n}",
            settings=RunSettings(concurrency=n),
        )
        for n in (1, 4)
    )
    assert comparable(read_items(one.path)) == comparable(read_items(four.path))


class Flaky:
    """Raises on one query, hangs on another until released."""

    release = threading.Event()

    def __init__(self):
        self.docs = []

    def reset(self):
        self.docs = []

    def store(self, text, metadata):
        self.docs.append(metadata["memory_id"])

    def search(self, query, top_k):
        if "Naples" in query:
            raise RuntimeError("backend exploded")
        if "Marco" in query:
            Flaky.release.wait(30)
        return [{"memory_id": self.docs[0], "score": 1.0}]


@pytest.fixture
def flaky():
    STORES.register("flaky-test", Flaky)
    Flaky.release.clear()
    yield
    Flaky.release.set()
    STORES.unregister("flaky-test")


@pytest.mark.parametrize("concurrency", [1, 3])
def test_errors_and_timeouts_are_isolated_and_counted(tmp_path: Path, flaky, concurrency) -> None:
    res = run(
        "retrieval",
        "flaky-test",
        dataset="demo-en",
        out=tmp_path / "r",
        settings=RunSettings(concurrency=concurrency, timeout=0.3),
    )
    items = {r.item_id: r for r in read_items(res.path)}
    assert len(items) == 15  # the run went on
    assert items["enq05"].status == "error" and "backend exploded" in items["enq05"].error
    assert items["enq02"].status == items["enq11"].status == "timeout"  # both ask about Marco
    assert res.summary.counts["errors"] == 1 and res.summary.counts["timeouts"] == 2
    assert res.failed_items == 3
    # A failed item scores as a failure, not as a gap.
    assert all(m.value == 0.0 for m in items["enq05"].metrics)


def test_out_dir_must_be_new(tmp_path: Path) -> None:
    run("retrieval", "keyword", dataset="demo-en", out=tmp_path / "r")
    with pytest.raises(MnemometerError, match="already exists"):
        run("retrieval", "keyword", dataset="demo-en", out=tmp_path / "r")


def test_resume_after_sigkill_equals_uninterrupted_run(tmp_path: Path) -> None:
    dataset = seed_file("memtest", "hp_benchmark_db.json")
    env = dict(os.environ, PYTHONPATH=str(plugins.install(tmp_path / "plug")))
    marker = tmp_path / "killed"
    cmd = [
        MNEMOMETER,
        "run",
        "retrieval",
        "--dataset",
        str(dataset),
        "--store",
        "killer",
        "-S",
        "after=60",
        "-S",
        f"marker={marker}",
        "--format",
        "none",
    ]
    killed = subprocess.run([*cmd, "--out", str(tmp_path / "r")], env=env, capture_output=True)
    assert killed.returncode == -9 and marker.exists()
    partial = read_items(tmp_path / "r")
    assert 0 < len(partial) < 130
    assert read_header(tmp_path / "r").status == "running"

    resumed = subprocess.run(
        [MNEMOMETER, "run", "--resume", str(tmp_path / "r"), "--format", "json"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert resumed.returncode == 0, resumed.stderr
    full = subprocess.run([*cmd, "--out", str(tmp_path / "full")], env=env, capture_output=True)
    assert full.returncode == 0, full.stderr
    assert comparable(read_items(tmp_path / "r")) == comparable(read_items(tmp_path / "full"))
    h = read_header(tmp_path / "r")
    assert h.status == "finished" and h.resumes == 1
    assert json.loads(resumed.stdout)["summary"]["counts"]["items"] == 130


def test_truncated_last_line_is_redone_on_resume(tmp_path: Path) -> None:
    res = run("retrieval", "bm25", dataset="demo-en", out=tmp_path / "r")
    items_file = res.path / "items.jsonl"
    lines = items_file.read_bytes().splitlines(keepends=True)
    # Simulate a kill mid-write: drop the last 3 results and cut the 12th in half.
    items_file.write_bytes(b"".join(lines[:11]) + lines[11][:20])
    assert len(read_items(res.path)) == 11
    again = resume(res.path)
    assert comparable(read_items(again.path)) == comparable(
        read_items(run("retrieval", "bm25", dataset="demo-en", out=tmp_path / "ref").path)
    )


def test_resume_refuses_a_changed_dataset(tmp_path: Path) -> None:
    from mnemometer.datasets import load_dataset, save_dataset

    path = save_dataset(load_dataset("demo-en"), tmp_path / "d.json")
    res = run("retrieval", "bm25", dataset=path, out=tmp_path / "r")
    ds = load_dataset(path)
    ds.memories[0].text += " (edited)"
    save_dataset(ds, path)
    with pytest.raises(MnemometerError, match="changed since the run started"):
        resume(res.path)


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_a_run_records_the_eager_content_hash(tmp_path: Path, suffix: str) -> None:
    from mnemometer.datasets import load_dataset, save_dataset

    eager = load_dataset("demo-en").compute_hash()
    path = save_dataset(load_dataset("demo-en"), tmp_path / f"d{suffix}")
    res = run("retrieval", "keyword", dataset=path, out=tmp_path / "r")
    assert read_header(res.path).dataset.content_hash == eager
    assert resume(res.path).path == res.path  # the lazily hashed reload matches the header


def test_future_schema_version_is_refused(tmp_path: Path) -> None:
    res = run("retrieval", "keyword", dataset="demo-en", out=tmp_path / "r")
    raw = json.loads((res.path / "header.json").read_text())
    raw["schema_version"] = 99
    (res.path / "header.json").write_text(json.dumps(raw))
    with pytest.raises(MnemometerError, match="newer than this mnemometer reads"):
        read_header(res.path)


def test_secrets_are_redacted(tmp_path: Path) -> None:
    class KeyedStore(Flaky):
        def __init__(self, api_key: str = "", k1: float = 1.0):
            super().__init__()

    STORES.register("keyed-test", KeyedStore)
    try:
        res = run(
            "retrieval",
            SystemSpec.store("keyed-test", **{"api_key": "sk-secret", "k1": 2.0}),
            dataset="demo-en",
            out=tmp_path / "r",
            settings=RunSettings(timeout=None),
        )
    finally:
        STORES.unregister("keyed-test")
    text = (res.path / "header.json").read_text()
    assert "sk-secret" not in text
    assert read_header(res.path).system.options == {"api_key": "***", "k1": 2.0}


def test_pool_timeout_replaces_hung_worker() -> None:
    from mnemometer.runner._pool import execute

    gate = threading.Event()

    def fn(x):
        if x == 0:
            gate.wait(10)
        return x * 2

    out: dict = {}
    execute(fn, list(range(6)), lambda d: out.setdefault(d.item, d), concurrency=2, timeout=0.2)
    gate.set()
    assert out[0].timed_out
    assert all(out[i].result == i * 2 for i in range(1, 6))


def test_labels_never_reach_the_store(tmp_path: Path) -> None:
    seen: list[dict] = []

    class Spy(Flaky):
        def store(self, text, metadata):
            seen.append(metadata)
            super().store(text, metadata)

    STORES.register("spy-test", Spy)
    try:
        run(
            "retrieval",
            "spy-test",
            dataset=seed_file("memtest", "sample_db_100.json"),
            out=tmp_path / "r",
            settings=RunSettings(timeout=None),
        )
    finally:
        STORES.unregister("spy-test")
    assert len(seen) == 300  # three versions of 100 memories
    assert all(set(m) <= {"memory_id", "timestamp"} for m in seen)


def test_python_api_is_importable_without_heavy_sdks() -> None:
    code = "import mnemometer, sys; print(any(m in sys.modules for m in ('torch', 'mem0')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False"


def test_the_suites_that_spread_items_are_those_that_say_so() -> None:
    """The item unit asks the suite, and its refusal lists what the registry declares."""
    from mnemometer.runner._remote import check_item_unit
    from mnemometer.suites import BaseSuite, create_suite, register_suite, unregister_suite

    class Spreads(BaseSuite):
        name = "spreads-items"
        independent_items = True

    class Shares(BaseSuite):
        name = "shares-state"

    register_suite("spreads-items", Spreads)
    try:
        check_item_unit(create_suite("retrieval"))
        check_item_unit(Spreads())
        with pytest.raises(MnemometerError, match="cannot spread") as refused:
            check_item_unit(Shares())
    finally:
        unregister_suite("spreads-items")
    listed = str(refused.value).rsplit("Suites that spread items: ", 1)[1].split(", ")
    assert {"retrieval", "scenarios", "spreads-items"} <= set(listed)
    assert not {"memtest", "items"} & set(listed)


def test_redaction_is_by_value_not_by_name(tmp_path: Path, monkeypatch) -> None:
    """``max_tokens=32`` is a setting, an environment secret is hidden under any name."""
    monkeypatch.setenv("MNEMOMETER_TEST_API_KEY", "sk-from-the-environment")

    class TunedStore(Flaky):
        def __init__(self, max_tokens: int = 0, note: str = "", api_key_env: str = ""):
            super().__init__()

    STORES.register("tuned-test", TunedStore)
    try:
        res = run(
            "retrieval",
            SystemSpec.store(
                "tuned-test",
                max_tokens="32",
                note="sk-from-the-environment",
                api_key_env="MNEMOMETER_TEST_API_KEY",
            ),
            dataset="demo-en",
            out=tmp_path / "r",
            settings=RunSettings(timeout=None),
        )
    finally:
        STORES.unregister("tuned-test")
    assert read_header(res.path).system.options == {
        "max_tokens": "32",
        "note": "***",
        "api_key_env": "MNEMOMETER_TEST_API_KEY",
    }
    assert "sk-from-the-environment" not in (res.path / "header.json").read_text()
