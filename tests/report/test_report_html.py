"""HTML reports and the leaderboard, checked as files (the browser tests open them for real)."""

from __future__ import annotations

import base64
import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import invoke_cli
from report_helpers import synthetic_run

from mnemometer import SystemSpec, run
from mnemometer.comparison import compare
from mnemometer.report import _figures as fig
from mnemometer.report import formats, leaderboard, render, report


def _embedded(page: str, element_id: str) -> object:
    m = re.search(
        rf'<script type="application/gzip-base64" id="{element_id}">([^<]*)</script>', page
    )
    assert m, f"no {element_id} in the page"
    return json.loads(gzip.decompress(base64.b64decode(m.group(1))))


def _assert_self_contained(page: str) -> None:
    assert page.startswith("<!doctype html>")
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    # Nothing points outside the page: no src at all, links only to anchors or files nearby.
    assert not re.search(r"\ssrc=", page)
    assert not re.search(r"""(href|url)\s*[=(]\s*["']?(https?:)?//""", page)
    assert "@import" not in page and "@font-face" not in page


def test_html_is_a_format_of_every_report_kind():
    for kind in ("run", "comparison", "leaderboard", "gate"):
        assert "html" in formats(kind)
    assert set(formats("leaderboard")) >= {"text", "md", "csv", "json", "html"}


def test_a_run_page_is_one_file_with_charts_items_and_the_header(tmp_path: Path):
    res = run("retrieval", "bm25", dataset="demo-en", out=tmp_path / "r")
    page = report(res.path, "html")
    _assert_self_contained(page)
    assert page.count("<svg") >= 4  # at-k, overall, by type, by difficulty, latency
    for needle in (
        "By type (95% CI)",
        "By difficulty (95% CI)",
        "Latency",
        "Full header",
        res.header.run_id,
        res.header.dataset.content_hash,
        "hit@20 (headline)",
    ):
        assert needle in page, needle
    items = _embedded(page, "mm-items-data")
    assert len(items) == 15 and {"id", "in", "g"} <= set(items[0])
    first = items[0]
    assert set(first["exp"]) & {h[0] for h in first["ret"]}  # relevant hits are there to mark
    # svg ids are unique across the page (one chart's clip path never clips another's)
    ids = re.findall(r'\sid="([^"]+)"', page)
    assert len(ids) == len(set(ids))


def test_a_page_shows_errors_verdicts_notes_tokens_and_computed_intervals(tmp_path: Path):
    path = synthetic_run(tmp_path / "s", 60, errors=4)
    page = report(path, "html")
    assert "Dataset notes and errata" in page and "erratum 2" in page
    assert "Tokens and cost" in page and "4 errors" in page
    items = _embedded(page, "mm-items-data")
    assert sum(1 for it in items if it.get("st") == "error") == 4
    assert "TimeoutError" in next(it["err"] for it in items if "err" in it)
    assert next(it for it in items if "v" in it)["v"]["judge"]["verdict"] in ("correct", "wrong")
    assert "wilson" in page  # the summary had no intervals: the page computed them


def test_intervals_wilson_and_t_stay_in_range():
    low, high = fig.wilson(8, 10)
    assert (round(low, 3), round(high, 3)) == (0.49, 0.943)
    assert fig.wilson(0, 5)[0] == 0.0 and fig.wilson(5, 5)[1] == 1.0
    e = fig.estimate("recall", [1.0, 0.5, 1.0, 1.0])
    assert e.method == "t" and e.high == 1.0 and 0.0 <= e.low < e.value
    assert fig.estimate("x", [0.3]).low is None  # one value: no interval, not a fake one


def test_the_leaderboard_never_puts_different_data_in_one_column(tmp_path: Path):
    runs = tmp_path / "runs"
    for ds in ("demo-en", "demo-zh"):
        for store in ("keyword", "bm25"):
            run("retrieval", store, dataset=ds, out=runs / f"{ds}-{store}")
    run("retrieval", "bm25", dataset="demo-en", suite_options={"top_k": 5}, out=runs / "k5")
    b = leaderboard([runs])
    assert len(b.columns) == 3  # demo-en, demo-en with top_k=5, demo-zh
    assert len({c.dataset_hash for c in b.columns}) == 2
    assert len({c.label for c in b.columns}) == 3  # options that differ are named
    by = {r.system: r for r in b.rows}
    assert set(by) == {"bm25", "keyword"}
    assert len(by["bm25"].cells) == 3 and len(by["keyword"].cells) == 2
    for r in b.rows:
        for cell in r.cells.values():
            assert cell.low is not None and cell.low <= cell.value <= cell.high
    csv_lines = render(b, "csv").splitlines()
    assert csv_lines[0].startswith("system,kind,suite") and len(csv_lines) == 1 + 5
    assert json.loads(render(b, "json"))["kind"] == "mnemometer-leaderboard"
    assert "| bm25 |" in render(b, "md")


def test_rows_name_only_the_options_that_tell_runs_of_a_system_apart(tmp_path: Path):
    runs = tmp_path / "runs"
    for seed in (0, 1):
        spec = SystemSpec.store("bm25", tie_seed=seed)
        run("retrieval", spec, dataset="demo-en", out=runs / f"bm25-{seed}")
    run("retrieval", "keyword", dataset="demo-en", out=runs / "kw")  # records tie_seed=0 too
    rows = {r.system for r in leaderboard([runs]).rows}
    assert rows == {"bm25 [tie_seed=0]", "bm25 [tie_seed=1]", "keyword"}


