"""Every kind of run, SIGKILLed mid-run from outside and resumed, equals an uninterrupted run.

Each test starts the real command line in a subprocess, waits for its log to grow to a
random point (no sleeps: it polls the files the run writes), SIGKILLs it, resumes with
``mnemometer run --resume DIR``, and so on; then it compares the item results with a run
that was never interrupted, and checks that no resume ran an item that had already
finished (the lines a resume appends name none of the items finished before it). The fast
group kills a retrieval run once; the slow group (``-m slow``) kills every kind once and
three times (the first time before its first item).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import plugins
import pytest
from conftest import MNEMOMETER

from mnemometer.log import read_header, read_items
from mnemometer.testing import FakeLLMServer
from mnemometer.testing.llm_server import echo_memories

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

Watch = Callable[[], int]


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return -1 if not path.parent.joinpath("header.json").exists() else 0


def _run_dirs(out: Path) -> list[Path]:
    return sorted(p.parent for p in out.glob("*/header.json"))


def _lines_under(out: Path) -> int:
    """Item lines across an experiment's runs (-1 before any run has a header)."""
    dirs = _run_dirs(out)
    if not dirs:
        return -1
    return sum(max(0, _lines(d / "items.jsonl")) for d in dirs)


def _start(cmd: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as err:
        return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)


def _kill_at(proc: subprocess.Popen[bytes], watch: Watch, at: int, limit: float = 240) -> bool:
    """SIGKILL ``proc`` once ``watch() >= at``; False when it finished first."""
    end = time.monotonic() + limit
    while proc.poll() is None:
        if watch() >= at:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            return True
        if time.monotonic() > end:
            proc.kill()
            raise AssertionError(f"the run did not reach {at} log lines in {limit:g} s")
        time.sleep(0.002)  # polling interval, not a wait for something to happen
    return False


def _finished_ids(run_dir: Path) -> set[str]:
    """Items whose results are complete and ok (what a resume must not run again)."""
    if not (run_dir / "header.json").exists():
        return set()
    results = read_items(run_dir)
    bad = {r.item_id for r in results if r.status != "ok"}
    return {r.item_id for r in results if r.item_id not in bad}


def _snapshot(dirs: list[Path]) -> dict[Path, tuple[int, set[str]]]:
    """Per run: the size of its log up to the last whole line, and its finished items."""
    snap = {}
    for d in dirs:
        data = (d / "items.jsonl").read_bytes() if (d / "items.jsonl").exists() else b""
        snap[d] = (data.rfind(b"\n") + 1, _finished_ids(d))
    return snap


def _assert_nothing_repeated(snap: dict[Path, tuple[int, set[str]]]) -> None:
    for d, (size, finished) in snap.items():
        data = (d / "items.jsonl").read_bytes()[size:]
        appended = data[: data.rfind(b"\n") + 1].splitlines()  # not a line cut by the kill
        again = {json.loads(line)["item_id"] for line in appended if line.strip()} & finished
        assert not again, f"{d.name}: a resume ran finished items again: {sorted(again)}"


def _kill_repeatedly(
    cmd: list[str],
    out: Path,
    env: dict[str, str],
    watch: Watch,
    points: list[int],
    dirs: Callable[[], list[Path]],
    tmp: Path,
) -> int:
    """Kill the run at each point (the first in the start, later ones in resumes); finish.

    After each process ends, what it appended is checked against the items that had
    finished before it started. Returns how many kills landed.
    """
    log = tmp / "stderr.txt"
    resume = [MNEMOMETER, "run", "--resume", str(out), "--format", "none"]
    resume += [a for a in cmd if a == "--allow-shell"]  # consent is the resuming user's
    kills = 0
    proc = _start(cmd, env, log)
    snap: dict[Path, tuple[int, set[str]]] = {}
    for at in points:
        if not _kill_at(proc, watch, at):
            break
        kills += 1
        _assert_nothing_repeated(snap)
        snap = _snapshot(dirs())
        proc = _start(resume, env, log)
    rc = proc.wait()
    assert rc in (0, 1), log.read_text()[-3000:]
    _assert_nothing_repeated(snap)
    return kills


def _points(rng: random.Random, total: int, kills: int, before_first: bool) -> list[int]:
    """Increasing kill points in log lines: 0 means after the header, before any item."""
    picks = sorted(rng.sample(range(1, total), kills - int(before_first)))
    return ([0] if before_first else []) + picks


def _view(run_dir: Path) -> list[tuple]:
    """What an item measured, without its timings."""

    def measured(m) -> bool:
        return m.unit != "ms" and m.name not in ("latency", "duration", "duration_ms")

    return [
        (
            r.item_id,
            r.step,
            r.status,
            r.success,
            r.output,
            [h.id for h in r.retrieved],
            [(m.key, m.value) for m in r.metrics if measured(m)],
        )
        for r in read_items(run_dir)
    ]


KILLS = [
    pytest.param(1, False, id="one-kill"),
    pytest.param(3, True, id="three-kills", marks=pytest.mark.slow),
]
SLOW_KILLS = [pytest.param(*p.values, id=p.id, marks=pytest.mark.slow) for p in KILLS]
"""Kinds other than retrieval start several subprocesses a kill: the slow group only."""


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMOMETER_")}
    env["PYTHONPATH"] = str(plugins.install(tmp / "plug"))
    env.update(extra)
    return env


def _runs(out: Path) -> list[Path]:
    """The run directories under ``out``: itself for a run, its runs for an experiment."""
    return [out] if (out / "header.json").exists() else _run_dirs(out)


