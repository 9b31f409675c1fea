"""Plug-in registries over entry points, loaded lazily and defensively.

Built-ins register through the same entry-point groups third parties use
(``mnemometer.stores``, ``mnemometer.suites``). Importing mnemometer imports no plug-in;
a plug-in that fails to load is a warning naming it, never a dead CLI.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import warnings
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from mnemometer.errors import (
    MissingExtraError,
    MnemometerError,
    UnknownNameError,
    did_you_mean,
    shortened,
)


class Registry:
    """Names → factories for one kind of plug-in."""

    def __init__(self, group: str, kind: str) -> None:
        self.group = group
        self.kind = kind
        self._extra: dict[str, Callable[..., Any]] = {}

    def _entry_points(self) -> dict[str, EntryPoint]:
        return _group(self.group)

    def register(self, name: str, factory: Callable[..., Any]) -> None:
        """Register a factory in-process (notebooks, tests); plug-ins use entry points.

        Raises:
            MnemometerError: ``name`` is already registered.
        """
        if name in self._entry_points() or name in self._extra:
            raise MnemometerError(f"{self.kind} {name!r} is already registered")
        self._extra[name] = factory

    def unregister(self, name: str) -> None:
        """Remove an in-process registration (a no-op for names it did not add)."""
        self._extra.pop(name, None)

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        return sorted(set(self._entry_points()) | set(self._extra))

    def target(self, name: str) -> str | None:
        """What ``name`` stands for, ``module:attr``, read without importing it.

        An in-process registration gives its object's own module and qualified name;
        ``None``: nothing is registered under ``name``.
        """
        if name in self._extra:
            return reference(self._extra[name])
        ep = self._entry_points().get(name)
        return None if ep is None else ep.value

    def provider(self, name: str) -> Any:
        """The installed distribution whose entry point registers ``name`` (``None``: none)."""
        if name in self._extra:
            return None
        return getattr(self._entry_points().get(name), "dist", None)

    def load(self, name: str, options: dict[str, Any] | None = None) -> Callable[..., Any]:
        """Return the factory for ``name``, its optional modules checked for ``options``.

        Raises:
            UnknownNameError: no such name (with a "did you mean").
            MnemometerError: the plug-in is broken (its import failed).
            MissingExtraError: the extras it needs with these options are not installed.
        """
        if name in self._extra:
            return self._extra[name]
        ep = self._entry_points().get(name)
        if ep is None:
            raise UnknownNameError(
                f"unknown {self.kind} {shortened(name)!r}{did_you_mean(name, self.names())}; "
                f"known: {', '.join(self.names())}"
            )
        try:
            factory = ep.load()
        except MissingExtraError:
            raise
        except Exception as e:  # a broken plug-in must not kill the CLI
            raise MnemometerError(
                f"{self.kind} {name!r} ({ep.value}) failed to load: {type(e).__name__}: {e}"
            ) from None
        check_requirements(factory, f"{self.kind} {name!r}", options)
        return factory

    def loadable(self, names: Iterable[str] | None = None) -> Iterator[tuple[str, Any]]:
        """``(name, factory)`` of each of ``names`` (default: every name) that loads.

        A broken plug-in is a warning naming it, and is skipped: it must not stop the others.
        """
        for name in self.names() if names is None else names:
            try:
                yield name, self.load(name)
            except MnemometerError as e:
                warnings.warn(str(e), stacklevel=2)

    def make(
        self, name: str, options: dict[str, Any] | None, methods: tuple[str, ...], **context: Any
    ) -> Any:
        """Load ``name`` and call its factory with ``options`` and the context it accepts.

        Context values that are ``None`` are not offered (see :func:`call_with_context`).

        Raises:
            MnemometerError: unknown name, bad option, missing extra, or the object made
                lacks one of ``methods``.
        """
        offered = {k: v for k, v in context.items() if v is not None}
        made = call_with_context(self.load(name, options), dict(options or {}), **offered)
        missing = [f"{m}()" for m in methods if not callable(getattr(made, m, None))]
        if missing:
            raise MnemometerError(f"{self.kind} {name!r} does not implement {', '.join(missing)}")
        return made

    def describe(self, name: str) -> str:
        """First docstring line of the plug-in, or why it cannot load.

        A plug-in whose optional extra is missing is not installed (it says what to
        install); only one whose import fails is broken (and a warning names it).
        """
        try:
            factory = self.load(name)
        except MissingExtraError as e:
            return f"(not installed: pip install 'mnemometer[{e.extra}]')"
        except MnemometerError as e:
            warnings.warn(str(e), stacklevel=2)
            return f"(broken: {e})"
        doc = inspect.getdoc(factory) or ""
        return doc.splitlines()[0] if doc else ""


@cache
def _all_entry_points() -> Any:
    # One pass over every installed distribution's entry points serves every group (a
    # run looks up stores, suites and readers; each lookup used to read them all again).
    return entry_points()


def refresh() -> None:
    """Read the installed entry points again (a plug-in installed after the first lookup)."""
    _all_entry_points.cache_clear()
    _group.cache_clear()


@cache
def _group(group: str) -> dict[str, EntryPoint]:
    eps: dict[str, EntryPoint] = {}
    for ep in _all_entry_points().select(group=group):
        if ep.name in eps and eps[ep.name].value != ep.value:
            warnings.warn(
                f"{group}: {ep.name!r} is registered twice ({eps[ep.name].value}, {ep.value}); "
                "the first wins",
                stacklevel=2,
            )
            continue
        eps.setdefault(ep.name, ep)
    return eps


def call_with_context(factory: Callable[..., Any], options: dict[str, Any], **context: Any) -> Any:
    """Call ``factory(**options)``, adding each context value the factory accepts.

    Context (``lang``, ``workdir``, ...) is offered, never forced: a factory that does not
    name a parameter does not get it, and an explicit option wins over context.

    Raises:
        MnemometerError: an option the factory does not accept (with the accepted ones).
    """
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return factory(**options)
    params = sig.parameters
    var_kw = any(p.kind is p.VAR_KEYWORD for p in params.values())
    accepted = [n for n, p in params.items() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
    name = getattr(factory, "__name__", str(factory))
    for key in options:
        if key not in params and not var_kw:
            raise MnemometerError(
                f"{name} has no option {key!r}{did_you_mean(key, accepted)}; "
                f"options: {', '.join(accepted) or '(none)'}"
            )
    _check_types(factory, name, options)
    kwargs = {k: v for k, v in context.items() if k in params and k not in options}
    return factory(**options, **kwargs)


def _check_types(factory: Callable[..., Any], name: str, options: dict[str, Any]) -> None:
    """Refuse a value a number option cannot take (``top_k = "x"``), before the factory does.

    Options come untyped from files (a sweep's ``suite_options``), ``-O key=value`` and
    the API; a factory that converts one itself (``int(top_k)``) would end in a traceback.
    Only options annotated as a plain ``int``, ``float`` or ``bool`` (or ``None``) are
    checked, and only for what that conversion accepts (``"5"`` is an int): the factory
    still gets the value as given. Other annotations are often looser than the code (a
    recorded list where ``str`` is written), so they are left to the factory.

    Raises:
        MnemometerError: naming the option, its value and what it should be.
    """
    hints = _hints(factory)
    for key, value in options.items():
        kind = _number(hints.get(key))
        if kind is None or value is None or _converts(value, kind):
            continue
        what = {int: "an integer", float: "a number", bool: "true or false"}[kind]
        raise MnemometerError(f"{name}: option {key} = {value!r}: expected {what}")


def _number(hint: Any) -> type | None:
    """``int``, ``float`` or ``bool`` when ``hint`` is one of them, or one of them or None."""
    import types
    import typing

    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        rest = [a for a in typing.get_args(hint) if a is not type(None)]
        hint = rest[0] if len(rest) == 1 else None
    return hint if hint in (int, float, bool) else None


def _converts(value: Any, kind: type) -> bool:
    if kind is bool:
        return isinstance(value, bool) or value in (0, 1)
    try:
        kind(value)
    except (TypeError, ValueError, OverflowError):
        return False
    return True


def _hints(factory: Callable[..., Any]) -> dict[str, Any]:
    """The resolved parameter annotations of a function or a class's ``__init__``."""
    import typing

    target = factory.__init__ if inspect.isclass(factory) else factory  # type: ignore[misc]
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # noqa: BLE001 - an annotation a plug-in cannot resolve: no check
        return {}
    hints.pop("return", None)
    return hints


def check_requirements(factory: Any, what: str, options: dict[str, Any] | None = None) -> None:
    """Refuse a plug-in whose declared optional modules are missing, naming every extra.

    A factory declares ``requires = (("module", "extra"), ...)``, or a function of the
    options that returns them when they depend on the options (mem0's hosted mode needs
    neither mem0 nor a model). Checking it when the name is looked up (not when the object
    is built) lets a condition fall back before a run starts, and tells a user everything
    to install at once instead of one at a time.

    Raises:
        MissingExtraError: some declared modules are not importable.
    """
    declared = getattr(factory, "requires", ())
    if callable(declared):
        declared = declared(dict(options or {}))
    missing = [
        (module, extra)
        for module, extra in declared
        if importlib.util.find_spec(module.split(".")[0]) is None
    ]
    if missing:
        extras = ",".join(dict.fromkeys(e for _, e in missing))
        raise MissingExtraError(what, extras, ",".join(m for m, _ in missing))


def reference(obj: Any) -> str:
    """``module:qualname`` of a class or function: how an entry point names it."""
    return f"{obj.__module__}:{getattr(obj, '__qualname__', type(obj).__qualname__)}"


def require(module: str, extra: str, what: str) -> Any:
    """Import an optional dependency or raise the exact install command."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(what, extra, module) from None


STORES = Registry("mnemometer.stores", "store")
SUITES = Registry("mnemometer.suites", "suite")
AGENTS = Registry("mnemometer.agents", "agent")
SCORERS = Registry("mnemometer.scorers", "scorer")
