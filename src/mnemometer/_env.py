"""Facts about the environment recorded in every run header."""

from __future__ import annotations

import hashlib
import json
import platform
import re
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, packages_distributions, version
from typing import Any

_SECRET = re.compile(r"(key|token|secret|password|passwd|auth|credential)", re.I)
_MIN_SECRET = 8
"""Shorter values are not scrubbed from text (they would match ordinary words)."""
_secrets: set[str] = set()


def remember_secret(value: Any) -> None:
    """Note a secret value so :func:`scrub` removes it from anything written."""
    if isinstance(value, str) and len(value) >= _MIN_SECRET:
        _secrets.add(value)


def secret_values() -> list[str]:
    """Every secret known now: the ones remembered, and secret-named environment variables.

    An environment variable counts when its name looks secret (``*_API_KEY``, ``*TOKEN``,
    ``*PASSWORD``, ...) and its value has at least 8 characters. Longest first, so a key
    that contains another is removed whole.
    """
    import os

    found = set(_secrets)
    for name, value in os.environ.items():
        if _SECRET.search(name) and len(value) >= _MIN_SECRET:
            found.add(value)
    return sorted(found, key=len, reverse=True)


def scrub(text: str, secrets: list[str] | None = None) -> str:
    """``text`` with every known secret value replaced by ``***``."""
    for value in secret_values() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, "***")
    return text


def scrub_bytes(data: bytes, secrets: list[bytes]) -> bytes:
    """:func:`scrub` for encoded text, with the secrets already encoded."""
    for value in secrets:
        if value in data:
            data = data.replace(value, b"***")
    return data


def redact(options: dict[str, Any]) -> dict[str, Any]:
    """Copy ``options`` with secret-looking values replaced by ``"***"`` (recursively)."""
    out: dict[str, Any] = {}
    for k, v in options.items():
        if _SECRET.search(str(k)) and v not in (None, ""):
            remember_secret(v)  # hidden here, and scrubbed wherever else it turns up
            out[k] = "***"
        elif isinstance(v, dict):
            out[k] = redact(v)
        else:
            out[k] = v
    return out


def fingerprint(obj: Any) -> str:
    """SHA-256 of the canonical JSON of ``obj``."""
    blob = json.dumps(obj, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


def package_version() -> str:
    """The installed mnemometer version."""
    try:
        return version("mnemometer")
    except PackageNotFoundError:
        return "0+unknown"


def distribution_version(obj: object) -> str | None:
    """Version of the distribution that provides ``obj``'s top-level module."""
    top = type(obj).__module__.split(".")[0]
    try:
        dists = packages_distributions().get(top) or [top]
        return version(dists[0])
    except (PackageNotFoundError, IndexError):
        return None


def git_revision() -> str | None:
    """The working directory's git revision (``+dirty`` when modified), if any."""
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5
        )
        if rev.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
        )
        return rev.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def python_version() -> str:
    """Python version."""
    return sys.version.split()[0]


def platform_name() -> str:
    """OS and machine."""
    return f"{platform.system()}-{platform.machine()}"