def test_repeats_share_a_cell_with_items_as_the_unit(tmp_path: Path):
    a = synthetic_run(tmp_path / "runs" / "a", 40, seed=1)
    b = synthetic_run(tmp_path / "runs" / "b", 40, seed=2)
    (cell,) = leaderboard([a, b], metric="success").rows[0].cells.values()
    assert cell.n == 40 and len(cell.runs) == 2  # 40 items, not 80 results
    assert "averaged over 2 runs" in cell.method


def test_leaderboard_cli_links_every_cell_to_its_run_report(tmp_path: Path):
    for store in ("keyword", "bm25"):
        run("retrieval", store, dataset="demo-en", out=tmp_path / "runs" / store)
    out = tmp_path / "site" / "board.html"
    r = invoke_cli("leaderboard", tmp_path / "runs", "-o", out)
    assert r.exit_code == 0, r.output
    assert "━" not in r.output and not r.stdout  # off a terminal: progress lines, no bar
    page = out.read_text()
    _assert_self_contained(page)
    links = re.findall(r'href="([^"#]+)"', page)
    assert len(links) == 2
    for link in links:
        target = out.parent / link
        assert target.is_file() and "mm-items-data" in target.read_text()
    r = invoke_cli("leaderboard", tmp_path / "runs", "--format", "csv")
    assert r.exit_code == 0 and r.stdout.startswith("system,")


def _answered(path: Path, outcomes: list[bool], answer: str) -> Path:
    """A run whose items answer ``answer``; success as given."""
    synthetic_run(path, len(outcomes), errors=0, seed=1)
    lines = []
    for line, ok in zip((path / "items.jsonl").read_text().splitlines(), outcomes, strict=True):
        d = json.loads(line)
        d.update(success=ok, output=f"{answer} {d['item_id']}")
        lines.append(json.dumps(d))
    (path / "items.jsonl").write_text("\n".join(lines) + "\n")
    return path


def test_the_comparison_page_lists_discordant_items_side_by_side(tmp_path: Path):
    a = _answered(tmp_path / "a", [False, True, True, False, True], "baseline says")
    b = _answered(tmp_path / "b", [True, True, False, True, True], "candidate says")
    c = compare([a], [b], resamples=200)
    page = render(c, "html")
    _assert_self_contained(page)
    assert "Fixed by the candidate (baseline failed, candidate passed): 2" in page
    assert "Broken by the candidate (baseline passed, candidate failed): 1" in page
    assert page.count('<tr class="discordant"') == 3
    assert "baseline says q00000" in page and "candidate says q00000" in page
    assert "McNemar" in page and "Holm" in page and "minimum detectable effect" in page
    assert "gate" in page and "forest" in page.lower()
    # Rendered later, elsewhere, without the runs: the page says why the list is missing.
    saved = c.model_copy(update={"baseline": c.baseline.model_copy(update={"runs": ["gone"]})})
    assert "are not here" in render(saved, "html")


def test_cli_writes_html_by_suffix_and_gates_on_the_page(tmp_path: Path):
    a = _answered(tmp_path / "a", [True, True, True, False], "a")
    b = _answered(tmp_path / "b", [True, False, False, False], "b")
    policy = tmp_path / "gate.toml"
    policy.write_text("min_success_rate_delta = 0.0\n")
    r = invoke_cli(
        "compare",
        a,
        b,
        "--resamples",
        "100",
        "-o",
        tmp_path / "c.json",
        "-o",
        tmp_path / "c.html",
        "--policy",
        policy,
    )
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("retrieval (v1)")  # stdout stays the text summary
    assert json.loads((tmp_path / "c.json").read_text())["kind"] == "mnemometer-comparison"
    page = (tmp_path / "c.html").read_text()
    assert '<span class="verdict fail">gate: fail</span>' in page and str(policy) in page
    r = invoke_cli("report", a, "-o", tmp_path / "r.html")
    assert r.exit_code == 0 and (tmp_path / "r.html").read_text().startswith("<!doctype html>")
    r = invoke_cli("report", a, "--format", "pdf")
    assert r.exit_code == 2 and "html" in r.output  # the choices come from the registry


_NO_EXTRA = """
import importlib.abc, sys
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("altair", "vl_convert"):
            raise ImportError(f"blocked for this test: {name}")
sys.meta_path.insert(0, Blocker())
from mnemometer.report import report
for fmt in ("text", "md", "json"):
    report(sys.argv[1], fmt)
assert "altair" not in sys.modules and "vl_convert" not in sys.modules
try:
    report(sys.argv[1], "html")
except Exception as e:
    print(type(e).__name__, e)
"""


def test_without_the_report_extra_only_html_is_missing_and_says_how_to_install(tmp_path):
    path = synthetic_run(tmp_path / "r", 5)
    p = subprocess.run([sys.executable, "-c", _NO_EXTRA, str(path)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "MissingExtraError" in p.stdout and "pip install 'mnemometer[report]'" in p.stdout


@pytest.mark.parametrize("n", [2000])
def test_a_large_run_embeds_compressed_items(tmp_path: Path, n: int):
    path = synthetic_run(tmp_path / "big", n)
    page = report(path, "html")
    assert len(_embedded(page, "mm-items-data")) == n
    raw = (path / "items.jsonl").stat().st_size
    assert len(page) < raw / 2  # compressed: smaller than the run log it shows


GOLDEN = Path(__file__).resolve().parents[1] / "data" / "runlogs" / "v1"


@pytest.mark.parametrize(
    "run_dir",
    sorted(str(h.parent.relative_to(GOLDEN)) for h in GOLDEN.rglob("header.json")),
)
def test_golden_v1_runs_render_as_pages(run_dir: str):
    page = report(GOLDEN / run_dir, "html")
    _assert_self_contained(page)
    assert len(_embedded(page, "mm-items-data")) >= 1
