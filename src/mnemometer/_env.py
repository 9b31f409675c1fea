"""Facts about the environment recorded in every run header."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from functools import cache
from importlib.metadata import (
    PackageNotFoundError,
    distribution,
    packages_distributions,
    version,
)
from pathlib import Path
from typing import Any

_SECRET = re.compile(r"(key|token|secret|password|passwd|auth|credential)", re.I)
_MIN_SECRET = 8
"""Shorter values are not scrubbed from text (they would match ordinary words)."""
_secrets: set[str] = set()

# Secrets by their shape, caught even when this process was never given them (a cached
# reply that echoes another run's key): provider keys (OpenAI, Anthropic, DeepSeek and
# OpenRouter's ``sk-``, Groq, xAI, Perplexity, Hugging Face, Replicate, GitHub, GitLab,
# Stripe, Slack, AWS, Google) and the token after ``Bearer``. A key's body must hold a
# digit, so prose (``sk-learn-compatible``) is left alone.
_KEY = re.compile(
    rb"(?:sk|gsk|xai|pplx|hf|r8|gh[pousr]|glpat|github_pat|[sr]k_live|[sr]k_test)[_-]"
    rb"(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{16,}"
    rb"|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[A-Za-z0-9_-]{35}"
)
_BEARER = re.compile(rb"\b([Bb]earer\s+)(?=[^\s\"',;&<>]*[0-9])[^\s\"',;&<>]{8,}")
# A key is a whole run of 15 or more of these characters. Runs are found in a copy where
# each byte is its class (a C-speed translate and search): a regular expression tried at
# every position of an item's line would cost ten times what serialising the line does.
_KEY_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
_CLASSES = bytes(0x61 if b in _KEY_CHARS else 0x20 for b in range(256))
_RUN = b"a" * 15


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
    """``text`` with every known secret value, and anything shaped like a key, as ``***``.

    Known values are the ones remembered and the secret-named environment variables
    (:func:`secret_values`); shapes are provider keys (``sk-...``, ``hf_...``, ``AKIA...``)
    and the token after ``Bearer`` (``Bearer ***``), caught whether or not this process was
    given them.
    """
    for value in secret_values() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, "***")
    return _scrub_shapes(text.encode()).decode()


def scrub_bytes(data: bytes, secrets: list[bytes]) -> bytes:
    """:func:`scrub` for encoded text, with the secrets already encoded."""
    for value in secrets:
        if value in data:
            data = data.replace(value, b"***")
    return _scrub_shapes(data)


def _scrub_shapes(data: bytes) -> bytes:
    """``data`` with each key-shaped run, and each bearer token, replaced by ``***``."""
    if b"earer" in data:
        data = _BEARER.sub(rb"\1***", data)
    classes = data.translate(_CLASSES)
    keys = []
    start = classes.find(_RUN)
    while start != -1:  # a few runs a line: C-speed searches, a match tried at each
        end = classes.find(b" ", start)
        end = len(data) if end == -1 else end
        if _KEY.fullmatch(data, start, end):
            keys.append((start, end))
        start = classes.find(_RUN, end)
    if not keys:
        return data
    parts, done = [], 0
    for start, end in keys:
        parts += [data[done:start], b"***"]
        done = end
    parts.append(data[done:])
    return b"".join(parts)


_SETTING = re.compile(r"[-+]?\d+(\.\d*)?([eE][-+]?\d+)?|(?i:true|false|none|null)")
"""A value a secret-sounding option holds without being a secret: a number
(``max_tokens=32``) or a boolean."""
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def is_secret(name: str, value: Any) -> bool:
    """Whether option ``name`` holding ``value`` is a credential to hide.

    Decided by the value as much as by the name: a known secret's value is hidden under any
    name, and a secret-sounding name (``api_key``, ``auth_token``) hides only a string that
    is not a number or a boolean (``max_tokens=32`` stays readable in headers and on
    leaderboards), and not an environment variable's name given as ``*_env``
    (``api_key_env=OPENAI_API_KEY``).
    """
    if not isinstance(value, str) or not value:
        return False
    if value in secret_values():
        return True
    if not _SECRET.search(name) or _SETTING.fullmatch(value):
        return False
    return not (name.lower().endswith("_env") and _ENV_NAME.fullmatch(value))


def redact(options: dict[str, Any]) -> dict[str, Any]:
    """Copy ``options`` with credentials (:func:`is_secret`) replaced by ``"***"`` (recursively)."""
    out: dict[str, Any] = {}
    for k, v in options.items():
        if is_secret(str(k), v):
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
        return _version("mnemometer")
    except PackageNotFoundError:
        return "0+unknown"


def _version(name: str) -> str:
    """``importlib.metadata.version(name)``, reading only the metadata's header lines.

    ``version`` parses the whole file as an e-mail, long description (the README) included:
    2 ms of every run for mnemometer's own. A file without a ``Version:`` header line
    falls back to it.

    Raises:
        PackageNotFoundError: no such distribution.
    """
    return _header_version(distribution(name)) or version(name)


def _header_version(dist: Any) -> str | None:
    """The ``Version:`` header line of ``dist``'s metadata, if it has one."""
    text = dist.read_text("METADATA") or ""
    for line in text.split("\n\n", 1)[0].splitlines():
        if line.startswith("Version:"):
            return line.removeprefix("Version:").strip()
    return None


