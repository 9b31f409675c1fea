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
written atomically. When it cannot be written, jieba loads its dictionary as before.
"""

from __future__ import annotations

import array
import logging
import marshal
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

_MAGIC = b"mnemometer-jieba-1\n"


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
    """A jieba prefix dictionary that fills ``freq`` one first character at a time."""

    def __init__(
        self, total: int, index: dict[str, tuple[int, int, int, int]], keys: bytes, values: bytes
    ) -> None:
        self.total = total
        self.freq: dict[str, int] = {}
        self._index = index
        self._keys = keys
        self._values = array.array("q")
        self._values.frombytes(values)
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
                    words = self._keys[k0:k1].decode("utf-8").split("\n")
                    self.freq.update(zip(words, self._values[v0 : v0 + n].tolist(), strict=True))
                self._loaded.add(ch)  # after the words: a reader never sees half a group


def _write(path: Path, freq: dict[str, int], total: int) -> None:
    groups: dict[str, list[str]] = {}
    for word in freq:
        if word:  # jieba never looks up an empty string
            groups.setdefault(word[0], []).append(word)
    keys, values = bytearray(), array.array("q")
    index: dict[str, tuple[int, int, int, int]] = {}
    for ch, words in groups.items():
        blob = "\n".join(words).encode("utf-8")
        index[ch] = (len(keys), len(keys) + len(blob), len(values), len(words))
        keys += blob
        values.extend(freq[w] for w in words)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(_MAGIC)
        marshal.dump((total, index, bytes(keys), values.tobytes()), f)
    os.replace(tmp, path)


def _read(path: Path) -> LazyDictionary | None:
    try:
        with open(path, "rb") as f:
            if f.read(len(_MAGIC)) != _MAGIC:
                return None
            total, index, keys, values = marshal.load(f)
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
