"""Scenarios harness: overhead per turn, and speed-up from concurrency.

1. Overhead: all 13 scenarios x 20 repeats with an instant agent through ``run()`` (run log,
   grading, noise, summary, CSV), against the reference of the same agent driven by a bare
   loop over the same turns. Target: <= 1 ms of harness per turn.
2. Concurrency: an agent that sleeps 50 ms per message, ``concurrency=8`` against
   ``concurrency=1``. Target: >= 6x. A scenario's turns are sequential by nature, so the
   13-scenario suite alone is capped by its longest scenario (memory_scalability, 53 of
   its turns); the target is measured on the suite with --epochs 8 (104 scenarios), and
   the single-suite ratio is printed beside its theoretical cap.

Run: .venv/bin/python benchmarks/bench_scenarios.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from mnemometer import RunSettings, SystemSpec
from mnemometer._registry import AGENTS
from mnemometer.agents import Reply
from mnemometer.runner import run
from mnemometer.suites.scenarios import load_scenarios

SLEEP = 0.05


class Instant:
    def __init__(self, sleep: float = 0.0) -> None:
        self.sleep = sleep

    def create(self, namespace: str) -> InstantAgent:
        return InstantAgent(self.sleep)

    def close(self) -> None:
        pass


class InstantAgent:
    def __init__(self, sleep: float) -> None:
        self.sleep = sleep

    def start_session(self, system: str | None = None) -> None:
        pass

    def send(self, message: str) -> Reply:
        if self.sleep:
            time.sleep(self.sleep)
        return Reply("Amazon", {"prompt": 3, "completion": 1}, 0.0, 0.0)

    def close(self) -> None:
        pass


def timed_run(
    tmp: Path,
    name: str,
    agent_options: dict,
    concurrency: int = 1,
    cpu: bool = False,
    **suite_options,
) -> float:
    """Seconds of one run: wall time, or this process's CPU time when ``cpu``."""
    clock = time.process_time if cpu else time.perf_counter
    t0 = clock()
    run(
        "scenarios",
        SystemSpec.agent("instant", **agent_options),
        out=tmp / name,
        suite_options={"similarity": "none", **suite_options},
        settings=RunSettings(concurrency=concurrency, timeout=None),
    )
    return clock() - t0


def user_turns(repeat: int) -> int:
    return repeat * sum(sum(1 for s in sc.steps if s.kind == "user") for sc in load_scenarios())


def main() -> int:
    AGENTS.register("instant", Instant)
    ok = True
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        # --- 1. overhead per turn ----------------------------------------------------
        # Marginal cost: (run with 20 repeats - run with 5 repeats) / extra turns, so the
        # fixed per-run cost (header, package metadata, git revision) cancels out. CPU time
        # of this process is the harness's own cost; wall time also counts other processes
        # on a shared machine, so both are printed.
        scenarios = load_scenarios()
        agent = InstantAgent(0.0)
        t0 = time.perf_counter()
        for _ in range(20):  # the reference: a bare loop over the same turns
            for sc in scenarios:
                agent.start_session(None)
                for s in sc.steps:
                    if s.kind == "user":
                        agent.send(s.content)
        bare_ms = (time.perf_counter() - t0) / user_turns(20) * 1000
        extra = user_turns(20) - user_turns(5)
        timed_run(tmp, "warm", {}, epochs=1)
        for clock in ("cpu", "wall"):
            small = min(
                timed_run(tmp, f"s{clock}{i}", {}, cpu=clock == "cpu", epochs=5) for i in range(2)
            )
            big = min(
                timed_run(tmp, f"b{clock}{i}", {}, cpu=clock == "cpu", epochs=20) for i in range(2)
            )
            per_turn = (big - small) / extra * 1000 - bare_ms
            print(
                f"overhead ({clock}): {extra} extra turns, bare loop {bare_ms * 1000:.2f} us/turn, "
                f"harness {per_turn:.3f} ms/turn (target <= 1 ms)"
            )
            if clock == "cpu":
                ok &= per_turn <= 1.0

        # --- 2. concurrency with a 50 ms agent -----------------------------------------
        import os

        print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        longest = max(sum(1 for s in sc.steps if s.kind == "user") for sc in scenarios)
        one = user_turns(1)
        t1 = timed_run(tmp, "c1", {"sleep": SLEEP})
        t8 = timed_run(tmp, "c8", {"sleep": SLEEP}, concurrency=8)
        print(
            f"suite x1 ({one} turns, longest scenario {longest}): concurrency 1 {t1:.2f} s, "
            f"8 {t8:.2f} s -> {t1 / t8:.2f}x (cap {one / longest:.2f}x: a scenario's "
            "turns are sequential)"
        )
        r1 = timed_run(tmp, "r1", {"sleep": SLEEP}, epochs=8)
        r8 = timed_run(tmp, "r8", {"sleep": SLEEP}, concurrency=8, epochs=8)
        print(
            f"suite x8 repeats ({user_turns(8)} turns): concurrency 1 {r1:.2f} s, 8 {r8:.2f} s "
            f"-> {r1 / r8:.2f}x (target >= 6x)"
        )
        ok &= r1 / r8 >= 6.0
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
