"""Shared plumbing for stores over systems that ask an LLM while they store.

Graphiti, cognee and LangMem extract facts, entities or memories from each text with an
LLM, through their own SDKs, and most of them are asynchronous. This module gives their
adapters the same parts:

- :func:`llm_settings`: the endpoint, from the store's own options (``-S base_url=...``)
  over the run's (``--llm-base-url``/``--llm-model`` or the environment, resolved where
  the run starts);
- :class:`Ledger`: runs each ingest call against a metering relay
  (:class:`~mnemometer.stores._llm_relay.LLMRelay`) and records what it cost and whether
  it failed, so a memory whose extraction failed is counted, never silently lost;
- :class:`LoopThread`: one event loop in a background thread, so the sync Store methods
  can be called from any thread (the runner searches concurrently);
- :func:`reference_time`: a memory's timestamp as an aware datetime.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from mnemometer.errors import MnemometerError
from mnemometer.stores._llm_relay import LLMRelay
from mnemometer.stores._protocol import IngestCost

T = TypeVar("T")


def llm_settings(
    llm: Any, base_url: str | None, model: str | None, api_key: str | None, what: str
) -> Any:
    """The endpoint a store's system uses: its own options over the run's ``llm``.

    Raises:
        MnemometerError: no endpoint anywhere (naming the flags to pass).
    """
    from mnemometer.llm import LLMError, require_settings

    try:
        return require_settings(llm, base_url=base_url, model=model, api_key=api_key)
    except LLMError as e:
        raise MnemometerError(
            f"{what} asks an LLM while it stores: {e} (or -S base_url=URL -S llm_model=M)"
        ) from None


class LoopThread:
    """An asyncio event loop running in a daemon thread; ``run`` waits for a coroutine."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True, name=name)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the loop and return its result (its exception is raised here)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        """Stop the loop and its thread."""
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=10)
        if not self.loop.is_running():
            self.loop.close()


class Ledger:
    """What each ingest call of one store cost, metered at its LLM relay.

    Args:
        relay: the relay the store's system sends its LLM calls through.
        system: the system's name, for error messages.
        upstream: the real endpoint, for error messages.
    """

    def __init__(self, relay: LLMRelay, system: str, upstream: str) -> None:
        self.relay = relay
        self.system = system
        self.upstream = upstream
        self._lock = threading.Lock()
        self._costs: list[IngestCost] = []

    def run(
        self, memory_ids: Sequence[str], fn: Callable[[], int | None]
    ) -> tuple[bool, IngestCost]:
        """Call ``fn`` (it returns how many items it extracted) and record its cost.

        A failure is recorded with its reason and returned as ``False``; only an endpoint
        that cannot be reached at all raises, since then every memory would fail alike.

        Raises:
            MnemometerError: the LLM endpoint is unreachable.
        """
        before = self.relay.snapshot()
        t0 = time.perf_counter()
        extracted: int | None = None
        error: str | None = None
        try:
            extracted = fn()
        except Exception as e:  # noqa: BLE001 - a memory's failure is data, not a crash
            error = f"{type(e).__name__}: {str(e)[:300]}"
        used = self.relay.snapshot() - before
        cost = IngestCost(
            memory_ids=tuple(memory_ids),
            seconds=time.perf_counter() - t0,
            llm_calls=used.llm_calls,
            prompt_tokens=used.prompt_tokens,
            completion_tokens=used.completion_tokens,
            llm_seconds=used.llm_seconds,
            extracted=extracted,
            error=error,
        )
        with self._lock:
            self._costs.append(cost)
        if error is not None and used.unreachable:
            raise MnemometerError(
                f"{self.system}: cannot reach the LLM at {self.upstream}; start one "
                "(`mnemometer serve-llm`) or pass --llm-base-url / -S base_url="
            )
        return error is None, cost

    def costs(self) -> list[IngestCost]:
        """Every ingest call recorded since the last :meth:`clear`."""
        with self._lock:
            return list(self._costs)

    def clear(self) -> None:
        """Forget the recorded costs (on ``reset``)."""
        with self._lock:
            self._costs.clear()


def reference_time(value: Any) -> datetime:
    """A memory's ``timestamp`` as an aware datetime (UTC when naive; now when absent)."""
    stamp: datetime | None = None
    if isinstance(value, datetime):
        stamp = value
    elif value:
        try:
            stamp = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            stamp = None
    if stamp is None:
        return datetime.now(UTC)
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)
