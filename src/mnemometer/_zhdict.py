"""jieba's dictionary, loaded a first character at a time from a cache built once.

jieba keeps its prefix dictionary (about 500,000 words and word prefixes with their
frequencies) in one dict and loads all of it before cutting anything: 0.6 s of CPU for
every process that tokenises Chinese, even for three sentences. Every lookup jieba makes
while cutting a sentence (``get_DAG``, ``calc``, ``cut_for_search``'s 2- and 3-grams) is
a substring of that sentence, so it starts with one of the sentence's characters. This
module therefore stores the dictionary grouped by first character, and before a sentence
is cut loads the groups of the characters it has not seen yet: the dict jieba reads
answers every lookup for that sentence exactly as the full one would, so tokens are
identical (``tests/test_text.py`` checks it against jieba's own dictionary).

The cache is one file under the mnemometer cache directory, keyed by jieba's version and
its dictionary file; it is built on first use (from jieba's own cache when it has one) and
written atomically, and the oldest are removed beyond :data:`KEEP` (each install of jieba,
a new virtual environment, has its own). It is mapped into memory, not read: a run reads
the index (12,000 characters) and the groups it needs. When it cannot be written, jieba
loads its dictionary as before.
"""

from __future__ import annotations

import array
import logging
import marshal
import mmap
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

_MAGIC = b"mnemometer-jieba-2\n"
KEEP = 4
"""Cache files kept (the newest): one per jieba install in use on the machine."""


def cache_file() -> Path | None:
    """The cache file for the installed jieba and its dictionary (None: no dictionary)."""
    import jieba

    from mnemometer._env import cache_root

    path = Path(jieba.__file__).with_name(jieba.DEFAULT_DICT_NAME)
    try:
        st = path.stat()
    except OSError:
        return None
    key = f"{jieba.__version__}-{st.st_size}-{st.st_mtime_ns}"
    return cache_root() / "jieba" / f"prefix-dict-{key}.bin"


class LazyDictionary:
    """A jieba prefix dictionary that fills ``freq`` one first character at a time.

    Args:
        total: the sum of every word's frequency (jieba's ``total``).
        index: first character -> (start and end of its words in ``keys``, start and count
            of their frequencies in ``values``).
        keys: the words, UTF-8, one group per first character, a newline between words.
        values: the frequencies as signed 64-bit integers, in the words' order.
    """

    def __init__(
        self,
        total: int,
        index: dict[str, tuple[int, int, int, int]],
        keys: bytes | memoryview,
        values: memoryview,
    ) -> None:
        self.total = total
        self.freq: dict[str, int] = {}
        self._index = index
        self._keys = keys
        self._values = values
        self._loaded: set[str] = set()
        self._lock = threading.Lock()

    def ensure(self, sentence: str) -> None:
        """Load the words starting with any character of ``sentence`` (thread-safe)."""
        new = set(sentence) - self._loaded
        if not new:
            return
        with self._lock:
            for ch in new - self._loaded:
                span = self._index.get(ch)
                if span is not None:
                    k0, k1, v0, n = span
                    words = str(self._keys[k0:k1], "utf-8").split("\n")
                    self.freq.update(zip(words, self._values[v0 : v0 + n].tolist(), strict=True))
                self._loaded.add(ch)  # after the words: a reader never sees half a group


def _write(path: Path, freq: dict[str, int], total: int) -> None:
    """The cache: magic, header length, marshalled header, words, then frequencies."""
    groups: dict[str, list[str]] = {}
    for word in freq:
        if word:  # jieba never looks up an empty string
            groups.setdefault(word[0], []).append(word)
    keys = bytearray()
    values: list[int] = []
    index: dict[str, tuple[int, int, int, int]] = {}
    for ch, words in groups.items():
        blob = "\n".join(words).encode("utf-8")
        index[ch] = (len(keys), len(keys) + len(blob), len(values), len(words))
        keys += blob
        values.extend(freq[w] for w in words)
    keys += b"\0" * (-len(keys) % 8)  # frequencies start 8-byte aligned
    header = marshal.dumps((total, index, len(keys), len(values)))
    start = len(_MAGIC) + 8 + len(header)
    pad = b"\0" * (-start % 8)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(_MAGIC + (len(header) + len(pad)).to_bytes(8, "little") + header + pad)
        f.write(keys)
        f.write(array.array("q", values).tobytes())
    os.replace(tmp, path)
    _remove_old(path)


def _remove_old(path: Path) -> None:
    """Keep the newest :data:`KEEP` cache files (a new install of jieba writes a new one)."""
    others = sorted(path.parent.glob("prefix-dict-*.bin"), key=_mtime, reverse=True)
    for old in others[KEEP:]:
        try:
            old.unlink(missing_ok=True)
        except OSError:  # in use where a mapped file cannot be deleted: next time
            pass


def _mtime(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except OSError:
        return 0.0


def _read(path: Path) -> LazyDictionary | None:
    try:
        with open(path, "rb") as f:
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        if mm[: len(_MAGIC)] != _MAGIC:
            return None
        size = int.from_bytes(mm[len(_MAGIC) : len(_MAGIC) + 8], "little")
        start = len(_MAGIC) + 8
        total, index, n_keys, n_values = marshal.loads(mm[start : start + size])
        at = start + size
        if len(mm) != at + n_keys + 8 * n_values:  # torn or foreign: build it again
            return None
        view = memoryview(mm)
        keys, values = view[at : at + n_keys], view[at + n_keys :].cast("q")
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return LazyDictionary(total, index, keys, values)


def jieba_cutter() -> Callable[[str], list[str]]:
    """``cut(sentence)``: jieba's search-mode cut over the lazily loaded dictionary.

    Uses a private ``jieba.Tokenizer``, so the process-wide ``jieba.dt`` (and anyone else
    using it) keeps the full dictionary.
    """
    import jieba

    jieba.setLogLevel(logging.WARNING)
    tk: Any = jieba.Tokenizer()
    path = cache_file()
    lazy = _read(path) if path is not None and path.exists() else None
    if lazy is None:
        tk.initialize()  # jieba's own loader (and its /tmp cache)
        if path is not None:
            try:
                _write(path, tk.FREQ, tk.total)
            except OSError:
                pass  # a read-only cache: every run loads the whole dictionary, as before
        return tk.lcut_for_search
    tk.FREQ, tk.total, tk.initialized = lazy.freq, lazy.total, True

    def cut(sentence: str) -> list[str]:
        lazy.ensure(sentence)
        return tk.lcut_for_search(sentence)

    return cut
