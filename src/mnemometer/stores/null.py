"""``none``: a store that remembers nothing (the ``no-memory`` condition's baseline)."""

from __future__ import annotations

from typing import Any

from mnemometer.stores._protocol import Hit


class NullStore:
    """Remembers nothing: every search returns no hits.

    The honest baseline of a paired ablation: the same suite, the same answerer, no memory.
    """

    abstains = True

    def reset(self) -> None:
        """Nothing to clear."""

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        """Forget ``text`` at once."""

    def search(self, query: str, top_k: int) -> list[Hit]:
        """No hits, ever."""
        return []
