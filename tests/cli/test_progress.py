"""Progress by phase: a line now and then off a terminal, every phase named."""

from __future__ import annotations

from conftest import invoke_cli

from mnemometer.cli._progress import PhaseProgress


def test_off_a_terminal_each_phase_starts_and_ends_with_a_line(capsys):
    with PhaseProgress("memtest", every=3600, terminal=False) as p:
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


def test_the_run_command_names_its_phases(tmp_path):
    r = invoke_cli(*"run retrieval -d demo-en -s keyword --format none -o".split(), tmp_path / "r")
    assert r.exit_code == 0, r.output
    assert "retrieval · index" in r.output and "retrieval · items 15/15 (100%)" in r.output
