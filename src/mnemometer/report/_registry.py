"""One renderer registry for everything mnemometer prints: runs, comparisons, gates, doctor.

A renderer turns one kind of object into text in one format. Built-ins and plug-ins
register the same way, as entry points of the group ``mnemometer.renderers``, whose names
say what each entry is, so listing and choosing import nothing:

- ``KIND.FORMAT = module:function``: the function rendering a ``KIND`` as ``FORMAT``
  (``run.html``); it is imported only when that format is asked for;
- ``KIND = module:Class``: objects of ``Class`` (or a subclass) render as ``KIND``; the
  class is recognised by its module and qualified name, without importing it;
- ``.SUFFIX = FORMAT``: a file suffix that names ``FORMAT`` beyond ``.FORMAT`` itself
  (``.htm = html``); the value is a format's name, never imported.

Every command's ``--format`` lists the formats of its kind and ``-o FILE`` picks one by
suffix, so a new format appears everywhere at once. A renderer may take keyword context
(the HTML comparison takes a gate verdict); ``render`` passes it on.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePath
from typing import Any

from mnemometer._registry import Registry, reference
from mnemometer.errors import MnemometerError, did_you_mean

Renderer = Callable[..., str]
RENDERERS = Registry("mnemometer.renderers", "renderer")


def renderer(kind: str, fmt: str) -> Callable[[Renderer], Renderer]:
    """Register the decorated function in-process as the ``fmt`` renderer of ``kind``.

    For notebooks and tests; a package registers ``KIND.FORMAT`` as an entry point.
    Decorating again replaces an in-process renderer (a cell run twice); the function an
    entry point already names is left to it.

    Raises:
        MnemometerError: an entry point registers another function under that name.
    """

    def register(fn: Renderer) -> Renderer:
        _register(f"{kind}.{fmt}", fn)
        return fn

    return register


def register_kind(cls: type, kind: str) -> None:
    """Objects of ``cls`` render as ``kind`` (in-process, as :func:`renderer`).

    Raises:
        MnemometerError: an entry point declares another class as ``kind``.
    """
    _register(kind, cls)


def _register(name: str, obj: Any) -> None:
    RENDERERS.unregister(name)  # a cell run again replaces what it registered
    if RENDERERS.target(name) != reference(obj):  # else the entry point names it already
        RENDERERS.register(name, obj)


def formats(kind: str) -> list[str]:
    """The formats registered for ``kind``, sorted; nothing is imported to list them."""
    prefix = f"{kind}."
    return [n.removeprefix(prefix) for n in RENDERERS.names() if n.startswith(prefix)]


def format_of(path: str | PurePath, kind: str) -> str | None:
    """The format of ``kind`` that a file's suffix names (``.html``, or ``.htm`` declared).

    ``None`` when the suffix names no format of the kind.
    """
    suffix = PurePath(path).suffix.lower()
    known = formats(kind)
    fmt = suffix[1:] if suffix[1:] in known else RENDERERS.target(suffix) if suffix else None
    return fmt if fmt in known else None


def kind_of(obj: Any) -> str:
    """The registered kind of ``obj``.

    Raises:
        MnemometerError: nothing renders objects of its type.
    """
    kinds = {RENDERERS.target(n): n for n in RENDERERS.names() if "." not in n}
    for cls in type(obj).__mro__:
        kind = kinds.get(reference(cls))
        if kind is not None:
            return kind
    # A kind whose entry point names its class where it is re-exported: import the kinds.
    for kind, cls in RENDERERS.loadable(kinds.values()):
        if isinstance(cls, type) and isinstance(obj, cls):
            return kind
    raise MnemometerError(f"nothing renders a {type(obj).__name__}{_unregistered()}")


def render(obj: Any, fmt: str = "text", *, kind: str | None = None, **context: Any) -> str:
    """Render ``obj`` (a run log, comparison, gate result, doctor checks) as ``fmt``.

    ``context`` goes to the renderer as keyword arguments (only when given), for what a
    format can show beyond the object itself, e.g. ``gate_result=`` for an HTML comparison.
    Only the module of that one renderer is imported.

    Raises:
        MnemometerError: no renderer for that kind and format (naming the formats), or the
            plug-in that provides it is broken (naming it).
        MissingExtraError: the renderer needs an extra that is not installed.
    """
    kind = kind or kind_of(obj)
    known = formats(kind)
    if fmt not in known:
        raise MnemometerError(
            f"no {fmt!r} format for a {kind}{did_you_mean(fmt, known)}; "
            f"formats: {', '.join(known) or 'none'}{_unregistered()}"
        )
    fn = RENDERERS.load(f"{kind}.{fmt}")
    return fn(obj, **context) if context else fn(obj)


def _unregistered() -> str:
    # An install made before renderers were entry points has none: say how to mend it.
    if RENDERERS.names():
        return ""
    return " (no renderer is registered: reinstall mnemometer, e.g. pip install -e .)"