def distribution_version(obj: object, provider: Any = None) -> str | None:
    """Version of the distribution that provides ``obj``'s top-level module.

    A distribution named like the module (``mnemometer``, most plug-ins) answers at once;
    else ``provider``, the distribution whose entry point registered ``obj`` (a plug-in
    whose module is named otherwise); only what neither answers pays for the map of every
    installed distribution's files, which reads every ``RECORD`` on the machine (seconds
    in a large environment).
    """
    top = type(obj).__module__.split(".")[0]
    try:
        return _version(top)
    except PackageNotFoundError:
        pass
    if provider is not None and (found := _header_version(provider)):
        return found
    try:
        dists = _packages_distributions().get(top) or [top]
        return _version(dists[0])
    except (PackageNotFoundError, IndexError):
        return None


@cache
def _packages_distributions() -> dict[str, list[str]]:
    return packages_distributions()


def git_revision() -> str | None:
    """The working directory's git revision (``+dirty`` when modified), if any.

    One ``git status`` answers both (``# branch.oid`` and a line per modified file).
    """
    try:
        status = subprocess.run(
            ["git", "status", "--porcelain=v2", "--branch", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if status.returncode != 0:
        return None
    rev, dirty = None, False
    for line in status.stdout.splitlines():
        if line.startswith("# branch.oid "):
            rev = line.removeprefix("# branch.oid ").strip()
        elif line and not line.startswith("#"):
            dirty = True
    if not rev or rev == "(initial)":  # no commit yet
        return None
    return rev + ("+dirty" if dirty else "")


def git_revision_later() -> Callable[[], str | None]:
    """Start :func:`git_revision` in a thread; the function returned waits for its answer.

    ``git status`` takes a few milliseconds (more in a large work tree): a run asks for it
    first and reads the answer when it writes its header, so git runs while it loads.
    """
    answer: list[str | None] = []
    thread = threading.Thread(target=lambda: answer.append(git_revision()), daemon=True)
    thread.start()

    def wait() -> str | None:
        thread.join()
        return answer[0] if answer else None

    return wait


def cache_root() -> Path:
    """``$MNEMOMETER_CACHE``, else ``$XDG_CACHE_HOME/mnemometer``, else ``~/.cache/mnemometer``."""
    if os.environ.get("MNEMOMETER_CACHE"):
        return Path(os.environ["MNEMOMETER_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "mnemometer"


def python_version() -> str:
    """Python version."""
    return sys.version.split()[0]


def platform_name() -> str:
    """OS and machine."""
    return f"{platform.system()}-{platform.machine()}"
