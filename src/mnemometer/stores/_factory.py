"""Create stores by registered name, with options and run context."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mnemometer._registry import STORES
from mnemometer.stores._protocol import Store


def store_names() -> list[str]:
    """Every registered store name."""
    return STORES.names()


def create_store(
    name: str,
    options: dict[str, Any] | None = None,
    *,
    lang: str | None = None,
    workdir: Path | None = None,
    llm: Any = None,
    tie_seed: int | None = None,
) -> Store:
    """Create the store registered as ``name``.

    Args:
        name: registered name (``keyword``, ``bm25``, ``tfidf``, or a plug-in's).
        options: keyword arguments for the store's factory.
        lang: dataset language, offered to factories that take ``lang``.
        workdir: a directory inside the run directory, offered to factories that take
            ``workdir`` (stores that keep files keep them there).
        llm: the run's LLM endpoint (:class:`~mnemometer.llm.LLMSettings`, from
            ``--llm-base-url``/``--llm-model``), offered to factories that take ``llm``
            (stores that ask a model while they store); their own options win over it.
        tie_seed: offered to factories that take ``tie_seed`` (a wrapping store passes
            its own on to the store it wraps).

    Raises:
        MnemometerError: unknown name, bad option, missing extra, or not a Store.
    """
    context = {"lang": lang or None, "workdir": workdir, "llm": llm, "tie_seed": tie_seed}
    return STORES.make(name, options, ("reset", "store", "search"), **context)
