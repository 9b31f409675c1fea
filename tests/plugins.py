"""Third-party plug-ins for tests, discovered through real entry points.

``install(tmp)`` writes a ``*.dist-info`` with an ``entry_points.txt`` next to the modules
below, exactly as pip would; putting ``tmp`` on ``PYTHONPATH`` (or ``sys.path``) makes
``importlib.metadata`` find them. ``install_project(tmp, project)`` does the same for a
plug-in project as a user writes it (``pyproject.toml`` beside its modules).
"""

from __future__ import annotations

import shutil
import textwrap
import tomllib
from pathlib import Path

MODULE = '''
import os, signal, threading, time
from pathlib import Path


class SlowStore:
    """bm25 taking ``delay`` seconds a search: slow enough to be killed mid-run.

    ``calls`` names a file that gets one line per search (the query), so a test can tell
    whether a resumed run asked a finished item again; ``store_delay`` seconds a store
    call, so a kill can land while the store is filled.
    """

    def __init__(self, delay=0.02, calls="", lang="auto", store_delay=0.0):
        from mnemometer.stores.bm25 import BM25Store

        self._inner = BM25Store(lang=lang)
        self.delay, self.calls = float(delay), calls
        self.store_delay = float(store_delay)
        self._lock = threading.Lock()

    def reset(self):
        self._inner.reset()

    def store(self, text, metadata):
        if self.store_delay:
            time.sleep(self.store_delay)
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


class WaitingStore:
    """bm25 whose ``at``-th search says so through the FIFO ``ready`` and then waits.

    The test opens the FIFO for reading (so the store's write returns) and then knows the
    run is in the middle of an item: the moment to interrupt it. Without ``ready`` it is
    plain bm25 (a resume).
    """

    def __init__(self, at=3, ready="", lang="auto"):
        from mnemometer.stores.bm25 import BM25Store

        self._inner = BM25Store(lang=lang)
        self.at, self.ready, self.n = int(at), ready, 0

    def reset(self):
        self._inner.reset()

    def store(self, text, metadata):
        self._inner.store(text, metadata)

    def search(self, query, top_k):
        self.n += 1
        if self.ready and self.n == self.at:
            with open(self.ready, "w") as f:  # blocks until the test reads
                f.write("searching\\n")
            threading.Event().wait()  # until the process is interrupted
        return self._inner.search(query, top_k)


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
waiting = mnemo_test_plugin:WaitingStore
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


# A broken renderer and a broken kind: every other format must still render.
RENDERER_ENTRY_POINTS = """
[mnemometer.renderers]
run.broken = mnemo_test_broken:run_broken
broken = mnemo_test_broken:Broken
"""


def install(root: Path, *, readers: bool = False, renderers: bool = False) -> Path:
    """Write the plug-in package and its dist-info under ``root``; return ``root``.

    ``readers=True`` also registers a dataset reader, a broken one and a non-reader;
    ``renderers=True`` a broken report format and a broken kind.
    """
    modules = {
        "mnemo_test_plugin.py": textwrap.dedent(MODULE),
        "mnemo_test_reader.py": textwrap.dedent(READER_MODULE),
        "mnemo_test_broken.py": "raise RuntimeError('this plug-in is broken')\n",
    }
    eps = ENTRY_POINTS + (READER_ENTRY_POINTS if readers else "")
    eps += RENDERER_ENTRY_POINTS if renderers else ""
    return _distribution(root, "mnemo-test-plugin", "0.1", modules, eps)


def install_project(root: Path, project: Path) -> Path:
    """Install a flat plug-in project (``pyproject.toml`` beside its modules) under ``root``.

    What pip would leave: the modules, and a dist-info with the ``[project]`` table's name,
    version and entry points. Returns ``root``.
    """
    meta = tomllib.loads((project / "pyproject.toml").read_text("utf-8"))["project"]
    modules = {p.name: p.read_text("utf-8") for p in project.glob("*.py")}
    eps = "".join(
        f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in table.items())
        for group, table in meta.get("entry-points", {}).items()
    )
    return _distribution(root, meta["name"], meta["version"], modules, eps)


def _distribution(
    root: Path, name: str, version: str, modules: dict[str, str], entry_points: str
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    # A test that sets PYTHONPATH to ``root`` alone keeps its children under the guard.
    shutil.copy(Path(__file__).with_name("netguard_site") / "sitecustomize.py", root)
    for file, text in modules.items():
        (root / file).write_text(text)
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(entry_points)
    return root
