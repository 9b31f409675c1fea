"""Seeded, real noise on user turns: typos, fillers, repeated words, shouting.

The seed benchmark parsed ``--noise`` and ignored it (and its dead ``noisy()`` shuffled a
copy and always added a token). Here each word is perturbed with probability ``ratio`` by
one of four edits; the random generator is seeded from (seed, scenario, turn, repeat), so a
perturbed turn is the same in every run and under any concurrency.
"""

from __future__ import annotations

import random

FILLERS = ("um", "uh", "like", "you know", "so")


def perturb(text: str, ratio: float, key: str) -> str:
    """``text`` with about ``ratio`` of its words perturbed, reproducibly for ``key``.

    Edits: swap two inner letters of a word (a typo), insert a filler before it, repeat
    it, or change its case. ``ratio`` 0 returns ``text`` unchanged.
    """
    if ratio <= 0:
        return text
    rng = random.Random(key)
    out: list[str] = []
    for word in text.split(" "):
        if not word or rng.random() >= ratio:
            out.append(word)
            continue
        edit = rng.randrange(4)
        if edit == 0 and sum(c.isalpha() for c in word) >= 4:
            i = rng.randrange(1, len(word) - 2)
            if word[i].isalpha() and word[i + 1].isalpha():
                word = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
            out.append(word)
        elif edit == 1:
            out.extend([rng.choice(FILLERS), word])
        elif edit == 2:
            out.extend([word, word])
        else:
            out.append(word.upper() if rng.random() < 0.5 else word.lower())
    return " ".join(out)
