"""Per-request overhead of the HTTP layer (``mnemometer.http``) against the urllib it replaced.

Both clients talk to the same ``mnemometer.testing.FakeLLMServer`` on 127.0.0.1, in a child
process so that the client's CPU time is the client's alone. Each round sends N requests
one after another with each client (alternating, best round kept):

- reference: the previous implementation's transport, kept minimal here: one
  ``urllib.request.urlopen`` per request (a new TCP connection each time), ``json.loads``;
- ``HttpClient``: ``mnemometer.http.HttpClient.request_json`` (pooled keep-alive
  connections, tenacity retry wrapper, error mapping);
- bare ``httpx.Client``: the same pooled connections without our layer, to show what the
  retry wrapper and error mapping add on top of httpx itself.

Printed per request: the median and 90th percentile of wall time (client + loopback +
server; medians, because on a shared machine a few requests stall for milliseconds) and the
client's CPU time (best round). The figure that matters is the ratio of HttpClient to the
reference; the target is that the new layer costs no more per request than urllib did
(median wall ratio <= 1.0).

Run: .venv/bin/python benchmarks/bench_http.py [N]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import httpx

from mnemometer.http import HttpClient

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
ROUNDS = 3
CHAT = {"model": "fake-llm", "messages": [{"role": "user", "content": "What is my name?"}]}


def urllib_reference(base_url: str) -> Callable[[str, str, dict | None], object]:
    """The transport of the urllib clients this layer replaced, minus their retry loop."""
    headers = {"Content-Type": "application/json", "Accept": "application/json"}

    def call(method: str, path: str, body: dict | None) -> object:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(base_url + path, data=data, headers=headers, method=method)
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.loads(resp.read())

    return call


def http_client(base_url: str) -> Callable[[str, str, dict | None], object]:
    client = HttpClient(base_url, timeout=30, retries=3)
    return lambda method, path, body: client.request_json(method, path, json=body)


def bare_httpx(base_url: str) -> Callable[[str, str, dict | None], object]:
    client = httpx.Client(base_url=base_url, timeout=30)
    return lambda method, path, body: json.loads(
        client.request(method, path, json=body).raise_for_status().content
    )


def measure(call: Callable[[str, str, dict | None], object], method: str, path: str, body):
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


def start_server() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mnemometer.testing", "--port", "0", "--reply", "Darrin Phoenix"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # "serving fake-llm at http://127.0.0.1:PORT/v1"
    return proc, line.split(" at ")[-1].strip()


def main() -> int:
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    print(f"load average {load} on {len(os.sched_getaffinity(0))} cores; {N} requests x {ROUNDS}")
    proc, base_url = start_server()
    clients = {
        "urllib (reference)": urllib_reference(base_url),
        "HttpClient": http_client(base_url),
        "bare httpx.Client": bare_httpx(base_url),
    }
    try:
        for label, method, path, body in (
            ("GET /v1/models", "GET", "/models", None),
            ("POST /v1/chat/completions", "POST", "/chat/completions", CHAT),
        ):
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
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
