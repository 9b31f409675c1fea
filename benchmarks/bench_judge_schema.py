"""What a JSON-schema-constrained verdict costs the local model (SmolLM2 on llama.cpp).

One ``serve-llm`` server (1 thread), the lenient judge's prompt over a short answer, asked
three ways in turn, three rounds: with the judge's schema (``json_object`` + ``schema``, as
every judge asks), with ``json_object`` alone, and unconstrained. Printed per request: wall
time, the server process's CPU time (far less sensitive to the machine's load) and the
tokens generated. The unconstrained request is the reference.

Run: .venv/bin/python benchmarks/bench_judge_schema.py  (needs the [local-llm] extra)
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request

from mnemometer.local_llm import free_port, server_command
from mnemometer.scoring.judges import builtin_judges


def _cpu(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    spec = builtin_judges()["lenient"]
    answer = "\n".join(
        f"- [8 May 2023] Caroline: I went to the LGBTQ support group yesterday, number {i}."
        for i in range(6)
    )
    formats = {
        "schema": {"type": "json_object", "schema": spec.schema},
        "json_object": {"type": "json_object"},
        "none": None,
    }
    port = free_port()
    server = subprocess.Popen(
        server_command(port, threads=1), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(f"{url}/models", timeout=2)
                break
            except OSError:
                time.sleep(0.5)  # polling a server that is still loading
        for i in range(3):
            for name, fmt in formats.items():
                prompt = spec.prompts["default"].format(
                    question=f"When did Caroline go to group {i}?",
                    gold=f"{i + 1} May 2023",
                    response=answer,
                )
                body: dict = {
                    "model": "smollm2",
                    "messages": [{"role": "user", "content": prompt}],
                    "temperature": 0,
                    "max_tokens": 12,
                    "seed": 0,
                }
                if fmt is not None:
                    body["response_format"] = fmt
                request = urllib.request.Request(
                    f"{url}/chat/completions",
                    json.dumps(body).encode(),
                    {"Content-Type": "application/json"},
                )
                c0, t0 = _cpu(server.pid), time.perf_counter()
                with urllib.request.urlopen(request, timeout=900) as r:
                    reply = json.load(r)
                wall, cpu = time.perf_counter() - t0, _cpu(server.pid) - c0
                print(
                    f"{name:11} round {i}: wall {wall:6.1f} s, server CPU {cpu:5.2f} s, "
                    f"{reply['usage']['completion_tokens']} tokens, "
                    f"load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
