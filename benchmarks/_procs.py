"""Whole-process timing shared by the benchmarks: wall, CPU and peak memory of a child.

Each measured command runs as a fresh process; its CPU (user + system) and peak RSS come
from ``os.wait4``, so they are that process's own (children it starts included only when
it waits for them). Commands compared with each other run alternately (A B A B ...), so a
burst of load elsewhere on a shared machine hits both sides, and the figures are medians.

Measured processes run as an installed package runs: with its bytecode written. An editable
checkout under ``PYTHONDONTWRITEBYTECODE`` (set in some shells and CI images) would
otherwise compile every changed module in every run, which cost a small run up to a tenth
of its CPU; so children run without that variable, and :func:`alternate` runs each command
once, untimed, before timing it.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

CLI = str(Path(sys.executable).with_name("mnemometer"))
"""The ``mnemometer`` console script of this interpreter's environment."""

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
"""The environment every measured child gets (see the module docstring)."""


@dataclass
class Sample:
    """One command's runs."""

    label: str
    argv: list[str]
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rss_mb: list[float] = field(default_factory=list)

    @property
    def wall_s(self) -> float:
        """Median wall seconds."""
        return statistics.median(self.wall)

    @property
    def cpu_s(self) -> float:
        """Median CPU seconds (user + system)."""
        return statistics.median(self.cpu)

    @property
    def peak_mb(self) -> float:
        """Largest peak RSS of any run, MiB."""
        return max(self.rss_mb)


def run_once(argv: Sequence[str], sample: Sample | None = None, **kw: object) -> Sample:
    """Run ``argv`` to completion (output discarded); record wall, CPU and peak RSS.

    Raises:
        SystemExit: the command failed (its stderr is shown).
    """
    sample = sample or Sample(" ".join(argv), list(argv))
    kw.setdefault("env", ENV)
    t0 = time.perf_counter()
    proc = subprocess.Popen(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)  # type: ignore[call-overload]
    err = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{err.decode()[-2000:]}")
    sample.wall.append(wall)
    sample.cpu.append(usage.ru_utime + usage.ru_stime)
    sample.rss_mb.append(usage.ru_maxrss / 1024)
    return sample


def alternate(commands: dict[str, Sequence[str]], runs: int, before: object = None) -> dict:
    """Run every command ``runs`` times, interleaved; ``before()`` runs before each one.

    Each command first runs once untimed (bytecode written, files in the page cache).
    """
    samples = {label: Sample(label, list(argv)) for label, argv in commands.items()}
    for s in samples.values():
        if callable(before):
            before()
        run_once(s.argv)
    for _ in range(runs):
        for s in samples.values():
            if callable(before):
                before()
            run_once(s.argv, s)
    return samples


def load_line() -> str:
    """Cores and load average, for the first line of a benchmark's output."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{cores} cores, load average {os.getloadavg()[0]:.1f}"


def generate(out: Path, size: int, lang: str = "en", seed: int | None = None) -> Path:
    """Write a generated dataset of ``size`` memories to ``out`` (``mnemometer generate``).

    Raises:
        subprocess.CalledProcessError: the generator failed.
    """
    seeded = ["--seed", str(seed)] if seed is not None else []
    argv = [CLI, "generate", "--size", str(size), "--lang", lang, *seeded, "-o", str(out)]
    subprocess.run(argv, check=True, capture_output=True)
    return out
