"""A complete third-party store: the example behind docs/adapters.md.

It keeps memories in a dict and ranks them by how many query words occur in them. The three
methods are all a store needs; ``list_ids`` and ``delete`` are optional capabilities the
runner detects on its own.

Register it from your package's pyproject.toml::

    [project.entry-points."mnemometer.stores"]
    substring = "substring_store:SubstringStore"

or in-process with ``mnemometer._registry.STORES.register("substring", SubstringStore)``.
"""

from __future__ import annotations

import re
from typing import Any

from mnemometer import Hit


class SubstringStore:
    """Counts query words contained in each memory (case-insensitive).

    Args:
        min_word: ignore query words shorter than this.
    """

    abstains = True  # an empty result means "nothing relevant"

    def __init__(self, min_word: int = 3) -> None:
        self.min_word = min_word
        self.texts: dict[str, list[str]] = {}

    def reset(self) -> None:
        """Forget everything."""
        self.texts.clear()

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        """Keep one text under its memory id."""
        # Several stylistic versions of one memory arrive under the same id.
        self.texts.setdefault(metadata["memory_id"], []).append(text.lower())

    def search(self, query: str, top_k: int) -> list[Hit]:
        """Memories holding the most query words (of at least ``min_word`` letters)."""
        words = [w for w in re.findall(r"\w+", query.lower()) if len(w) >= self.min_word]
        scored = []
        for mid, texts in self.texts.items():
            score = max(sum(w in t for w in words) for t in texts)
            if score:
                scored.append(Hit(mid, float(score), texts[0]))
        scored.sort(key=lambda h: -h.score)  # stable: ties keep insertion order
        return scored[:top_k]

    def list_ids(self) -> list[str]:
        """Ids of every stored memory."""
        return list(self.texts)

    def delete(self, memory_id: str) -> None:
        """Forget one memory."""
        self.texts.pop(memory_id, None)
