"""A guard that refuses, and records, every connection or DNS lookup off loopback.

``socket.socket.connect``/``connect_ex``/``sendto``, ``socket.getaddrinfo`` and
``socket.gethostbyname(_ex)`` are patched for the whole process (every thread: SDK clients,
event loops, telemetry threads, the metering relay). ``tests/conftest.py`` installs it for
the whole test session, and child Python processes install it too (``sitecustomize.py``
beside this file, put on their ``PYTHONPATH``), so the run fails if anything tries to leave
the machine. :func:`loopback_only` is the same guard around one block, for a test that
asserts on what was refused in it.

What it cannot see: sockets opened by native code (Rust, C++ clients) without Python's
``socket`` module.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}
LOG_VAR = "NETGUARD_LOG"
"""A file every refused attempt outside a :func:`loopback_only` block is appended to."""
TEST_VAR = "NETGUARD_TEST"
"""The test running now (set by the session guard; inherited by child processes)."""

_ORIGINAL = {
    "connect": socket.socket.connect,
    "connect_ex": socket.socket.connect_ex,
    "sendto": socket.socket.sendto,
    "getaddrinfo": socket.getaddrinfo,
    "gethostbyname": socket.gethostbyname,
    "gethostbyname_ex": socket.gethostbyname_ex,
}
_lock = threading.Lock()
_installed = 0
_blocks: list[list[str]] = []
"""The attempt lists of the open :func:`loopback_only` blocks (innermost last)."""


def _loopback(host: object) -> bool:
    name = (host.decode() if isinstance(host, bytes) else str(host)).strip("[]")
    if name in LOOPBACK_NAMES or name == "":
        return True
    try:
        return ipaddress.ip_address(name.split("%")[0]).is_loopback
    except ValueError:
        return False


def _record(what: str) -> None:
    with _lock:
        if _blocks:  # the block's own test asserts on it
            _blocks[-1].append(what)
            return
    path = os.environ.get(LOG_VAR)
    if path:  # one line per attempt, appended at once: a killed process loses none
        import sys

        proc = f"{os.getpid()} {os.path.basename(sys.argv[0]) if sys.argv else '?'}"
        line = f"{proc}\t{os.environ.get(TEST_VAR, '?')}\t{what}\n"
        with open(path, "a", encoding="utf-8") as f:
            f.write(line)


def _check(sock: socket.socket, address: object) -> None:
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        host = address[0] if isinstance(address, tuple) else address
        if not _loopback(host):
            _record(f"connect {address}")
            raise OSError(f"netguard: connection to {address} refused (not loopback)")


def _lookup(host: object) -> None:
    if host is not None and not _loopback(host):
        _record(f"dns {host}")
        raise socket.gaierror(socket.EAI_NONAME, f"netguard: lookup of {host} refused")


def _connect(self: socket.socket, address: object) -> None:
    _check(self, address)
    return _ORIGINAL["connect"](self, address)


def _connect_ex(self: socket.socket, address: object) -> int:
    _check(self, address)
    return _ORIGINAL["connect_ex"](self, address)


def _sendto(self: socket.socket, data: bytes, *args: object) -> int:
    _check(self, args[-1])
    return _ORIGINAL["sendto"](self, data, *args)


def _getaddrinfo(host: object, *args: object, **kw: object) -> list:
    _lookup(host)
    return _ORIGINAL["getaddrinfo"](host, *args, **kw)


def _gethostbyname(host: str) -> str:
    _lookup(host)
    return _ORIGINAL["gethostbyname"](host)


def _gethostbyname_ex(host: str) -> tuple:
    _lookup(host)
    return _ORIGINAL["gethostbyname_ex"](host)


def install() -> None:
    """Patch ``socket`` (counted: each call needs its :func:`uninstall`)."""
    global _installed
    with _lock:
        _installed += 1
        if _installed > 1:
            return
    socket.socket.connect = _connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign]
    socket.socket.sendto = _sendto  # type: ignore[method-assign,assignment]
    socket.getaddrinfo = _getaddrinfo  # type: ignore[assignment]
    socket.gethostbyname = _gethostbyname
    socket.gethostbyname_ex = _gethostbyname_ex


def uninstall() -> None:
    """Undo one :func:`install`; the last one restores ``socket``."""
    global _installed
    with _lock:
        _installed -= 1
        if _installed > 0:
            return
    socket.socket.connect = _ORIGINAL["connect"]  # type: ignore[method-assign]
    socket.socket.connect_ex = _ORIGINAL["connect_ex"]  # type: ignore[method-assign]
    socket.socket.sendto = _ORIGINAL["sendto"]  # type: ignore[method-assign]
    socket.getaddrinfo = _ORIGINAL["getaddrinfo"]  # type: ignore[assignment]
    socket.gethostbyname = _ORIGINAL["gethostbyname"]  # type: ignore[assignment]
    socket.gethostbyname_ex = _ORIGINAL["gethostbyname_ex"]  # type: ignore[assignment]


KNOWN = {
    ("dashboard.py", "dns 169.254.169.254"),
    ("dashboard.py", "dns metadata.google.internal"),
}
"""Attempts refused and reported, but not failing the run: Ray's dashboard asks the cloud
metadata services which cloud it runs on, every start, with no switch to turn it off."""


def known(line: str) -> bool:
    """Is this log line one of :data:`KNOWN` (by program and attempt)?"""
    proc, _, what = line.split("\t", 2)
    return (proc.split(" ", 1)[-1], what) in KNOWN


def read_log(path: str | os.PathLike[str]) -> list[str]:
    """Every attempt recorded in a log file: ``pid program<TAB>test<TAB>what`` lines."""
    try:
        with open(path, encoding="utf-8") as f:
            return [line.rstrip("\n") for line in f if line.strip()]
    except FileNotFoundError:
        return []


@contextmanager
def loopback_only() -> Iterator[list[str]]:
    """Refuse non-loopback connects and lookups; yield the list of refused attempts."""
    attempts: list[str] = []
    install()
    with _lock:
        _blocks.append(attempts)
    try:
        yield attempts
    finally:
        with _lock:
            _blocks.remove(attempts)
        uninstall()
