"""Runs on a real local Ray cluster: a head on 127.0.0.1 and a second worker node.

Marked ``live`` (CI runs them in `make test-live`, which installs the ``distributed`` extra).
The cluster is small (1 CPU per node) and shut down at the end of the module.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import plugins
import pytest
from conftest import MNEMOMETER, invoke_cli, kw_lex_experiment, seed_file

from mnemometer import RunSettings, SystemSpec, resume, run, run_experiment
from mnemometer._registry import STORES, refresh
from mnemometer.errors import MnemometerError
from mnemometer.log import read_header, read_items
from mnemometer.runner import RayExecutor, resume_experiment
from mnemometer.runner._ray import import_ray

pytestmark = pytest.mark.live

SLOW_STORE = '''
import time


class SlowStore:
    """A keyword store that takes ``delay`` seconds per search (a remote system's latency)."""

    def __init__(self, delay=0.02, stall="", stall_delay=60.0):
        self.delay, self.docs = float(delay), []
        self.stall, self.stall_delay = stall, float(stall_delay)

    def reset(self):
        self.docs = []

    def store(self, text, metadata):
        self.docs.append((metadata["memory_id"], set(text.lower().split())))

    def search(self, query, top_k):
        time.sleep(self.stall_delay if self.stall and self.stall in query else self.delay)
        words = set(query.lower().split())
        scored = [(len(words & d), i, mid) for i, (mid, d) in enumerate(self.docs)]
        scored = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
        return [{"memory_id": mid, "score": float(s)} for s, _, mid in scored[:top_k]]
'''


def _install_slow(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "mnemo_ray_plugin.py").write_text(textwrap.dedent(SLOW_STORE))
    info = root / "mnemo_ray_plugin-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mnemo-ray-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[mnemometer.stores]\nray-slow = mnemo_ray_plugin:SlowStore\n"
    )
    return root


@pytest.fixture(scope="module")
def cluster():
    """A head on 127.0.0.1 plus one more worker node, 1 CPU each; plug-ins on every node."""
    import_ray()  # the switches a user's run sets: Ray on loopback, usage reports off
    import ray
    from ray.cluster_utils import Cluster

    base = Path(tempfile.mkdtemp(prefix="mray-"))  # short: Ray's socket paths have a limit
    plug = [str(plugins.install(base / "p1")), str(_install_slow(base / "p2"))]
    old_path, old_env = list(sys.path), os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(plug + ([old_env] if old_env else []))
    sys.path[:0] = plug
    refresh()
    args = {"num_cpus": 1, "include_dashboard": False, "node_ip_address": "127.0.0.1"}
    # A head with its own temp_dir still writes the cluster's address into Ray's default
    # temp folder (/tmp/ray), which only a default start creates: a fresh machine has none.
    from ray._common.utils import get_default_ray_temp_dir

    Path(get_default_ray_temp_dir()).mkdir(parents=True, exist_ok=True)
    c = Cluster(initialize_head=True, head_node_args={**args, "temp_dir": str(base / "t")})
    try:
        c.add_node(num_cpus=1, node_ip_address="127.0.0.1")
        c.wait_for_nodes()
        ray.init(address=c.address, log_to_driver=False)
        yield c
    finally:
        ray.shutdown()
        c.shutdown()
        sys.path[:] = old_path
        if old_env is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old_env
        refresh()
        shutil.rmtree(base, ignore_errors=True)


def comparable(items):
    """Everything but timings, in plan order."""
    return [
        (
            r.item_id,
            r.index,
            r.status,
            r.success,
            [h.id for h in r.retrieved],
            [(m.name, m.k, m.value) for m in r.metrics],
        )
        for r in sorted(items, key=lambda r: r.index)
    ]


def _ray(cluster, **kw) -> RayExecutor:
    return RayExecutor(cluster.address, **kw)


def _on_ray(cluster) -> RunSettings:
    return RunSettings(executor=_ray(cluster))


def test_the_same_run_gives_the_same_items_on_local_and_ray(cluster, tmp_path: Path):
    ds = seed_file("memtest", "hp_benchmark_db.json")
    local = run("retrieval", "bm25", dataset=ds, out=tmp_path / "local")
    settings = RunSettings(concurrency=2, executor=_ray(cluster))
    remote = run("retrieval", "bm25", dataset=ds, out=tmp_path / "ray", settings=settings)
    assert remote.header.executor == "ray" and remote.header.status == "finished"
    assert comparable(read_items(remote.path)) == comparable(read_items(local.path))
    assert len(read_items(remote.path)) == 130

    # The same summary, timings aside.
    def scores(summary):
        return [(m.name, m.k, m.value) for m in summary.overall if m.name != "latency"]

    assert scores(remote.summary) == scores(local.summary)
    assert {"index", "items"} <= set(remote.header.timings)


def test_a_worker_killed_mid_run_loses_and_duplicates_nothing(cluster, tmp_path: Path):
    ds = seed_file("memtest", "hp_benchmark_db.json")
    spec = SystemSpec.store("ray-slow", delay=0.03)
    local = run(
        "retrieval", spec, dataset=ds, out=tmp_path / "local", settings=RunSettings(concurrency=2)
    )
    executor = _ray(cluster)
    out = tmp_path / "ray"
    errors: list[BaseException] = []

    def go():
        try:
            run(
                "retrieval",
                spec,
                dataset=ds,
                out=out,
                settings=RunSettings(concurrency=2, executor=executor),
            )
        except BaseException as e:  # surfaced below
            errors.append(e)

    t = threading.Thread(target=go)
    t.start()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if (
            (out / "items.jsonl").exists()
            and len(read_items(out)) >= 20
            and len(executor.worker_pids) == 2
        ):
            break
        time.sleep(0.05)
    victim = _actor_pid(executor.worker_pids)
    os.kill(victim, signal.SIGKILL)
    t.join(timeout=180)
    assert not t.is_alive() and not errors, errors
    items = read_items(out)
    ids = [r.item_id for r in items]
    assert len(ids) == len(set(ids)) == 130
    assert comparable(items) == comparable(read_items(local.path))
    header = read_header(out)
    assert header.status == "finished"
    assert any("retried elsewhere" in n for n in header.notes), header.notes


def _actor_pid(pids: list[int]) -> int:
    """A worker pid as Ray's own actor table reports it (the executor's own list agrees)."""
    import ray

    alive = [
        a["Pid"]
        for a in ray._private.state.actors().values()
        if a["State"] == "ALIVE" and a["ActorClassName"] == "_Worker"
    ]
    assert alive and set(alive) <= set(pids) | set(alive)
    return alive[0]


def test_resume_across_executors(cluster, tmp_path: Path):
    """Start local (killed), resume on Ray; start on Ray (driver killed), resume local."""
    ds = seed_file("memtest", "hp_benchmark_db.json")
    env = dict(os.environ)
    full = run(
        "retrieval", SystemSpec.store("killer", after=10**6), dataset=ds, out=tmp_path / "full"
    )

    marker = tmp_path / "killed"
    cmd = [MNEMOMETER, "run", "retrieval", "--dataset", str(ds), "--format", "none"]
    killer = [*cmd, "--store", "killer", "-S", "after=60", "-S", f"marker={marker}"]
    died = subprocess.run([*killer, "--out", str(tmp_path / "a")], env=env, capture_output=True)
    assert died.returncode == -9 and 0 < len(read_items(tmp_path / "a")) < 130
    resumed = subprocess.run(
        [
            MNEMOMETER,
            "run",
            "--resume",
            str(tmp_path / "a"),
            "--format",
            "none",
            "--executor",
            "ray",
            "--ray-address",
            cluster.address,
            "-c",
            "2",
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    assert resumed.returncode == 0, resumed.stderr
    h = read_header(tmp_path / "a")
    assert (h.executor, h.resumes, h.status) == ("ray", 1, "finished")
    assert comparable(read_items(tmp_path / "a")) == comparable(read_items(full.path))

    # On Ray, the driver is killed mid-run; the local executor finishes it.
    slow = [*cmd, "--store", "ray-slow", "-S", "delay=0.05", "-c", "2"]
    proc = subprocess.Popen(
        [
            *slow,
            "--out",
            str(tmp_path / "b"),
            "--executor",
            "ray",
            "--ray-address",
            cluster.address,
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if (tmp_path / "b" / "items.jsonl").exists() and len(read_items(tmp_path / "b")) >= 10:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial = read_items(tmp_path / "b")
    assert 10 <= len(partial) < 130 and read_header(tmp_path / "b").status == "running"
    res = resume(tmp_path / "b")
    assert res.header.executor == "local" and res.header.status == "finished"
    ref = run(
        "retrieval", SystemSpec.store("ray-slow", delay=0.0), dataset=ds, out=tmp_path / "ref"
    )
    assert comparable(read_items(tmp_path / "b")) == comparable(read_items(ref.path))


def test_an_experiment_runs_whole_runs_on_ray_and_resumes_locally(cluster, tmp_path: Path):
    exp = kw_lex_experiment()
    local = run_experiment(exp, tmp_path / "local")
    remote = run_experiment(exp, tmp_path / "ray", settings=_on_ray(cluster))
    assert [r.path.name for r in remote.runs] == ["kw-r0", "lex-r0", "kw-r1", "lex-r1"]
    for a, b in zip(local.runs, remote.runs, strict=True):
        assert comparable(read_items(a.path)) == comparable(read_items(b.path))
        assert read_header(b.path).executor == "ray"
        assert read_header(b.path).run_group == remote.run_group
        assert not (b.path / "store").exists()  # system files stay on the worker
    # A run cut short and one missing: resumed on Ray, the rest is kept.
    shutil.rmtree(tmp_path / "ray" / "lex-r1")
    lines = (tmp_path / "ray" / "kw-r1" / "items.jsonl").read_bytes().splitlines(keepends=True)
    (tmp_path / "ray" / "kw-r1" / "items.jsonl").write_bytes(b"".join(lines[:5]))
    h = read_header(tmp_path / "ray" / "kw-r1")
    from mnemometer.log._writer import write_header

    write_header(tmp_path / "ray" / "kw-r1", h.model_copy(update={"status": "running"}))
    again = resume_experiment(tmp_path / "ray", settings=_on_ray(cluster))
    assert [r.path.name for r in again.runs] == ["kw-r0", "lex-r0", "kw-r1", "lex-r1"]
    assert read_header(tmp_path / "ray" / "kw-r1").resumes == 1
    for a, b in zip(local.runs, again.runs, strict=True):
        assert comparable(read_items(a.path)) == comparable(read_items(b.path))


class DriverOnly:
    """A store only the driver has (registered in-process): the workers cannot build it."""

    def reset(self): ...
    def store(self, text, metadata): ...
    def search(self, query, top_k):
        return []


@pytest.mark.parametrize(
    ("suite", "system", "message"),
    [
        ("retrieval", "driver-only", r"store 'driver-only'.*plug-in"),
        # A suite whose items share state is refused for the item unit, naming the way out.
        ("memtest", "bm25", "sweep"),
        ("retrieval", DriverOnly(), "never pickled"),  # an object cannot be shipped
    ],
    ids=["driver-only-store", "shared-state-suite", "object"],
)
def test_bad_input_is_one_clear_message_before_work_starts(
    cluster, tmp_path: Path, suite, system, message
):
    STORES.register("driver-only", DriverOnly)
    try:
        with pytest.raises(MnemometerError, match=message):
            run(suite, system, dataset="demo-en", out=tmp_path / "r", settings=_on_ray(cluster))
    finally:
        STORES.unregister("driver-only")
    assert not (tmp_path / "r").exists()


def test_an_unreachable_cluster_is_one_line_naming_the_fix(tmp_path: Path):
    import socket

    with socket.socket() as s:  # a free port: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.monotonic()
    r = invoke_cli(
        "run",
        "retrieval",
        "--dataset",
        "demo-en",
        "--store",
        "bm25",
        "--out",
        tmp_path / "r",
        "--executor",
        "ray",
        "--ray-address",
        f"127.0.0.1:{port}",
    )
    assert r.exit_code == 2
    assert "cannot reach a Ray cluster" in r.output and "ray start --head" in r.output
    assert time.monotonic() - t0 < 30 and not (tmp_path / "r").exists()


def test_a_sweep_on_ray_gives_the_runs_and_leaderboard_of_a_local_one(cluster, tmp_path: Path):
    from mnemometer.workflows import sweep

    path = tmp_path / "sweep.toml"
    path.write_text(
        textwrap.dedent(
            """
            repeats = 2
            [[systems]]
            store = "keyword"
            [[systems]]
            store = "bm25"
            [[datasets]]
            path = "demo-en"
            [[datasets]]
            path = "demo-zh"
            [[compare]]
            baseline = "keyword"
            candidate = "bm25"
            """
        )
    )
    local = sweep(path, tmp_path / "local")
    remote = sweep(path, tmp_path / "ray", settings=_on_ray(cluster))
    names = sorted(
        r.path.relative_to(tmp_path / "ray").as_posix()
        for e in remote.experiments.values()
        for r in e.runs
    )
    assert names == sorted(
        f"{ds}/{s}-r{k}"
        for ds in ("demo-en", "demo-zh")
        for s in ("keyword", "bm25")
        for k in (0, 1)
    )
    for ds, exp in remote.experiments.items():
        for a, b in zip(local.experiments[ds].runs, exp.runs, strict=True):
            assert comparable(read_items(a.path)) == comparable(read_items(b.path))
            assert read_header(b.path).executor == "ray"
    board = remote.leaderboard.read_text()
    # The same board but for the cost table, whose latencies and seconds are the machine's.
    assert _without_costs(board) == _without_costs(local.leaderboard.read_text())
    assert "| bm25 |" in board and "Paired comparisons" in board
    assert len(remote.comparisons) == 2 and all(p.is_file() for p in remote.comparisons)


def _without_costs(board: str) -> str:
    """A Markdown leaderboard without its cost table (its title, blank line and rows)."""
    from mnemometer.report._decision import TITLE

    lines = board.splitlines()
    at = lines.index(f"{TITLE}:")
    end = at + 2
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    assert end > at + 3  # the table was there: its heading, rule and a row at least
    return "\n".join(lines[:at] + lines[end:])


def test_scenarios_on_ray_actors_grade_as_locally(cluster, tmp_path: Path):
    """An LLM-bound suite: each actor builds the rag agent, the model answers over HTTP."""
    from mnemometer.llm import LLMSettings
    from mnemometer.testing import FakeLLMServer
    from mnemometer.testing.llm_server import echo_memories

    spec = SystemSpec.agent("rag").options_with_store("bm25", None)
    opts = {"similarity": "none"}
    with FakeLLMServer(default=echo_memories) as srv:
        llm = LLMSettings(srv.base_url, srv.model)
        local = run(
            "scenarios",
            spec,
            out=tmp_path / "local",
            suite_options=opts,
            settings=RunSettings(concurrency=2, llm=llm),
        )
        remote = run(
            "scenarios",
            spec,
            out=tmp_path / "ray",
            suite_options=opts,
            settings=RunSettings(concurrency=2, llm=llm, executor=_ray(cluster)),
        )

    def graded(path):
        return sorted(
            (
                i.item_id,
                i.success,
                [(m.name, m.value) for m in i.metrics if m.name != "latency"],
                [(t.get("reply"), t.get("grade")) for t in i.extra["turns"]],
            )
            for i in read_items(path)
        )

    assert len(read_items(remote.path)) == 13
    assert graded(remote.path) == graded(local.path)
    assert (remote.path / "scenarios.csv").is_file()


def test_a_unit_that_overruns_times_out_and_its_worker_is_replaced(cluster, tmp_path: Path):
    spec = SystemSpec.store("ray-slow", delay=0.0, stall="Lisbon", stall_delay=60)
    settings = RunSettings(concurrency=2, timeout=1.0, executor=_ray(cluster))
    t0 = time.monotonic()
    res = run("retrieval", spec, dataset="demo-en", out=tmp_path / "r", settings=settings)
    assert time.monotonic() - t0 < 50  # the stalled calls were not waited for
    items = {i.item_id: i for i in read_items(res.path)}
    assert len(items) == 15
    assert {k for k, i in items.items() if i.status == "timeout"} == {"enq04", "enq09"}
    ref = run(
        "retrieval",
        SystemSpec.store("ray-slow", delay=0.0),
        dataset="demo-en",
        out=tmp_path / "ref",
    )
    fine = [i for i in read_items(ref.path) if i.item_id not in ("enq04", "enq09")]
    assert comparable(fine) == comparable([i for i in items.values() if i.status == "ok"])
