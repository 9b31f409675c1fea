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
    _load_builtins(kind)
    return list(_RENDERERS.get(kind, {}))


def kind_of(obj: Any) -> str:
    """The registered kind of ``obj``.

    Raises:
        MnemometerError: nothing renders objects of its type.
    """
    for cls in type(obj).__mro__:
        kind = _BUILTIN_KINDS.get(f"{cls.__module__}.{cls.__qualname__}")
        if kind is not None:
            return kind
    _load_builtins(None)
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
    if fmt not in _RENDERERS.get(kind, {}):
        _load_builtins(kind, fmt)  # the one module serving ``fmt``
    if fmt not in _RENDERERS.get(kind, {}):
        _load_builtins(kind)  # every module of the kind: the error lists all formats
    table = _RENDERERS.get(kind, {})
    if fmt not in table:
        raise MnemometerError(
            f"no {fmt!r} format for a {kind}{did_you_mean(fmt, list(table))}; "
            f"formats: {', '.join(table)}"
        )
    return table[fmt](obj, **context) if context else table[fmt](obj)


_BUILTIN_KINDS = {
    "mnemometer.report._run.RunView": "run",
    "mnemometer.comparison._model.Comparison": "comparison",
    "mnemometer.comparison._gate.GateResult": "gate",
    "mnemometer.report._leaderboard.Leaderboard": "leaderboard",
}
"""Built-in classes by qualified name, so naming an object's kind imports nothing."""

_BUILTIN_MODULES = {
    "run": ("_run", "_html_run"),
    "comparison": ("_comparison", "_html_comparison"),
    "gate": ("_comparison", "_html_comparison"),
    "leaderboard": ("_leaderboard",),
}
"""The modules whose renderers serve each built-in kind, in registration order: the first
has the kind's plain formats; an ``_html_`` module, when there is one, its ``html``."""


def _load_builtins(kind: str | None, fmt: str | None = None) -> None:
    # The built-in renderers register on import; importing them here (not at module load)
    # keeps this registry free of the modules that use it, and importing only the kind's
    # own (only the one module serving ``fmt``, when given) keeps a run's text report from
    # loading comparisons, leaderboards and the HTML report with its charts.
    import importlib

    names = _BUILTIN_MODULES.get(kind) if kind is not None else None
    if names is not None and fmt is not None:
        html = tuple(n for n in names if n.startswith("_html_"))
        names = html if fmt == "html" and html else names[:1]
    if names is None:  # an unknown kind (a plug-in's, a typo): every built-in, as before
        names = tuple(dict.fromkeys(m for ms in _BUILTIN_MODULES.values() for m in ms))
    for name in names:
        importlib.import_module(f"mnemometer.report.{name}")
