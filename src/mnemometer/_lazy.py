"""Package names that load on first use (PEP 562), so importing a package stays cheap.

``import mnemometer`` and ``mnemometer.runner`` expose their public names this way: a
report or a dataset load never imports the runner, and a single run never imports the
experiment, condition or Ray machinery.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def attach(
    package: str, where: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Return ``__getattr__`` and ``__dir__`` for ``package``.

    Args:
        package: the package's ``__name__``.
        where: public name -> the module that defines it, or ``"module:attribute"`` for a
            name exported under another one.
    """

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attr = where[name].partition(":")
        value = getattr(importlib.import_module(module), attr or name)
        setattr(sys.modules[package], name, value)  # later lookups skip this hook
        return value

    def __dir__() -> list[str]:
        return sorted([*vars(sys.modules[package]), *where])

    return __getattr__, __dir__
