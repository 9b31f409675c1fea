"""Bad input is refused clearly, through the command line (run in-process).

Mutated datasets given to ``run``, mutated run directories given to ``report``, ``compare``
and ``run --resume``, and bad arguments: the command either works or exits 2 with an
``error:`` line (click's own ``Error:`` for a malformed option), never a traceback, and a
dataset that is not JSON never yields results. Cases are counted in the session's tally.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import invoke_cli, seed_file
from mutate import TALLY, cases
from test_fuzz import SAMPLE, strict_json

RUN_FILES = {"header.json": "json", "summary.json": "json", "items.jsonl": "jsonl"}


def _verdict(result: object, label: str, *, names: str | None = None) -> str | None:
    """Why a CLI result broke the contract, or None."""
    exc = getattr(result, "exception", None)
    code = getattr(result, "exit_code", None)
    out = getattr(result, "output", "")
    if exc is not None and not isinstance(exc, SystemExit):
        return f"{label}: {type(exc).__name__}: {str(exc)[:200]}"
    if "Traceback" in out:
        return f"{label}: a traceback"
    if code == 2:
        errors = [line for line in out.splitlines() if line.startswith(("error:", "Error:"))]
        if len(errors) != 1:
            return f"{label}: exit 2 without one error line: {out[-300:]!r}"
        if names is not None and names not in errors[0]:
            return f"{label}: the error does not name {names}: {errors[0][:200]!r}"
    elif code not in (0, 1):  # 1: a run whose items failed, or a comparison that regressed
        return f"{label}: exit {code}: {out[-300:]!r}"
    return None


@pytest.fixture(scope="module")
def good_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "good"
    result = invoke_cli("run", "--dataset", "demo-en", "--store", "keyword", "--out", out)
    assert result.exit_code == 0, result.output
    return out


def test_40_mutations_of_the_100_memory_sample_through_run(tmp_path: Path) -> None:
    failures = []
    for i, (label, data) in enumerate(
        cases(seed_file(*SAMPLE).read_bytes(), "json", seed_number=40, n=40)
    ):
        path = tmp_path / f"sample{i}.json"
        path.write_bytes(data)
        args = ("run", "--dataset", path, "--store", "keyword", "--out", tmp_path / f"r{i}")
        result = invoke_cli(*args)
        failure = _verdict(result, label, names=path.name)
        if failure is None and result.exit_code != 2 and not strict_json(data, "json"):
            failure = f"{label}: a file that is not JSON gave results"
        TALLY.record("cli run --dataset", failure)
        failures += [failure] if failure else []
    assert failures == []


def _mutated_runs(good: Path, tmp: Path, n: int) -> list[tuple[str, Path]]:
    runs = []
    for name, kind in RUN_FILES.items():
        for j, (label, data) in enumerate(cases((good / name).read_bytes(), kind, 7, n)):
            run = tmp / f"{name}-{j}"
            shutil.copytree(good, run)
            (run / name).write_bytes(data)
            runs.append((f"{name}: {label}", run))
    return runs


def test_mutated_run_directories_given_to_report(good_run: Path, tmp_path: Path) -> None:
    failures = []
    for label, run in _mutated_runs(good_run, tmp_path, 20):
        failure = _verdict(invoke_cli("report", run), label)
        TALLY.record("cli report RUN", failure)
        failures += [failure] if failure else []
    assert failures == []


@pytest.mark.slow
def test_mutated_run_directories_given_to_compare_and_resume(
    good_run: Path, tmp_path: Path
) -> None:
    failures = []
    for label, run in _mutated_runs(good_run, tmp_path, 12):
        for verb, args in (("compare", (run, good_run)), ("resume", ("run", "--resume", run))):
            cmd = args if verb == "resume" else ("compare", *args)
            failure = _verdict(invoke_cli(*cmd), f"{verb}: {label}")
            TALLY.record(f"cli {verb}", failure)
            failures += [failure] if failure else []
    assert failures == []


def test_compare_a_run_with_itself(good_run: Path) -> None:
    # Issue 20: `mnemometer compare RUN RUN` used to end in a traceback.
    result = invoke_cli("compare", good_run, good_run)
    assert result.exit_code == 0 and "self-comparison" in result.output, result.output


BAD_ARGUMENTS = [
    ("run", "--dataset", "no-such-dataset", "--store", "keyword"),
    ("run", "--dataset", "demo-en", "--store", "no-such-store"),
    ("run", "--dataset", "demo-en", "--store", "keyword", "--top-k", "nan"),
    ("run", "--dataset", "demo-en", "--store", "keyword", "--top-k", "-5"),
    ("run", "--dataset", "demo-en", "--store", "keyword", "--limit", "0"),
    ("run", "--dataset", "demo-en", "--store", "keyword", "-S", "no-equals-sign"),
    ("run", "--dataset", "demo-en", "--store", "keyword", "--repeats", "-1"),
    ("run", "--dataset", "demo-en", "--store", "keyword", "--concurrency", "0"),
    ("run", "--dataset", "demo-en", "--store", "keyword", "--format", "klingon"),
    ("run", "--resume", "no-such-run"),
    ("run", "no-such-suite", "--store", "keyword"),
    ("report", "no-such-run"),
    ("report", "."),
    ("compare", "no-such-run", "no-such-run"),
    ("gate", "no-such-comparison.json", "--policy", "no-such-policy.toml"),
    ("leaderboard", "no-such-dir"),
    ("export", "no-such-run"),
    ("log", "summarize", "no-such-run"),
    ("list", "no-such-kind"),
    ("generate", "--memories", "-3"),
    ("run", "--dataset", "demo-en", "--condition", "fast", "--conditions", "missing.toml"),
    ("sweep", "missing.toml", "out"),
]


@pytest.mark.parametrize("args", BAD_ARGUMENTS, ids=lambda a: " ".join(a)[:60])
def test_bad_arguments_are_refused_in_one_line(args: tuple[str, ...]) -> None:
    result = invoke_cli(*args)
    failure = _verdict(result, " ".join(args))
    if failure is None and result.exit_code != 2:
        failure = f"{' '.join(args)}: exit {result.exit_code}, not refused: {result.output[-200:]}"
    TALLY.record("cli arguments", failure)
    assert failure is None
