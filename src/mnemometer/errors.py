"""Errors a user can act on.

Every error that reaches the CLI as a :class:`MnemometerError` is printed as one line on
stderr with exit code 2; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class MnemometerError(Exception):
    """Bad input or environment: one clear message, no traceback."""


class DatasetError(MnemometerError):
    """A dataset file is missing, malformed or violates the schema."""


class UnknownNameError(MnemometerError):
    """A store, suite or dataset name is not registered."""


class MissingExtraError(MnemometerError):
    """Optional dependencies are not installed (the message names every extra at once).

    Args:
        what: what needs them ("the chroma store").
        extra: the extra to install, or several separated by commas (``vector,embeddings``).
        module: the missing module, or several separated by commas.
    """

    def __init__(self, what: str, extra: str, module: str) -> None:
        modules = [m for m in module.split(",") if m]
        dep = (
            f"the optional dependency {modules[0]!r}"
            if len(modules) == 1
            else "the optional dependencies " + ", ".join(repr(m) for m in modules)
        )
        super().__init__(f"{what} needs {dep}: pip install 'mnemometer[{extra}]'")
        self.extra = extra


class RunLogError(MnemometerError):
    """A run directory is missing, incompatible or corrupt."""


class ConsentError(MnemometerError):
    """Running this executes a suite's commands, and the user did not pass ``--allow-shell``."""


def did_you_mean(name: str, choices: list[str]) -> str:
    """Return a ' (did you mean X?)' suffix for the closest choice, or ''.

    A name far longer than every choice has none (and comparing a 50 MB name, read from a
    file, would take minutes).
    """
    import difflib

    if len(name) > 2 * max(map(len, choices), default=0) + 10:
        return ""
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.5)
    return f" (did you mean {close[0]!r}?)" if close else ""


def shortened(text: str, limit: int = 80) -> str:
    """``text`` for a one-line message: a name read from a file may be megabytes long."""
    return text if len(text) <= limit else f"{text[: limit - 20]}... ({len(text):,} characters)"
