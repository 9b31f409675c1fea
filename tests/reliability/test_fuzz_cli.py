"""Bad input is refused clearly, through the command line (run in-process).

Mutated datasets given to ``run``, mutated run directories given to ``report``, ``compare``
and ``run --resume``, and bad arguments: the command either works or exits 2 with an
``error:`` line (click's own ``Error:`` for a malformed option), never a traceback, and a
dataset that is not JSON never yields results. Cases are counted in the session's tally.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from conftest import MNEMOMETER, invoke_cli, seed_file
from mutate import TALLY, cases, unblock
from test_fuzz import DEMO, SAMPLE, strict_json

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


# ---- issue 30 §6: one line, never a traceback, never a hang -----------------------------

HANG = 60.0
"""Seconds a command may take here; a FIFO read would block forever."""


def _cli_in_a_child(*args: object, cwd: Path, memory_gib: int = 2) -> tuple[int, str]:
    """Run the CLI in a child process that must return within :data:`HANG` seconds.

    Its address space is capped (a device read whole, ``/dev/zero``, never ends); stdin is
    closed. A child still running at the deadline is killed and the case fails as a hang.
    """

    def cap() -> None:
        limit = memory_gib << 30
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    try:
        p = subprocess.run(
            [MNEMOMETER, *map(str, args)],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=HANG,
            stdin=subprocess.DEVNULL,
            preexec_fn=cap,
            env={**os.environ, "MNEMOMETER_DOTENV": "0"},
        )
    except subprocess.TimeoutExpired:
        return -1, f"hung: still running after {HANG:g} s"
    return p.returncode, p.stdout + p.stderr


def _one_error_line(code: int, out: str, label: str, names: str) -> str | None:
    """Why ``code``/``out`` is not an exit 2 with one error line naming ``names``."""
    if code == -1:
        return f"{label}: {out}"
    if "Traceback" in out or code != 2:
        return f"{label}: exit {code}: {out[-300:]!r}"
    errors = [line for line in out.splitlines() if line.startswith(("error:", "Error:"))]
    if len(errors) != 1 or names not in errors[0]:
        return f"{label}: not one error line naming {names}: {out[-300:]!r}"
    return None


def _special_inputs(good: Path, tmp: Path) -> list[tuple[str, list[object], Path]]:
    """``(label, argv, the file that is not a regular one)`` per place a file is read."""
    fifo = tmp / "pipe.toml"
    os.mkfifo(fifo)
    data = tmp / "pipe.json"
    os.mkfifo(data)
    cmp = tmp / "cmp.json"
    assert invoke_cli("compare", good, good, "-o", cmp).exit_code == 0
    runs = {}
    for name in RUN_FILES:
        run = tmp / f"run-{name}"
        shutil.copytree(good, run)
        (run / name).unlink()
        os.mkfifo(run / name)
        runs[name] = run
    llm = ("scenarios", "--agent", "rag", "--store", "bm25")
    return [
        ("a FIFO as the dataset", ["run", "-d", data, "-s", "keyword", "-o", tmp / "r1"], data),
        (
            "/dev/zero as the dataset",
            ["run", "-d", "/dev/zero", "-s", "keyword"],
            Path("/dev/zero"),
        ),
        ("a FIFO as the gate policy", ["gate", cmp, "--policy", fifo], fifo),
        ("a FIFO as the sweep file", ["sweep", fifo, "-o", tmp / "sw"], fifo),
        ("a FIFO as --llm-config", ["run", *llm, "--llm-config", fifo, "-o", tmp / "r2"], fifo),
        ("a FIFO as --config", ["run", "scenarios", "--agent", "http", "--config", fifo], fifo),
        ("a FIFO as --conditions", ["run", "--condition", "x", "--conditions", fifo], fifo),
        *[(f"a FIFO as {name}: report", ["report", run], run / name) for name, run in runs.items()],
        (
            "a FIFO as summary.json: compare",
            ["compare", runs["summary.json"], good],
            runs["summary.json"] / "summary.json",
        ),
        (
            "a FIFO as header.json: resume",
            ["run", "--resume", runs["header.json"]],
            runs["header.json"] / "header.json",
        ),
        (
            "a FIFO as items.jsonl: resume",
            ["run", "--resume", runs["items.jsonl"]],
            runs["items.jsonl"] / "items.jsonl",
        ),
    ]


def _cli_in_a_thread(*args: object, tmp: Path) -> tuple[int, str]:
    """Run the CLI in-process on a thread that must return within :data:`HANG` seconds.

    A hung command (a FIFO read) is freed by opening every FIFO under ``tmp`` for writing
    and closing it, so the test ends and fails instead of hanging.
    """
    result: list[object] = []
    worker = threading.Thread(target=lambda: result.append(invoke_cli(*args)), daemon=True)
    worker.start()
    worker.join(HANG)
    if worker.is_alive():
        unblock([f for f in tmp.rglob("*") if f.is_fifo()])
        worker.join(HANG)
        return -1, f"hung: still reading after {HANG:g} s"
    r = result[0]
    exc = getattr(r, "exception", None)
    if exc is not None and not isinstance(exc, SystemExit):
        return 1, f"Traceback: {type(exc).__name__}: {exc}"
    return getattr(r, "exit_code", 1), getattr(r, "output", "")


def test_a_fifo_or_device_where_a_file_is_expected_is_refused_not_read(
    good_run: Path, tmp_path: Path
) -> None:
    # Issue 30 §6: a FIFO as a dataset, a policy, a sweep file, a config or summary.json
    # blocked forever. Each is refused before it is opened for reading; a hang fails here.
    # Two run as the user runs them, in a child process (one reads /dev/zero, which never
    # ends: the child's memory is capped); the rest in-process, on a guarded thread.
    failures = []
    for i, (label, argv, special) in enumerate(_special_inputs(good_run, tmp_path)):
        if i < 2:
            code, out = _cli_in_a_child(*argv, cwd=tmp_path)
        else:
            code, out = _cli_in_a_thread(*argv, tmp=tmp_path)
        failure = _one_error_line(code, out, label, str(special))
        TALLY.record("cli issue 30", failure)
        failures += [failure] if failure else []
    assert failures == []


DEEP_TOML = "deep = " + "[" * 10_000 + "]" * 10_000 + "\n"


def _named_cases(good: Path, tmp: Path) -> list[tuple[str, list[object], str]]:
    """``(label, argv, what its one error line must name)``: the other cases issue 30 named."""
    demo = json.loads(DEMO.read_text("utf-8"))
    demo["memories"][0]["text"] = "\ud800"  # json.dumps writes it as the escape \\ud800
    (tmp / "surrogate.json").write_text(json.dumps(demo))
    (tmp / "deep.toml").write_text(DEEP_TOML)
    suite = tmp / "deep-suite"
    suite.mkdir()
    (suite / "suite.toml").write_text('name = "deep"\n' + DEEP_TOML)
    (suite / "items.jsonl").write_text("")
    sweep = 'suite = "retrieval"\n[[systems]]\nstore = "keyword"\n[[datasets]]\npath = "demo-en"\n'
    (tmp / "ok.toml").write_text(sweep)
    (tmp / "top_k.toml").write_text('suite_options = { top_k = "x" }\n' + sweep)
    (tmp / "a-file").write_text("not a directory\n")
    corrupt = tmp / "corrupt"
    shutil.copytree(good, corrupt)
    lines = (corrupt / "items.jsonl").read_bytes().splitlines(True)
    lines[len(lines) // 2] = b'{"item_id": "q", broken\n'
    (corrupt / "items.jsonl").write_bytes(b"".join(lines))
    cmp = tmp / "cmp.json"
    assert invoke_cli("compare", good, good, "-o", cmp).exit_code == 0
    llm = ["run", "scenarios", "--agent", "rag", "--store", "bm25"]
    afile = tmp / "a-file"
    return [
        (
            "a lone surrogate in a dataset",
            ["run", "-d", tmp / "surrogate.json", "-s", "bm25", "-o", tmp / "r1"],
            "surrogate.json:",
        ),
        ("deep TOML as a gate policy", ["gate", cmp, "--policy", tmp / "deep.toml"], "deep.toml"),
        ("deep TOML as --llm-config", [*llm, "--llm-config", tmp / "deep.toml"], "deep.toml"),
        ("deep TOML as suite.toml", ["run", suite, "-o", tmp / "r2"], "suite.toml"),
        ("deep TOML as a sweep file", ["sweep", tmp / "deep.toml", "-o", tmp / "s1"], "deep.toml"),
        ("a sweep with top_k = 'x'", ["sweep", tmp / "top_k.toml", "-o", tmp / "s2"], "top_k"),
        (
            "--out naming a file: a run",
            ["run", "-d", "demo-en", "-s", "bm25", "-o", afile],
            "a-file",
        ),
        (
            "--out naming a file: an experiment",
            ["run", "-d", "demo-en", "--condition", "lexical", "-o", afile],
            "a-file",
        ),
        ("--out naming a file: a sweep", ["sweep", tmp / "ok.toml", "-o", afile], "a-file"),
        ("-o under a file: a report", ["report", good, "-o", afile / "r.md"], "a-file"),
        ("-o under a file: a leaderboard", ["leaderboard", good, "-o", afile / "b.md"], "a-file"),
        ("-o under a file: an export", ["export", good, "-o", afile / "x.jsonl"], "a-file"),
        (
            "a corrupt line in the middle of a finished run's log",
            ["report", corrupt],
            f"items.jsonl:{len(lines) // 2 + 1}",
        ),
    ]


def test_the_cases_of_issue_30_end_in_one_line_naming_the_place(
    good_run: Path, tmp_path: Path
) -> None:
    # Issue 30 §6: a traceback each (UnicodeEncodeError in the dataset hash, RecursionError,
    # ValueError, NotADirectoryError), and a corrupt log reported as "items 15/15".
    failures = []
    for label, argv, names in _named_cases(good_run, tmp_path):
        code, out = _cli_in_a_thread(*argv, tmp=tmp_path)
        failure = _one_error_line(code, out, label, names)
        TALLY.record("cli issue 30", failure)
        failures += [failure] if failure else []
    assert failures == []


def test_a_nul_byte_in_a_fixture_path_is_a_finding_of_doctor(tmp_path: Path) -> None:
    # Issue 30 §6: `doctor` ended in "ValueError: embedded null byte" for '../a\0b'.
    suite = tmp_path / "suite"
    (suite / "fx").mkdir(parents=True)
    (suite / "suite.toml").write_text('name = "nul"\n')
    item = {"eval_type": "agent_build_task", "id": "a", "prompt": "p", "agent_command": "true"}
    lines = [
        json.dumps({**item, "id": f"a{i}", "fixture": fx})
        for i, fx in enumerate(["../fx\0b", "fx\0", "fx/../\0"])
    ]
    (suite / "items.jsonl").write_text("\n".join(lines) + "\n")
    code, out = _cli_in_a_thread("doctor", suite, tmp=tmp_path)
    failure = None if code == 1 and "Traceback" not in out else f"doctor: exit {code}: {out[-300:]}"
    found = [line for line in out.splitlines() if line.startswith("FAIL item.a")]
    if failure is None and (len(found) != 3 or not all("NUL" in line for line in found)):
        failure = f"doctor: not one finding per item naming the NUL byte: {found}"
    if failure is None and "\0" in out:
        failure = "doctor: a raw NUL byte written to the terminal"
    TALLY.record("cli issue 30", failure)
    assert failure is None


def test_the_markdown_report_shows_html_in_a_dataset_name_as_text(tmp_path: Path) -> None:
    # Issue 30 §6: `report --format md` wrote a dataset name's raw HTML into the document.
    demo = json.loads(DEMO.read_text("utf-8"))
    demo["info"]["name"] = "<img src=x onerror=alert(1)>|[x](javascript:alert(2))"
    (tmp_path / "html.json").write_text(json.dumps(demo))
    out = tmp_path / "run"
    assert invoke_cli("run", "-d", tmp_path / "html.json", "-s", "bm25", "-o", out).exit_code == 0
    md = invoke_cli("report", out, "--format", "md").output
    cmp = invoke_cli("compare", out, out, "--format", "md").output
    failure = None
    for what, text in (("report", md), ("compare", cmp)):
        if "<img" in text or re.search(r"(?<!\\)\]\(javascript", text):  # a live link
            failure = f"{what}: raw markup in the Markdown: {text[:300]!r}"
    if failure is None and "&lt;img src=x onerror=alert(1)&gt;\\|" not in md:
        failure = f"report: the name is not shown as text: {md[:300]!r}"
    TALLY.record("cli issue 30", failure)
    assert failure is None
