"""A prompt read from your copy of a peer's Python source: where a licence forbids shipping it.

LoCoMo's code is CC BY-NC 4.0 and zep-papers' CC BY-NC-SA 4.0: their prompts cannot ship in
an MIT package, so a protocol names where each one lives (a file of the peer's repository
and a place in it, :class:`Place`) and the SHA-256 of its text at the pinned commit, and
reads it from the checkout you have. The file is parsed, never imported or run.

A place is one of:

* ``NAME``: a module-level assignment ``NAME = "..."``;
* ``function.NAME``: an assignment inside ``function`` (an f-string becomes a template:
  ``f"...{context}..."`` reads as ``...{context}...``, its literal braces doubled);
* ``function: CONDITION``: the longest string constant in the body of the ``if`` (or
  ``elif``) inside ``function`` whose test reads ``CONDITION`` (``qa['category'] == 2``).
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from pathlib import Path

from mnemometer.errors import MnemometerError


def sha256_text(text: str) -> str:
    """SHA-256 of ``text`` (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Place:
    """Where a string lives in a Python file (see the module docstring)."""

    spec: str

    @property
    def function(self) -> str | None:
        """The function it is in, or ``None`` at module level."""
        if ":" in self.spec:
            return self.spec.split(":", 1)[0].strip()
        return self.spec.split(".", 1)[0] if "." in self.spec else None

    @property
    def name(self) -> str | None:
        """The assigned name (``None`` for a branch)."""
        if ":" in self.spec:
            return None
        return self.spec.rsplit(".", 1)[-1]

    @property
    def condition(self) -> str | None:
        """The branch's test, as ``ast.unparse`` writes it (``None`` for a name)."""
        return self.spec.split(":", 1)[1].strip() if ":" in self.spec else None


def extract(path: Path, place: Place) -> str:
    """The string at ``place`` in the Python file ``path``.

    Raises:
        MnemometerError: the file cannot be read or parsed, or has nothing at ``place``.
    """
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError, SyntaxError) as e:
        raise MnemometerError(f"{path}: cannot read it as Python source ({e})") from None
    scope: ast.AST = tree
    if place.function is not None:
        found = [
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == place.function
        ]
        if not found:
            raise MnemometerError(f"{path}: no function {place.function!r}")
        scope = found[0]
    text = _branch(scope, place) if place.condition is not None else _assigned(scope, place)
    if text is None:
        raise MnemometerError(f"{path}: no string at {place.spec!r}")
    return text


def _assigned(scope: ast.AST, place: Place) -> str | None:
    body = scope.body if isinstance(scope, ast.Module) else ast.walk(scope)
    for node in body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == place.name for t in node.targets
        ):
            return _string(node.value)
    return None


def _branch(scope: ast.AST, place: Place) -> str | None:
    for node in ast.walk(scope):
        if isinstance(node, ast.If) and ast.unparse(node.test) == place.condition:
            strings = [
                c.value
                for stmt in node.body
                for c in ast.walk(stmt)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            ]
            return max(strings, key=len) if strings else None
    return None


def _string(node: ast.expr) -> str | None:
    """A string constant's value, or an f-string as a ``str.format`` template."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if not isinstance(node, ast.JoinedStr):
        return None
    parts = []
    for v in node.values:
        if isinstance(v, ast.Constant) and isinstance(v.value, str):
            parts.append(v.value.replace("{", "{{").replace("}", "}}"))
        elif (
            isinstance(v, ast.FormattedValue)
            and isinstance(v.value, ast.Name)
            and v.conversion == -1
            and v.format_spec is None
        ):
            parts.append("{" + v.value.id + "}")
        else:
            return None  # an expression a template cannot name
    return "".join(parts)


def find_file(repo_path: str, roots: list[Path]) -> Path | None:
    """``repo_path`` (a file of the peer's repository) under one of ``roots``.

    Each root is tried as the checkout (``root/repo_path``), then as the file's own
    folder (``root/<file name>``); a root that is a file is taken when its name matches.
    """
    name = Path(repo_path).name
    for root in roots:
        if root.is_file():
            if root.name == name:
                return root
            continue
        for candidate in (root / repo_path, root / name):
            if candidate.is_file():
                return candidate
    return None
