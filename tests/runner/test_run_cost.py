"""What a run pays for before its first item: no HTTP stack without a model, no scan.

A run that asks no model never imports httpx (with its CLI, rich and pygments), nor
``mnemometer.llm`` when no endpoint is configured anywhere; one whose store and summary
need no arrays never imports numpy; a plug-in whose module is named otherwise than its
distribution gets its version from the entry point that registered it, not from a map of
every installed distribution's files.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import plugins
from conftest import seed_file

from mnemometer import _env, run
from mnemometer._registry import refresh
from mnemometer.log import read_header

STORE = '''
class Store:
    """Keeps texts; finds those sharing a word with the query."""

    def __init__(self):
        self.docs = []

    def reset(self):
        self.docs = []

    def store(self, text, metadata):
        self.docs.append((metadata["memory_id"], set(text.lower().split())))

    def search(self, query, top_k):
        words = set(query.lower().split())
        return [{"memory_id": m, "score": 1.0} for m, w in self.docs if w & words][:top_k]
'''


def test_a_run_that_asks_no_model_imports_no_http_client(tmp_path: Path) -> None:
    out = tmp_path / "r"
    code = (
        "import sys\nfrom mnemometer.cli.main import main\ntry:\n"
        f"    main(['run', 'retrieval', '-d', 'demo-en', '-s', 'bm25', '--out', {str(out)!r}, "
        "'--format', 'none'])\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "print(sorted(m for m in ('httpx', 'mnemometer.http', 'mnemometer.llm', 'rich') "
        "if m in sys.modules))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMOMETER_LLM_")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert read_header(out).status == "finished"


def test_a_run_whose_store_and_summary_need_no_arrays_imports_no_numpy(tmp_path: Path) -> None:
    """One LoCoMo conversation (one cluster: no interval to compute) and a pure-Python store."""
    locomo = seed_file("locomo", "locomo10.json")
    code = (
        "import sys\nfrom mnemometer import load_dataset, run\n"
        + STORE
        + f"\nds = load_dataset({str(locomo)!r}).with_turn_memories('conv-26')\n"
        + f"res = run('retrieval', Store(), dataset=ds, out={str(tmp_path / 'r')!r})\n"
        + "print(res.summary.counts['items'], 'numpy' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["199", "False"]


def test_a_plugin_version_comes_from_the_distribution_that_registers_it(
    tmp_path: Path, monkeypatch
) -> None:
    root = plugins._distribution(
        tmp_path / "plug",
        "acme-memory",
        "2.5",
        {"acme_store_impl.py": STORE},
        "[mnemometer.stores]\nacme = acme_store_impl:Store\n",
    )

    def scan() -> dict:
        raise AssertionError("read every installed distribution's files")

    monkeypatch.setattr(_env, "_packages_distributions", scan)
    monkeypatch.syspath_prepend(str(root))
    refresh()
    try:
        res = run("retrieval", "acme", dataset="demo-en", out=tmp_path / "r")
    finally:
        monkeypatch.undo()
        refresh()
    system = read_header(res.path).system
    assert system.implementation == "acme_store_impl:Store"
    assert system.version == "2.5"
