"""The system under test, described once: a store or an agent, by name or as an object.

A :class:`SystemSpec` is what a run (and every condition of an experiment) is given. It
builds the live system where it is used (:meth:`SystemSpec.create`), so the same spec starts
a run, resumes it, and gives a suite an isolated copy per conversation; the run header
records it as a :class:`~mnemometer.log.SystemRef`.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from mnemometer import _env
from mnemometer.errors import MnemometerError
from mnemometer.log._schema import SystemRef

Kind = Literal["store", "agent"]


@runtime_checkable
class Closable(Protocol):
    """Capability: release resources (files, connections, child processes) at the end."""

    def close(self) -> None:
        """Release what the system holds."""
        ...


@dataclass(frozen=True)
class SystemSpec:
    """A store or an agent to run, with its options and the condition it stands for.

    Build one with :meth:`store`, :meth:`agent` or :meth:`of` (an object you made).

    Attributes:
        kind: ``store`` or ``agent``.
        name: registered name (or the class name of an in-process object).
        options: options for the registered factory.
        condition: the condition this system runs as (``no-memory``, ``lexical``, ...).
        notes: caveats recorded in the run header (a fallback that was taken, ...).
        instance: an in-process store or agent factory, used instead of a registered name.
    """

    kind: Kind
    name: str
    options: dict[str, Any] = field(default_factory=dict)
    condition: str | None = None
    notes: tuple[str, ...] = ()
    instance: Any = field(default=None, compare=False, repr=False)

    @classmethod
    def store(cls, name: str, condition: str | None = None, **options: Any) -> SystemSpec:
        """A registered store, e.g. ``SystemSpec.store("bm25", k1=1.5)``."""
        return cls("store", name, dict(options), condition)

    @classmethod
    def agent(cls, name: str, condition: str | None = None, **options: Any) -> SystemSpec:
        """A registered agent, e.g. ``SystemSpec.agent("rag", store="bm25")``."""
        return cls("agent", name, dict(options), condition)

    @classmethod
    def of(cls, system: Any) -> SystemSpec:
        """A spec from what a caller passed: a spec, a store name, or a live object.

        A string is a registered store name. An object with ``search`` is a store; one with
        ``create`` is an agent factory. Runs of in-process objects resume only when the
        same object is passed again.

        Raises:
            MnemometerError: anything else.
        """
        if isinstance(system, SystemSpec):
            return system
        if isinstance(system, str):
            return cls.store(system)
        if callable(getattr(system, "search", None)):
            return cls("store", type(system).__name__, instance=system)
        if callable(getattr(system, "create", None)):
            return cls("agent", type(system).__name__, instance=system)
        raise MnemometerError(
            f"cannot run {type(system).__name__}: pass a store name, a SystemSpec, a store "
            "(reset/store/search) or an agent factory (create(namespace))"
        )

    @classmethod
    def from_ref(cls, ref: SystemRef, notes: list[str] | None = None) -> SystemSpec:
        """The spec a run header recorded (for resume)."""
        options = without_redacted(ref.options)
        options.pop("resolved", None)  # recorded for readers, not a factory option
        return cls(ref.kind, ref.name, options, ref.condition, tuple(notes or ()))

    @property
    def label(self) -> str:
        """How run directories and reports name it: the condition, else the name."""
        return self.condition or self.name

    def with_instance(self, instance: Any) -> SystemSpec:
        """The same spec backed by an in-process object (resuming such a run)."""
        return replace(self, instance=instance)

    def options_with_store(self, store: str | None, store_options: dict | None) -> SystemSpec:
        """Fold ``--store``/``-S`` into the options of an agent that takes a store (``rag``).

        Raises:
            MnemometerError: the agent has its own memory and takes no store.
        """
        if self.kind != "agent" or (store is None and not store_options):
            return self
        from mnemometer._registry import AGENTS

        if "store" not in inspect.signature(AGENTS.load(self.name)).parameters:
            raise MnemometerError(f"agent {self.name!r} has its own memory; it takes no --store")
        opts = dict(self.options)
        if store is not None:
            opts.setdefault("store", store)
        if store_options:
            opts.setdefault("store_options", dict(store_options))
        return replace(self, options=opts)

    def create(self, workdir: Path, *, lang: str | None = None, llm: Any = None) -> Any:
        """Build the live system (a store, or an agent factory) with files under ``workdir``.

        Raises:
            MnemometerError: unknown name, bad option, missing extra.
        """
        if self.instance is not None:
            return self.instance
        if self.kind == "store":
            from mnemometer.stores._factory import create_store

            return create_store(self.name, self.options, lang=lang, workdir=workdir, llm=llm)
        from mnemometer.agents._factory import create_agent_factory

        return create_agent_factory(self.name, self.options, llm=llm, workdir=workdir)

    def _provider(self) -> Any:
        """The distribution whose entry point registers this system's name, if one does."""
        if self.instance is not None:
            return None
        from mnemometer._registry import AGENTS, STORES

        return (STORES if self.kind == "store" else AGENTS).provider(self.name)

    def ref(self, system: Any) -> SystemRef:
        """The run header's record of the live ``system`` built from this spec."""
        cls = type(system)
        options = dict(self.options)
        if self.kind == "store":
            # A store may resolve its options (a model path, a language fallback): recording
            # the resolved values says what ran, and they stay valid factory options.
            resolved = getattr(system, "resolved_options", None)
            if callable(resolved):
                options = {**options, **resolved()}
            from mnemometer.stores._protocol import capabilities

            caps = capabilities(system)
            options = _env.redact(options)
        else:
            from mnemometer.agents._protocol import describe

            caps = []
            options = {**_env.redact(options), "resolved": describe(system)}
        return SystemRef(
            kind=self.kind,
            name=self.name,
            options=options,
            condition=self.condition,
            implementation=f"{cls.__module__}:{cls.__qualname__}",
            version=_env.distribution_version(system, self._provider()),
            capabilities=caps,
        )


def without_redacted(options: dict[str, Any]) -> dict[str, Any]:
    """Recorded options minus the secrets hidden as ``***``.

    The factory reads them from the environment again: a resume never passes ``***`` as a
    key.
    """
    return {
        k: without_redacted(v) if isinstance(v, dict) else v
        for k, v in options.items()
        if v != "***"
    }


def close(system: Any) -> None:
    """Close a system that can be closed (errors are the caller's to record)."""
    if isinstance(system, Closable):
        system.close()