def _check(
    tmp: Path, cmd: list[str], env: dict[str, str], kills: int, before_first: bool, seed: int
) -> None:
    """Kill ``cmd`` (a run or an experiment) at seeded points, resume, compare with a
    run that was never interrupted."""
    full = subprocess.run(
        [*cmd, "--out", str(tmp / "full")], env=env, capture_output=True, text=True
    )
    assert full.returncode in (0, 1), full.stderr[-3000:]
    total = sum(len(read_items(d)) for d in _runs(tmp / "full"))
    out = tmp / "killed"
    single = (tmp / "full" / "header.json").exists()
    points = _points(random.Random(seed), total, kills, before_first)
    landed = _kill_repeatedly(
        [*cmd, "--out", str(out)],
        out,
        env,
        (lambda: _lines(out / "items.jsonl")) if single else (lambda: _lines_under(out)),
        points,
        lambda: _runs(out),
        tmp,
    )
    assert landed >= 1
    names = [d.relative_to(tmp / "full") for d in _runs(tmp / "full")]
    assert [d.relative_to(out) for d in _runs(out)] == names
    for name in names:
        run_dir = out / name
        assert _view(run_dir) == _view(tmp / "full" / name), name
        raw = [json.loads(x) for x in (run_dir / "items.jsonl").read_bytes().splitlines() if x]
        keys = [(r["item_id"], r.get("step")) for r in raw]
        assert len(keys) == len(set(keys)), f"{name}: an item was logged twice"
        assert read_header(run_dir).status == "finished"
        assert (run_dir / "summary.json").exists()
    if single:
        assert read_header(out).resumes == landed
    assert not (out / ".mnemometer.lock").exists()


@pytest.mark.parametrize(("kills", "before_first"), KILLS)
def test_retrieval_survives_sigkill(tmp_path: Path, kills: int, before_first: bool) -> None:
    from conftest import seed_file

    dataset = seed_file("memtest", "hp_benchmark_db.json")
    cmd = [MNEMOMETER, "run", "retrieval", "-d", str(dataset), "-s", "slow", "-S", "delay=0.01"]
    cmd += ["-c", "3", "--format", "none"]
    _check(tmp_path, cmd, _env(tmp_path), kills, before_first, seed=1)


def test_parallel_ingest_of_conversations_survives_sigkill(tmp_path: Path) -> None:
    """Killed while it fills two conversations' stores at once, then among the items."""
    from benchmark_helpers import small_locomo

    dataset = small_locomo(tmp_path / "locomo.json", conversations=3, questions=10)
    cmd = [MNEMOMETER, "run", "retrieval", "-d", str(dataset), "-s", "slow", "-S", "delay=0.01"]
    cmd += ["-S", "store_delay=0.001", "-c", "2", "--format", "none"]  # ~1,450 turns: ~0.8 s
    _check(tmp_path, cmd, _env(tmp_path), 2, True, seed=3)


@pytest.mark.parametrize(("kills", "before_first"), SLOW_KILLS)
def test_memtest_survives_sigkill(tmp_path: Path, kills: int, before_first: bool) -> None:
    from mnemometer.datasets.generate import write_generated

    data = tmp_path / "gen.jsonl"
    write_generated(data, 300, "en", seed=3)  # with forgetting probes: the replay checkpoint
    cmd = [MNEMOMETER, "run", "memtest", "-d", str(data), "-s", "slow", "-S", "delay=0.003"]
    cmd += ["-c", "2", "--format", "none"]
    _check(tmp_path, cmd, _env(tmp_path), kills, before_first, seed=2)


@pytest.fixture
def slow_llm():
    def reply(body):
        time.sleep(0.002)  # a server that takes a little while, as real ones do
        return echo_memories(body)

    with FakeLLMServer(default=reply) as srv:
        yield srv


@pytest.mark.parametrize(("kills", "before_first"), SLOW_KILLS)
def test_scenarios_survive_sigkill(
    tmp_path: Path, slow_llm, kills: int, before_first: bool
) -> None:
    cmd = [MNEMOMETER, "run", "scenarios", "--agent", "rag", "--store", "bm25"]
    cmd += ["--llm-base-url", slow_llm.base_url, "--llm-model", slow_llm.model]
    cmd += ["-O", "similarity=none", "-c", "2", "--format", "none"]
    _check(tmp_path, cmd, _env(tmp_path), kills, before_first, seed=3)


@pytest.mark.parametrize(("kills", "before_first"), SLOW_KILLS)
def test_an_experiment_directory_survives_sigkill(
    tmp_path: Path, kills: int, before_first: bool
) -> None:
    conditions = tmp_path / "conditions.toml"
    conditions.write_text(
        '[slow-a]\nstore = "slow"\noptions = { delay = 0.004 }\n'
        '[slow-b]\nstore = "slow"\noptions = { delay = 0.004 }\n'
    )
    cmd = [
        MNEMOMETER,
        "run",
        str(EXAMPLES / "suites" / "team-memory"),
        "--conditions",
        str(conditions),
    ]
    cmd += ["--condition", "slow-a", "--condition", "slow-b", "--repeat", "2", "--format", "none"]
    _check(tmp_path, cmd, _env(tmp_path), kills, before_first, seed=4)


@pytest.mark.parametrize(("kills", "before_first"), SLOW_KILLS)
def test_build_tasks_survive_sigkill(tmp_path: Path, kills: int, before_first: bool) -> None:
    cmd = [MNEMOMETER, "run", str(EXAMPLES / "suites" / "build-site"), "--allow-shell"]
    cmd += ["--format", "none"]
    # Two conditions, each a task and a three-step sequence: 8 lines.
    _check(tmp_path, cmd, _env(tmp_path), kills, before_first, seed=5)


def test_the_kill_helpers_see_a_run_that_finished_first(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    assert _kill_at(proc, lambda: -1, 5) is False
