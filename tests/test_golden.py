"""The golden set: real runs score exactly what they scored when the goldens were made.

``tests/data/golden/`` holds the numbers of the demo runs, Harry Potter retrieval, two
MemTest sets, LoCoMo (two conversations, two judges) and the scenarios (with the test LLM
server), captured by ``tests/golden.py`` from the code before scoring became its own stage
(issue 28). Each run here is made again with this checkout through the CLI and compared
item by item and metric by metric; any difference fails with where it is.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import golden
import pytest
from conftest import MNEMOMETER, REPO, seed_file

GOLDEN = REPO / "tests" / "data" / "golden"
FAST = ("demo-en-keyword", "demo-en-bm25", "demo-zh-keyword", "demo-zh-bm25")
LLM = ("locomo-2-bm25", "scenarios-rag-bm25")
SLOW = ("hp-bm25", "memtest-hp-bm25", "memtest-sample100-bm25", *LLM)


def _check(name: str, tmp_path: Path, llm: tuple[str, str] | None) -> None:
    argv = golden.runs(llm)[name]
    for arg in argv:
        if "seed-data" in arg:
            seed_file(*Path(arg).parts[-2:])  # skips when ../shared is not beside the clone
    run_dir = tmp_path / name
    done = subprocess.run(
        [MNEMOMETER, *argv, "--out", str(run_dir), "--format", "none"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    expected = golden.read(GOLDEN / f"{name}.json.gz")
    found = golden.diff(expected, golden.capture(run_dir))
    assert not found, f"{name} differs from its golden numbers:\n" + "\n".join(found)


@pytest.mark.parametrize("name", FAST)
def test_demo_runs_score_their_golden_numbers(name: str, tmp_path: Path):
    _check(name, tmp_path, None)


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_seed_and_benchmark_runs_score_their_golden_numbers(name: str, tmp_path: Path):
    if name in LLM:
        with golden.server() as srv:
            _check(name, tmp_path, (srv.base_url, srv.model))
    else:
        _check(name, tmp_path, None)


def test_the_golden_set_is_every_run_it_names():
    assert sorted(golden.runs(("u", "m"))) == sorted(FAST + SLOW)
    assert sorted(p.name for p in GOLDEN.glob("*.json.gz")) == sorted(
        f"{n}.json.gz" for n in FAST + SLOW
    )


def test_a_changed_number_is_found():
    doc = golden.read(GOLDEN / "demo-en-bm25.json.gz")
    changed = golden.read(GOLDEN / "demo-en-bm25.json.gz")
    changed["items"][3]["metrics"][0]["value"] += 1e-6
    assert golden.diff(doc, doc) == []
    assert len(golden.diff(doc, changed)) == 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
