"""One renderer registry for everything mnemometer prints: runs, comparisons, gates, doctor.

A renderer turns one kind of object into text in one format. Kinds and formats register
here (``text``, ``md``, ``json``, ``html``, ``csv``), and every command's ``--format`` lists
what is registered for its kind, so a new format appears everywhere at once. A renderer may
take keyword context (the HTML comparison takes a gate verdict); ``render`` passes it on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mnemometer.errors import MnemometerError, did_you_mean

Renderer = Callable[..., str]
_RENDERERS: dict[str, dict[str, Renderer]] = {}
_KINDS: list[tuple[type, str]] = []


def renderer(kind: str, fmt: str) -> Callable[[Renderer], Renderer]:
    """Register the decorated function as the ``fmt`` renderer of ``kind``."""

    def register(fn: Renderer) -> Renderer:
        _RENDERERS.setdefault(kind, {})[fmt] = fn
        return fn

    return register


def register_kind(cls: type, kind: str) -> None:
    """Objects of ``cls`` render as ``kind``."""
    _KINDS.append((cls, kind))


def formats(kind: str) -> list[str]:
    """The formats registered for ``kind``, in registration order."""
    _load_builtins()
    return list(_RENDERERS.get(kind, {}))


def kind_of(obj: Any) -> str:
    """The registered kind of ``obj``.

    Raises:
        MnemometerError: nothing renders objects of its type.
    """
    _load_builtins()
    for cls, kind in _KINDS:
        if isinstance(obj, cls):
            return kind
    raise MnemometerError(f"nothing renders a {type(obj).__name__}")


def render(obj: Any, fmt: str = "text", *, kind: str | None = None, **context: Any) -> str:
    """Render ``obj`` (a run log, comparison, gate result, doctor checks) as ``fmt``.

    ``context`` goes to the renderer as keyword arguments (only when given), for what a
    format can show beyond the object itself, e.g. ``gate_result=`` for an HTML comparison.

    Raises:
        MnemometerError: no renderer for that kind and format (naming the formats).
    """
    kind = kind or kind_of(obj)
    _load_builtins()
    table = _RENDERERS.get(kind, {})
    if fmt not in table:
        raise MnemometerError(
            f"no {fmt!r} format for a {kind}{did_you_mean(fmt, list(table))}; "
            f"formats: {', '.join(table)}"
        )
    return table[fmt](obj, **context) if context else table[fmt](obj)


def _load_builtins() -> None:
    # The built-in renderers register on import; importing them here (not at module load)
    # keeps this registry free of the modules that use it.
    from mnemometer.report import (  # noqa: F401
        _comparison,
        _html_comparison,
        _html_run,
        _leaderboard,
        _run,
    )
