"""Third-party plug-ins for tests, discovered through real entry points.

``install(tmp)`` writes a ``*.dist-info`` with an ``entry_points.txt`` next to the modules
below, exactly as pip would; putting ``tmp`` on ``PYTHONPATH`` (or ``sys.path``) makes
``importlib.metadata`` find them.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

MODULE = '''
import os, signal, threading, time
from pathlib import Path


class SlowStore:
    """bm25 taking ``delay`` seconds a search: slow enough to be killed mid-run.

    ``calls`` names a file that gets one line per search (the query), so a test can tell
    whether a resumed run asked a finished item again.
    """

    def __init__(self, delay=0.02, calls="", lang="auto"):
        from mnemometer.stores.bm25 import BM25Store

        self._inner = BM25Store(lang=lang)
        self.delay, self.calls = float(delay), calls
        self._lock = threading.Lock()

    def reset(self):
        self._inner.reset()

    def store(self, text, metadata):
        self._inner.store(text, metadata)

    def flush(self):
        self._inner.flush()

    def search(self, query, top_k):
        time.sleep(self.delay)
        if self.calls:
            with self._lock, open(self.calls, "a", encoding="utf-8") as f:
                f.write(query.replace("\\n", " ") + "\\n")
        return self._inner.search(query, top_k)


class KillerStore:
    """Keyword-like store that SIGKILLs its own process once, after N searches."""

    def __init__(self, after=5, marker=""):
        self.after, self.marker, self.n = int(after), marker, 0
        self.docs = []
        self.lock = threading.Lock()

    def reset(self):
        self.docs = []

    def store(self, text, metadata):
        self.docs.append((metadata["memory_id"], set(text.lower().split())))

    def search(self, query, top_k):
        with self.lock:
            self.n += 1
            if self.n > self.after and self.marker and not Path(self.marker).exists():
                Path(self.marker).write_text("killed")
                os.kill(os.getpid(), signal.SIGKILL)
        words = set(query.lower().split())
        scored = [(len(words & d), i, mid) for i, (mid, d) in enumerate(self.docs)]
        scored = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
        # MemTest-style dict results: a seed adapter ports unchanged.
        return [{"memory_id": mid, "score": float(s), "content": ""} for s, _, mid in scored[:top_k]]


class NeedsExtra:
    """A store whose SDK is not installed."""

    def __init__(self):
        from mnemometer._registry import require
        require("surely_not_installed_sdk", "vector", "store 'needs-extra'")
'''

READER_MODULE = '''
"""A dataset format plug-in: one "question<TAB>fact" pair a line, in a .qa.tsv file."""
from mnemometer.datasets import Dataset, DatasetInfo, Memory, Query, Reader


def sniff(path, head):
    return path.name.endswith(".qa.tsv")


def read(path):
    memories, queries = [], []
    for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        question, fact = line.split("\\t")
        memories.append(Memory(id=f"m{n}", text=fact))
        queries.append(Query(id=f"q{n}", text=question, relevant_ids=[f"m{n}"]))
    return Dataset(info=DatasetInfo(name=path.stem), memories=memories, queries=queries)


READER = Reader(name="qa-tsv", description="question<TAB>fact pairs", sniff=sniff, read=read)
NOT_A_READER = object()
'''

ENTRY_POINTS = """
[mnemometer.stores]
killer = mnemo_test_plugin:KillerStore
slow = mnemo_test_plugin:SlowStore
needs-extra = mnemo_test_plugin:NeedsExtra
broken = mnemo_test_broken:Store
"""

# Separate, so that only the tests about readers see broken ones while loading datasets.
READER_ENTRY_POINTS = """
[mnemometer.readers]
qa-tsv = mnemo_test_reader:READER
broken-reader = mnemo_test_broken:READER
not-a-reader = mnemo_test_reader:NOT_A_READER
"""


def install(root: Path, *, readers: bool = False) -> Path:
    """Write the plug-in package and its dist-info under ``root``; return ``root``.

    ``readers=True`` also registers a dataset reader, a broken one and a non-reader.
    """
    root.mkdir(parents=True, exist_ok=True)
    # A test that sets PYTHONPATH to ``root`` alone keeps its children under the guard.
    shutil.copy(Path(__file__).with_name("netguard_site") / "sitecustomize.py", root)
    (root / "mnemo_test_plugin.py").write_text(textwrap.dedent(MODULE))
    (root / "mnemo_test_reader.py").write_text(textwrap.dedent(READER_MODULE))
    (root / "mnemo_test_broken.py").write_text("raise RuntimeError('this plug-in is broken')\n")
    info = root / "mnemo_test_plugin-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mnemo-test-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS + (READER_ENTRY_POINTS if readers else ""))
    return root
