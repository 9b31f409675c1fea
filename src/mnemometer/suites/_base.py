"""What a suite is: a procedure over items that the runner drives."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

from mnemometer.datasets._models import Dataset
from mnemometer.log._schema import ItemResult, RunHeader, Summary


@dataclass(frozen=True, slots=True)
class Item:
    """One scored unit of a suite, with a stable id and its position in the plan."""

    id: str
    index: int
    payload: Any


@runtime_checkable
class Suite(Protocol):
    """A named procedure plus its items.

    The runner calls ``plan`` once, ``setup`` once per (re)start, ``run_item`` per item
    (concurrently, each under a timeout), ``failed`` for items whose call raised or timed
    out, and ``summarize`` whenever results are reported.
    """

    name: ClassVar[str]
    version: ClassVar[str]

    def options(self) -> dict[str, Any]:
        """Resolved options, recorded in the run header."""
        ...

    def plan(self, dataset: Dataset) -> list[Item]:
        """The items to run, in a stable order with stable ids."""
        ...

    def setup(self, system: Any, dataset: Dataset) -> dict[str, float]:
        """Prepare the system (e.g. store every memory); return phase timings in seconds."""
        ...

    def run_item(self, system: Any, item: Item) -> ItemResult | dict[str, Any]:
        """Run one item and score it.

        Return an :class:`ItemResult`, or plain data shaped like one: the log writer
        serialises plain data directly (cheaper) and every line is validated on read.
        """
        ...

    def failed(self, item: Item, error: str, status: str) -> ItemResult:
        """The result of an item whose call failed (it scores as a failure)."""
        ...

    def summarize(self, header: RunHeader, items: list[ItemResult]) -> Summary:
        """Aggregate item results."""
        ...
