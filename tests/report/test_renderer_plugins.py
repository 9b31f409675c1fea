"""Report formats from plug-ins: docs/extending.md's guide, done as it says, and broken ones.

The guide's plug-in is taken from the page (its ``<!-- file: NAME -->`` blocks), installed
as pip would install it (``plugins.install_project``), and the page's own commands run on
a demo run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import plugins
from conftest import MNEMOMETER, REPO
from test_docs import blocks

from mnemometer import run
from mnemometer.report import renderer, report
from mnemometer.report._registry import RENDERERS

GUIDE = REPO / "docs" / "extending.md"
_FILE = re.compile(r"^<!-- file: (\S+) -->\n```\w*\n(.*?)^```$", re.M | re.S)


def _section(title: str) -> str:
    return GUIDE.read_text("utf-8").split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _demo_run(cwd: Path) -> Path:
    """``runs/demo/demo-en-bm25`` under ``cwd``, as ``make demo`` leaves it."""
    return run("retrieval", "bm25", dataset="demo-en", out=cwd / "runs/demo/demo-en-bm25").path


def _env(site: Path) -> dict[str, str]:
    bin_dir = str(Path(MNEMOMETER).parent)
    return {**os.environ, "PYTHONPATH": str(site), "PATH": f"{bin_dir}:{os.environ['PATH']}"}


def test_the_guides_plugin_adds_a_format_wherever_runs_are_rendered(tmp_path: Path) -> None:
    files = dict(_FILE.findall(_section("Add a report format")))
    assert set(files) == {"mnemometer_tsv.py", "pyproject.toml"}
    project = tmp_path / "mnemometer-tsv"
    project.mkdir()
    for name, text in files.items():
        (project / name).write_text(text, "utf-8")
    site = plugins.install_project(tmp_path / "site", project)
    path = _demo_run(tmp_path)

    block = next(b for b in blocks(GUIDE) if "--format tsv" in b.text)
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", block.text],
        cwd=tmp_path,
        env=_env(site),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    # What the CLI wrote is what the page's function makes of the run (registered here).
    module: dict = {"__name__": "mnemometer_tsv"}
    exec(files["mnemometer_tsv.py"], module)
    renderer("run", "tsv")(module["run_tsv"])
    try:
        expected = report(path, "tsv")
    finally:
        RENDERERS.unregister("run.tsv")
    assert expected.startswith("scope\tmetric\tvalue\tn\noverall\t") and "\ntype=" in expected
    assert done.stdout.startswith(expected)  # --format tsv
    assert (tmp_path / "bm25.tsv").read_text() == expected  # -o bm25.tsv
    assert (tmp_path / "bm25.tab").read_text() == expected  # -o bm25.tab: the declared suffix
    assert "html|json|md|text|tsv" in done.stdout  # --help

    p = subprocess.run(
        [MNEMOMETER, "report", str(path), "--format", "pdf"],
        env=_env(site),
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2 and "'text', 'tsv'" in p.stderr  # the choices name it
    p = subprocess.run(
        [MNEMOMETER, "leaderboard", str(path), "--format", "tsv"],
        env=_env(site),
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2 and "'tsv' is not one of" in p.stderr  # a format of runs only


def test_a_broken_renderer_plugin_is_named_and_every_other_format_renders(
    tmp_path: Path,
) -> None:
    env = _env(plugins.install(tmp_path / "plug", renderers=True))
    path = _demo_run(tmp_path)

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([MNEMOMETER, *args], env=env, capture_output=True, text=True)

    for fmt, needle in (("text", "hit"), ("md", "| metric |"), ("json", '"summary"')):
        p = cli("report", str(path), "--format", fmt)
        assert p.returncode == 0 and needle in p.stdout, p.stderr
    p = cli("report", "--help")
    assert p.returncode == 0 and "broken|html" in p.stdout
    p = cli("report", str(path), "--format", "broken")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip() == (
        "error: renderer 'run.broken' (mnemo_test_broken:run_broken) failed to load: "
        "RuntimeError: this plug-in is broken"
    )
    # A broken kind is a warning naming it when a kind is looked for, never a dead lookup.
    code = (
        "import warnings; warnings.simplefilter('always')\n"
        "from mnemometer.report import kind_of\n"
        "try:\n    kind_of(object())\nexcept Exception as e:\n    print(e)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert p.stdout.strip() == "nothing renders a object", p.stderr
    assert "renderer 'broken' (mnemo_test_broken:Broken) failed to load: RuntimeError" in p.stderr
