"""Storage read-back: which versions are read back, and by what search.

A version counts as stored when a search for its *content* returns its memory: the
version's text without the names in it (the people and places its labels name, and every
capitalised word). Searching the whole text let a store that kept nothing but names pass:
BM25 over each memory's capitalised words (41% of the English tokens) read back 99.3% of
the English versions, and over its people and places 96.0% of the Chinese ones, because
the names alone pick a memory out. What is left (the action, the object, the price, the
date) is what a store must have kept. A version that is nothing but names is searched
whole: then the names are its content. Other memories with a version holding every word
of that content cannot be told apart from it by the search, so the window widens by their
number. Searching the content beats checking that a hit's text covers it: a store can echo
the query back as its text, and many stores return no text at all.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from itertools import chain
from random import Random

from mnemometer.datasets._models import Dataset, Memory
from mnemometer.suites.memtest._labels import names
from mnemometer.text import tokenizer

_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_EN_WORD = re.compile(r"\w+(?:'+\w+)*")
_CJK_OR_WORD = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[^\W_\u3400-\u9fff\uf900-\ufaff]+")


def read_back_text(text: str, known: tuple[str, ...]) -> str:
    """``text`` without its names: the ``known`` ones and every capitalised word.

    The whole ``text`` when nothing but names (and punctuation) would be left.
    """
    # Capitalised words first, so a possessive goes with its name ("Gordon's").
    out = _WORD.sub(lambda w: " " if w.group()[0].isupper() else w.group(), text)
    for name in known:  # longest first, so a full name goes before a part of it
        out = out.replace(name, " ")
    out = " ".join(out.split())
    return out if _WORD.search(out) or any(c.isdigit() for c in out) else text


def read_back_plan(
    dataset: Dataset, sample: list[Memory], *, first: bool = False
) -> list[tuple[str, str, str, int]]:
    """``(memory id, style, probe, twins)`` for every version of the ``sample``'s memories.

    With ``first``, for the first version of each only.

    ``twins``: other memories with a version that holds every word of the probe, which a
    search for it cannot tell apart from the memory (its read-back window widens by them).
    Words are compared as a lexical store sees them: English stemmed without stop words
    (``swim caps`` holds ``a swim cap``), Chinese character by character.
    """
    tokens = words(dataset.info.language)
    probes = []
    for m in sample:
        known = names(m)
        for style, text in m.texts()[:1] if first else m.texts():
            probe = read_back_text(text, known)
            probes.append((m.id, style, probe, tokens(probe)))
    vocab = frozenset().union(*(t for *_, t in probes))
    # One pass: which versions hold each probe word (only those words matter).
    owner: list[str] = []  # version -> its memory's id
    held: dict[str, set[int]] = defaultdict(set)
    for m in dataset.memories:
        for _, text in m.texts():
            for w in tokens(text) & vocab:
                held[w].add(len(owner))
            owner.append(m.id)
    alike: dict[frozenset[str], set[str]] = {}  # many probes share their words
    out = []
    for mid, style, probe, t in probes:
        if t not in alike:
            both = set.intersection(*sorted((held[w] for w in t), key=len)) if t else set()
            alike[t] = {owner[i] for i in both}
        out.append((mid, style, probe, len(alike[t] - {mid})))
    return out


def words(lang: str) -> Callable[[str], frozenset[str]]:
    """The set of words a text holds, as :func:`read_back_plan` compares them."""
    if lang == "zh":
        return lambda text: frozenset(_CJK_OR_WORD.findall(text.casefold()))
    stems = _Stems(tokenizer("en", stem=True))  # each distinct word stemmed once
    return lambda text: frozenset(
        chain.from_iterable(map(stems.__getitem__, _EN_WORD.findall(text.casefold())))
    )


class _Stems(dict[str, tuple[str, ...]]):
    """Word -> its tokens (a stem, or none for a stop word), computed on first use."""

    def __init__(self, split: Callable[[str], list[str]]) -> None:
        super().__init__()
        self.split = split

    def __missing__(self, word: str) -> tuple[str, ...]:
        self[word] = got = tuple(self.split(word))
        return got


def storage_sample(dataset: Dataset, limit: int) -> list[Memory]:
    """Memories whose versions are read back: all, or a seeded random sample in file order."""
    mems = dataset.memories
    if not limit or len(mems) <= limit:
        return list(mems)
    # Seeded, not evenly spaced: a fixed stride could alias with a periodic pattern of loss.
    picked = Random("mnemometer-memtest/storage").sample(range(len(mems)), limit)
    return [mems[i] for i in sorted(picked)]
