"""The docs' shell blocks run as written (issue 16: a documented command never silently breaks).

Every ```bash / ```sh block in README.md and docs/ carries a marker on the line before it
(the convention is in docs/testing.md, "Documented commands"):

    <!-- runnable -->                       run by this test, as written
    <!-- runnable needs=demo -->            ... after scripts/demo.sh (what `make demo` runs)
    <!-- not runnable: REASON -->           never run here (a server, a key, the real model)

The fast tests check that every block is marked and that no two runnable blocks write the
same run directory. The slow test copies the checkout (tracked files only, as a fresh
clone) to a scratch directory beside a link to ../shared, activates the project's .venv
there, and runs each document's runnable blocks in order with ``bash -e``; background
servers a block starts (``cmd &``) are stopped with the block's process group.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHELL = {"bash", "sh", "shell"}
_FENCE = re.compile(r"^```([^`\s]*)[^`]*$")  # an info string never holds a backtick
_MARK = re.compile(r"^<!--\s*(not runnable|runnable)\b:?\s*(.*?)\s*-->\s*$")


@dataclass
class Block:
    """One fenced shell block of a document."""

    doc: str
    line: int
    text: str
    runnable: bool | None
    """True/False from its marker; None when it has none."""
    options: dict[str, str] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def documents() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def blocks(path: Path, root: Path = REPO) -> list[Block]:
    """The shell blocks of ``path`` with their markers."""
    lines = path.read_text("utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        if m.group(1) in SHELL:
            prev = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
            mark = _MARK.match(prev.strip())
            runnable = None if mark is None else mark.group(1) == "runnable"
            options = {}
            if mark and runnable:
                options = dict(kv.split("=", 1) for kv in shlex.split(mark.group(2)))
            rel = str(path.relative_to(root))
            out.append(Block(rel, i + 1, "\n".join(lines[i + 1 : end]), runnable, options))
        i = end + 1
    return out


ALL = [b for d in documents() for b in blocks(d)]
RUNNABLE = [b for b in ALL if b.runnable]


def _commands(text: str) -> list[list[str]]:
    """The commands of a block, continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n", " ", text)
    out = []
    for line in joined.splitlines():
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue
        if words:
            out.append(words)
    return out


def _run_outputs(block: Block) -> list[str]:
    """Directories ``mnemometer run`` creates in a block (they refuse to be reused)."""
    found = []
    for words in _commands(block.text):
        if words[:2] != ["mnemometer", "run"] or "--resume" in words:
            continue
        for i, w in enumerate(words[:-1]):
            if w in ("--out", "-o"):
                found.append(words[i + 1])
    return found


def test_every_shell_block_is_marked_runnable_or_says_why_not():
    unmarked = [b.where for b in ALL if b.runnable is None]
    assert not unmarked, (
        "shell blocks without <!-- runnable --> or <!-- not runnable: why --> before them "
        f"(docs/testing.md): {unmarked}"
    )
    assert len(RUNNABLE) >= 15  # the docs test covers most of what a newcomer pastes


def test_no_two_runnable_blocks_write_the_same_run_directory():
    seen: dict[str, str] = {}
    clashes = []
    for b in RUNNABLE:
        for out in _run_outputs(b):
            if out in seen:
                clashes.append(f"{out}: {seen[out]} and {b.where}")
            seen[out] = b.where
    assert not clashes, clashes


def test_the_marker_parser(tmp_path: Path):
    doc = tmp_path / "x.md"
    doc.write_text(
        "<!-- runnable needs=demo timeout=60 -->\n```bash\nmnemometer run a \\\n"
        "  --out runs/a\n```\n\n<!-- not runnable: a server -->\n```sh\nx\n```\n"
        "```bash\ny\n```\n```text\nz\n```\n"
    )
    a, b, c = blocks(doc, root=tmp_path)
    assert (a.runnable, a.options, a.line) == (True, {"needs": "demo", "timeout": "60"}, 2)
    assert _run_outputs(a) == ["runs/a"]
    assert (b.runnable, c.runnable) == (False, None)


# ---- the slow part: run them -------------------------------------------------------------


