"""``build`` and ``clean`` SIGKILLed at seeded points resume to what an uninterrupted run makes.

``build`` is a subprocess asking the deterministic LLM server in this process. The server
holds the reply to the chosen request until the test has killed the build, so the kill
lands while that request is in flight, with every earlier chunk answered: no sleeping for
a guessed time. ``clean`` is killed from inside, by a driver that sends itself SIGKILL
after the k-th line of the output is written, or just before the finished file is renamed
into place.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from build_helpers import EN_FILES, extraction_reply, is_extraction, write_corpus
from conftest import MNEMOMETER

from mnemometer.datasets import load_dataset, save_dataset
from mnemometer.datasets.build import checkpoint_path
from mnemometer.testing import FakeLLMServer

CORPUS = {
    **EN_FILES,
    **{
        f"book3/ch{i}.md": "\n\n".join(
            f"Erin{chr(97 + i)} carried lamp {j} at the Mill in {1900 + i * 10 + j}."
            for j in range(3)
        )
        for i in range(8)
    },
}


class Gate:
    """Hold the reply to extraction request number ``at`` (or the first classification
    request, ``at=0``) until released; tell the test when it arrives."""

    def __init__(self) -> None:
        self.at = -1
        self.seen = 0
        self.arrived = threading.Event()
        self.release = threading.Event()

    def arm(self, at: int) -> None:
        self.at, self.seen = at, 0
        self.arrived.clear()
        self.release.clear()

    def reply(self, body: dict[str, Any]) -> str:
        hit = False
        if is_extraction(body):
            self.seen += 1
            hit = self.seen == self.at
        else:
            hit = self.at == 0
        if hit:
            self.arrived.set()
            self.release.wait(60)
        return extraction_reply(body)


def _build(corpus: Path, out: Path, srv: FakeLLMServer, *extra: str) -> list[str]:
    return [
        MNEMOMETER,
        "build",
        str(corpus),
        "-o",
        str(out),
        "--llm-base-url",
        srv.base_url,
        "--llm-model",
        srv.model,
        "--no-llm-cache",
        "--max-chars",
        "200",
        "-c",
        "1",
        *extra,
    ]


def _content(path: Path) -> tuple[list[dict], list[dict]]:
    """Memories and queries as plain data (the provenance note differs: times, counts)."""
    ds = load_dataset(path)
    return [m.model_dump() for m in ds.memories], [q.model_dump() for q in ds.queries]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [7, 11])
def test_build_survives_sigkill_at_seeded_points(tmp_path: Path, seed: int) -> None:
    corpus = write_corpus(tmp_path / "corpus", CORPUS)
    gate = Gate()
    with FakeLLMServer(default=gate.reply) as srv:
        full = subprocess.run(
            _build(corpus, tmp_path / "full.json", srv), capture_output=True, text=True
        )
        assert full.returncode == 0, full.stderr
        chunks = sum(1 for b in srv.chat_requests() if is_extraction(b))
        assert chunks >= 8
        rng = random.Random(seed)
        # Two kills among the chunks, one while the locations are classified.
        points = [*sorted(rng.sample(range(1, chunks + 1), 2)), 0]
        out = tmp_path / "killed.json"
        asked = 0
        for n, at in enumerate(points):
            gate.arm(at if at == 0 else at - asked)
            before = len(srv.chat_requests())
            proc = subprocess.Popen(
                _build(corpus, out, srv, *(["--resume"] if n else [])),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            assert gate.arrived.wait(120), "the build never reached its kill point"
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            gate.release.set()
            new = [b for b in srv.chat_requests()[before:] if is_extraction(b)]
            # It asked from the first chunk the checkpoint lacks: the kill landed on
            # request number gate.at of this attempt (classification: after all chunks).
            assert len(new) == (gate.at if at else chunks - asked)
            saved = checkpoint_path(out).read_text().splitlines()
            asked = len([x for x in saved if x.strip()])
            assert not out.exists()
        gate.arm(-1)
        before = len(srv.chat_requests())
        done = subprocess.run(_build(corpus, out, srv, "--resume"), capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        new = [b for b in srv.chat_requests()[before:] if is_extraction(b)]
    assert len(new) == chunks - asked, "a finished chunk was asked again"
    assert _content(out) == _content(tmp_path / "full.json")
    assert not checkpoint_path(out).exists()


DRIVER = """
import os, signal, sys
import mnemometer.datasets._io as io_mod
from mnemometer.cli.main import main

at = int(os.environ["KILL_AT_LINE"])
real_open = open


class Killing:
    def __init__(self, f):
        self.f, self.n = f, 0
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return self.f.__exit__(*exc)
    def write(self, text):
        self.f.write(text)
        self.n += 1
        if self.n == at:
            self.f.flush()
            os.kill(os.getpid(), signal.SIGKILL)


def killing_open(path, mode="r", *a, **kw):
    f = real_open(path, mode, *a, **kw)
    return Killing(f) if "w" in mode and at > 0 else f


def killing_replace(src, dst):
    os.kill(os.getpid(), signal.SIGKILL)


io_mod.open = killing_open
if at == 0:
    io_mod.os = type("os", (), {"replace": staticmethod(killing_replace), "getpid": os.getpid})
sys.argv = ["mnemometer", *sys.argv[1:]]
main()
"""


@pytest.mark.slow
@pytest.mark.parametrize("seed", [3])
def test_clean_killed_while_saving_leaves_the_old_output_and_reruns_the_same(
    tmp_path: Path, seed: int
) -> None:
    src = tmp_path / "in.jsonl"
    save_dataset(load_dataset("demo-en"), src)
    out = tmp_path / "out.jsonl"
    full = tmp_path / "full.jsonl"
    base = [sys.executable, "-c", DRIVER, "clean", str(src)]
    env = {**os.environ, "KILL_AT_LINE": "-1"}
    r = subprocess.run([*base, "-o", str(full)], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = len(full.read_text().splitlines())
    out.write_text("previous output\n")
    # Seeded points inside the write, and the moment before the rename (0).
    for at in [*random.Random(seed).sample(range(1, lines + 1), 3), 0]:
        env["KILL_AT_LINE"] = str(at)
        r = subprocess.run([*base, "-o", str(out)], env=env, capture_output=True, text=True)
        assert r.returncode == -signal.SIGKILL, (at, r.stderr[-2000:])
        assert out.read_text() == "previous output\n", f"a kill at line {at} tore the output"
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp"))
    env["KILL_AT_LINE"] = "-1"
    r = subprocess.run([*base, "-o", str(out)], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == full.read_bytes()
    # Each killed save left its temporary file; the next save removes them.
    assert len(leftovers) == 4 and all(n.startswith(".out.jsonl.") for n in leftovers)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert json.loads(out.read_text().splitlines()[0])["kind"] == "info"
