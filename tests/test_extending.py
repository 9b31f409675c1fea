"""docs/extending.md's "Add a benchmark", done exactly as the page says.

The page's plug-in (its ``<!-- file: NAME -->`` blocks) is installed as pip would install
it, and the page's own commands run in a fresh directory: the suite and its scorer are
listed, two stores run, the runs compare on the declared headline, and ``mnemometer score``
re-scores one under another headline without asking its store again.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import plugins
from conftest import MNEMOMETER, REPO
from test_docs import blocks

GUIDE = REPO / "docs" / "extending.md"
_FILE = re.compile(r"^<!-- file: (\S+) -->\n```\w*\n(.*?)^```$", re.M | re.S)


def _section(title: str) -> str:
    return GUIDE.read_text("utf-8").split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_the_guides_benchmark_runs_compares_and_rescores_on_its_headline(tmp_path: Path):
    files = dict(_FILE.findall(_section("Add a benchmark")))
    assert set(files) == {"mnemometer_capitals.py", "pyproject.toml"}
    project = tmp_path / "mnemometer-capitals"
    project.mkdir()
    for name, text in files.items():
        (project / name).write_text(text, "utf-8")
    site = plugins.install_project(tmp_path / "site", project)
    env = {
        **os.environ,
        "PYTHONPATH": str(site),
        "PATH": f"{Path(MNEMOMETER).parent}:{os.environ['PATH']}",
    }
    block = next(b for b in blocks(GUIDE) if "mnemometer run capitals" in b.text)
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", block.text],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "capitals" in out and "exact-answer" in out  # both listed
    assert "headline: exact answer" in out  # the bm25 run's report leads with it
    assert "exact answer:" in out  # the comparison's headline line
    runs = tmp_path / "runs"
    summary = json.loads((runs / "capitals-bm25" / "summary.json").read_text())
    assert summary["headline"]["label"] == "exact answer" and summary["headline"]["n"] == 8
    exact = next(m["value"] for m in summary["overall"] if m["name"] == "exact")
    assert summary["headline"]["value"] == exact
    header = json.loads((runs / "capitals-bm25" / "header.json").read_text())
    assert [s["name"] for s in header["scoring"]["scorers"]] == ["exact-answer", "ranking"]
    rescored = json.loads((runs / "capitals-bm25-hit" / "summary.json").read_text())
    hit = next(m["value"] for m in summary["overall"] if m["name"] == "hit" and m["k"] == 1)
    assert rescored["headline"]["label"] == "hit@1" and rescored["headline"]["value"] == hit
    parent = json.loads((runs / "capitals-bm25-hit" / "header.json").read_text())["parent"]
    assert parent["run_id"] == header["run_id"]
