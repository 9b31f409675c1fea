"""A guard that refuses, and records, every connection or DNS lookup off loopback.

``socket.socket.connect``/``connect_ex`` and ``socket.getaddrinfo`` are patched for the
whole process (every thread: SDK clients, event loops, the metering relay), so a test that
runs a real system under the guard proves the system opened no connection off 127.0.0.1.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from contextlib import contextmanager

LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def _loopback(host: object) -> bool:
    name = str(host).strip("[]")
    if name in LOOPBACK_NAMES or name == "":
        return True
    try:
        return ipaddress.ip_address(name.split("%")[0]).is_loopback
    except ValueError:
        return False


@contextmanager
def loopback_only() -> Iterator[list[str]]:
    """Refuse non-loopback connects and lookups; yield the list of refused attempts."""
    attempts: list[str] = []
    connect, connect_ex, getaddrinfo = (
        socket.socket.connect,
        socket.socket.connect_ex,
        socket.getaddrinfo,
    )

    def check(sock: socket.socket, address: object) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            host = address[0] if isinstance(address, tuple) else address
            if not _loopback(host):
                attempts.append(f"connect {address}")
                raise OSError(f"netguard: connection to {address} refused (not loopback)")

    def guarded_connect(self: socket.socket, address: object) -> None:
        check(self, address)
        return connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: object) -> int:
        check(self, address)
        return connect_ex(self, address)

    def guarded_getaddrinfo(host: object, *args: object, **kw: object) -> list:
        if host is not None and not _loopback(
            host if not isinstance(host, bytes) else host.decode()
        ):
            attempts.append(f"dns {host}")
            raise socket.gaierror(socket.EAI_NONAME, f"netguard: lookup of {host} refused")
        return getaddrinfo(host, *args, **kw)

    socket.socket.connect = guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = guarded_connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = guarded_getaddrinfo  # type: ignore[assignment]
    try:
        yield attempts
    finally:
        socket.socket.connect = connect  # type: ignore[method-assign]
        socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
        socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]
