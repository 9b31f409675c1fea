"""Progress by phase: a line now and then off a terminal, every phase named."""

from __future__ import annotations

import pytest
from conftest import invoke_cli

from mnemometer.cli._progress import PhaseProgress


class Clock:
    """Seconds that pass only when the test says so (any origin: a machine's uptime)."""

    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("origin", [0.0, 5.0, 1e6])  # booted just now, or long ago
def test_off_a_terminal_each_phase_starts_and_ends_with_a_line(capsys, origin):
    clock = Clock(origin)
    with PhaseProgress("memtest", every=3600, terminal=False, clock=clock) as p:
        p("index", 0, 1000)
        for n in range(1, 1001):
            p("index", n, 1000)
        p("index", 1000, 1000)  # a repeated end is not printed twice
        for n in range(1, 51):
            p("items", n, 50)
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "memtest · index 0/1000 (0%) · 0 s",
        "memtest · index 1000/1000 (100%) · 0 s",
        "memtest · items 1/50 (2%) · 0 s · ETA 0 s",
        "memtest · items 50/50 (100%) · 0 s",
    ]


def test_off_a_terminal_a_line_every_interval_with_elapsed_time_and_eta(capsys):
    clock = Clock(100.0)
    with PhaseProgress("locomo", every=10, terminal=False, clock=clock) as p:
        for n in range(1, 11):
            p("questions", n, 10)
            clock.now += 6.0  # a question takes 6 s: a line every other question
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "locomo · questions 1/10 (10%) · 0 s · ETA 0 s",
        "locomo · questions 3/10 (30%) · 12 s · ETA 28 s",
        "locomo · questions 5/10 (50%) · 24 s · ETA 24 s",
        "locomo · questions 7/10 (70%) · 36 s · ETA 15 s",
        "locomo · questions 9/10 (90%) · 48 s · ETA 5 s",
        "locomo · questions 10/10 (100%) · 54 s",
    ]


def test_the_run_command_names_its_phases(tmp_path):
    r = invoke_cli(*"run retrieval -d demo-en -s keyword --format none -o".split(), tmp_path / "r")
    assert r.exit_code == 0, r.output
    assert "retrieval · index" in r.output and "retrieval · items 15/15 (100%)" in r.output


def test_a_phase_counting_from_the_start_again_starts_its_clock_again(capsys):
    # An experiment's runs each count their items from 1: the second run's ETA was computed
    # from the first run's start ("items 1/32 · 17 s · ETA 9 min" for a 16 s run).
    clock = Clock(0.0)
    with PhaseProgress("team", every=3600, terminal=False, clock=clock) as p:
        for _ in range(2):
            for n in range(1, 33):
                p("items", n, 32)
                clock.now += 0.5
            clock.now += 100.0  # the next run's setup
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "team · items 1/32 (3%) · 0 s · ETA 0 s",
        "team · items 32/32 (100%) · 16 s",
        "team · items 1/32 (3%) · 0 s · ETA 0 s",
        "team · items 32/32 (100%) · 16 s",
    ]


def test_on_a_terminal_a_phase_counting_from_the_start_again_gets_a_fresh_bar():
    clock = Clock(0.0)
    with PhaseProgress("team", terminal=True, clock=clock) as p:
        for n in range(1, 33):
            p("items", n, 32)
            clock.now += 0.5
        clock.now += 100.0
        p("items", 1, 32)  # the next run of the experiment
        (task,) = p._bar.tasks
        assert task.completed == 1 and task.elapsed == 0.0  # not 116 s: no 1-hour ETA
