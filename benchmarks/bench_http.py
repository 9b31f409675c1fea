"""Per-request overhead of the HTTP layer (``mnemometer.http``) against the urllib it replaced.

All clients talk to ``mnemometer.testing.FakeLLMServer`` on 127.0.0.1, in a child process so
that the client's CPU time is the client's alone. Each round sends N requests one after
another with each client (alternating; three rounds):

- reference: the previous implementation's transport, kept minimal here: one
  ``urllib.request.urlopen`` per request (a new TCP connection each time), ``json.loads``;
- ``HttpClient``: ``mnemometer.http.HttpClient.request_json`` (pooled keep-alive
  connections, the tenacity retry wrapper, error mapping);
- bare ``httpx.Client``: the same pooled connections without our layer, to show what the
  retry wrapper and error mapping add on top of httpx itself.

Plain HTTP on loopback is the reference's best case: a new connection costs almost
nothing. The same server behind TLS (a self-signed certificate made with ``openssl``, also
on loopback) shows the common case of an HTTPS endpoint, where urllib pays a handshake per
request and a pool does not.

Printed per request: the median and 90th percentile of wall time (client + loopback +
server; medians, because on a shared machine some requests stall for milliseconds) and
the client's CPU time (best round), then the ratios of HttpClient to the reference.

Run: .venv/bin/python benchmarks/bench_http.py [N]
"""

from __future__ import annotations

import json
import os
import shutil
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import httpx

from mnemometer.http import HttpClient

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
ROUNDS = 3
CHAT = {"model": "fake-llm", "messages": [{"role": "user", "content": "What is my name?"}]}
Call = Callable[[str, str, "dict | None"], object]

# The child: FakeLLMServer, its listening socket wrapped in TLS when given a cert and key.
SERVER = """
import ssl, sys, threading
from mnemometer.testing import FakeLLMServer
srv = FakeLLMServer(default="Darrin Phoenix").start()
url = srv.base_url
if len(sys.argv) > 1:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[1], sys.argv[2])
    srv._httpd.socket = ctx.wrap_socket(srv._httpd.socket, server_side=True)
    url = url.replace("http://", "https://")
print(url, flush=True)
threading.Event().wait()
"""


def urllib_reference(base_url: str, context: ssl.SSLContext | None = None) -> Call:
    """The transport of the urllib clients this layer replaced, minus their retry loop."""
    headers = {"Content-Type": "application/json", "Accept": "application/json"}

    def call(method: str, path: str, body: dict | None) -> object:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(base_url + path, data=data, headers=headers, method=method)
        with urllib.request.urlopen(req, timeout=30, context=context) as resp:
            return json.loads(resp.read())

    return call


def http_client(base_url: str) -> Call:
    client = HttpClient(base_url, timeout=30, retries=3)
    return lambda method, path, body: client.request_json(method, path, json=body)


def bare_httpx(base_url: str) -> Call:
    client = httpx.Client(base_url=base_url, timeout=30)
    return lambda method, path, body: json.loads(
        client.request(method, path, json=body).raise_for_status().content
    )


def measure(call: Call, method: str, path: str, body: dict | None) -> tuple[list[float], float]:
    """Per-request wall times (µs) and the client's CPU time per request (µs)."""
    for _ in range(50):  # warm up: connections, imports, caches
        call(method, path, body)
    walls = []
    cpu0 = time.process_time()
    for _ in range(N):
        t0 = time.perf_counter()
        call(method, path, body)
        walls.append((time.perf_counter() - t0) * 1e6)
    return walls, (time.process_time() - cpu0) / N * 1e6


def start_server(*tls: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-c", SERVER, *tls], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def self_signed(directory: Path) -> tuple[str, str] | None:
    """A certificate and key for 127.0.0.1, or None without the openssl command."""
    if shutil.which("openssl") is None:
        return None
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
        + ["-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"]
        + ["-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    return str(cert), str(key)


def compare(label: str, clients: dict[str, Call], method: str, path: str, body) -> None:
    walls: dict[str, list[float]] = {name: [] for name in clients}
    cpus: dict[str, float] = {}
    for _ in range(ROUNDS):
        for name, call in clients.items():
            w, cpu = measure(call, method, path, body)
            walls[name] += w
            cpus[name] = min(cpu, cpus.get(name, cpu))
    print(label)
    median = {name: statistics.median(w) for name, w in walls.items()}
    for name, w in walls.items():
        p90 = statistics.quantiles(w, n=10)[-1]
        print(
            f"  {name:<20} wall median {median[name]:6.0f} µs, p90 {p90:6.0f} µs; "
            f"client CPU {cpus[name]:5.0f} µs/request"
        )
    ref, new = "urllib (reference)", "HttpClient"
    print(
        f"  HttpClient / urllib: wall median {median[new] / median[ref]:.2f}x, "
        f"client CPU {cpus[new] / cpus[ref]:.2f}x; "
        f"our layer over bare httpx: {cpus[new] - cpus['bare httpx.Client']:+.0f} µs CPU"
    )


def main() -> int:
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    print(f"load average {load} on {len(os.sched_getaffinity(0))} cores; {N} requests x {ROUNDS}")
    with tempfile.TemporaryDirectory() as tmp:
        tls = self_signed(Path(tmp))
        if tls is not None:
            # httpx reads SSL_CERT_FILE when the layer builds its shared SSL context.
            os.environ["SSL_CERT_FILE"] = tls[0]
        procs = []
        try:
            proc, url = start_server()
            procs.append(proc)
            plain = {
                "urllib (reference)": urllib_reference(url),
                "HttpClient": http_client(url),
                "bare httpx.Client": bare_httpx(url),
            }
            compare("HTTP  GET /v1/models", plain, "GET", "/models", None)
            compare("HTTP  POST /v1/chat/completions", plain, "POST", "/chat/completions", CHAT)
            if tls is None:
                print("HTTPS skipped: no openssl command to make a certificate")
                return 0
            proc, url = start_server(*tls)
            procs.append(proc)
            secure = {
                "urllib (reference)": urllib_reference(
                    url, ssl.create_default_context(cafile=tls[0])
                ),
                "HttpClient": http_client(url),
                "bare httpx.Client": bare_httpx(url),
            }
            compare("HTTPS POST /v1/chat/completions", secure, "POST", "/chat/completions", CHAT)
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