def _scratch_clone(tmp: Path) -> Path:
    """Tracked files only, as a fresh clone has them, with ../shared and .venv beside."""
    root = tmp / "clone"
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (f.decode() for f in files)):
        src, dst = REPO / name, root / name
        if src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(src.read_bytes())
    shared = REPO.parent / "shared"
    if shared.is_dir():
        (tmp / "shared").symlink_to(shared)
    (root / ".venv").symlink_to(Path(sys.prefix))
    return root


def _run(block: Block, root: Path, script: str, timeout: float) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMOMETER_")}
    env.pop("VIRTUAL_ENV", None)
    prelude = "set -e -o pipefail\nsource .venv/bin/activate\nPS4='+ '\nset -x\n"
    log = root.parent / "block.log"
    # A file, not a pipe: a server the block leaves in the background keeps its output open.
    with open(log, "w") as out:
        proc = subprocess.Popen(
            ["bash", "-c", prelude + script],
            cwd=root,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: background servers stop with it
        )
        try:
            proc.wait(timeout=timeout)
            note = ""
        except subprocess.TimeoutExpired:
            note = f"\n[docs test: {block.where} did not finish in {timeout:g} s]"
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # what the block left in the background
            except ProcessLookupError:
                pass
            proc.wait()
    code = -1 if note else proc.returncode
    return subprocess.CompletedProcess(proc.args, code, log.read_text("utf-8", "replace") + note)


def test_a_block_fails_on_its_first_failing_command_and_leaves_no_server(tmp_path: Path):
    root = tmp_path / "clone"
    root.mkdir()
    (root / ".venv").symlink_to(Path(sys.prefix))
    block = Block("x.md", 1, "", True)
    t0 = time.monotonic()
    # A background process holding the output open must not keep the block from ending.
    res = _run(block, root, "sleep 300 &\necho started\nfalse\necho never", 60)
    assert time.monotonic() - t0 < 30
    assert res.returncode == 1 and "started" in res.stdout and "+ echo never" not in res.stdout
    assert _run(block, root, "command -v mnemometer", 60).returncode == 0  # .venv is active


@pytest.mark.slow
@pytest.mark.parametrize(
    "doc", sorted({b.doc for b in RUNNABLE}), ids=lambda d: d.replace("/", "-")
)
def test_runnable_blocks_run_as_written_in_a_fresh_clone(doc: str, tmp_path: Path):
    root = _scratch_clone(tmp_path)
    failures = []
    ran = 0
    demo = False
    for block in (b for b in RUNNABLE if b.doc == doc):
        if "../shared/" in block.text and not (tmp_path / "shared").is_dir():
            continue  # seed data lives beside the checkout; not here
        if block.options.get("needs") == "demo" and not demo:
            _run(block, root, "bash scripts/demo.sh .venv/bin >/dev/null", 900)
            demo = True
        res = _run(block, root, block.text, float(block.options.get("timeout", 900)))
        ran += 1
        if res.returncode != 0:
            failures.append(f"--- {block.where} exit {res.returncode}:\n{res.stdout[-3000:]}")
    if not ran:
        pytest.skip(f"{doc}: every runnable block needs ../shared, which is absent")
    assert not failures, "\n".join(failures)


def test_the_readme_python_block_runs_as_written(tmp_path: Path, monkeypatch, capsys):
    """The README's "From Python" block, executed as a user pastes it (issue 32 §5)."""
    text = (REPO / "README.md").read_text("utf-8")
    start = text.index("```python", text.index("From Python"))
    code = text[start + len("```python") : text.index("```", start + 3)]
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__readme__"}
    exec(compile(code, "README.md (From Python)", "exec"), namespace)
    result = namespace["result"]
    assert repr(result).startswith("RunResult(runs/py-bm25: retrieval on demo-en, hit@20 ")
    assert (tmp_path / "runs" / "py-mine" / "summary.json").is_file()
    assert len(list((tmp_path / "runs" / "py-exp").glob("*-r*"))) == 6
    # What it prints is for a person: no wall of dataclass fields (it was 100,000+ chars).
    printed = capsys.readouterr().out
    assert printed.splitlines()[-1].startswith("Comparison(retrieval: lexical vs kw, hit@20 ")
    assert max(len(line) for line in printed.splitlines()) < 200
