"""The leaderboard's decision table: headline, tokens, latency, storing cost and $ per correct.

Built from run directories alone; a figure a run lacks shows "–", never 0; the HTML table
sorts by value with the page's own inline script (no CDN).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from benchmark_helpers import MINI
from conftest import invoke_cli

import mnemometer
from mnemometer.llm import resolve_settings
from mnemometer.llm._prices import price_map_path
from mnemometer.log import read_summary
from mnemometer.report import leaderboard, render
from mnemometer.report._decision import cell_costs
from mnemometer.runner import RunSettings
from mnemometer.testing import FakeLLMServer
from mnemometer.testing._bench import benchmark_reply


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """bm25 and keyword on the LongMemEval mini file (priced), and a run from before costs."""
    if price_map_path() is None:
        pytest.skip("the [cost] extra (LiteLLM's price map) is not installed")
    root = tmp_path_factory.mktemp("board")
    with FakeLLMServer(default=benchmark_reply, models=("gpt-4o-mini",)) as srv:
        for store in ("bm25", "keyword"):
            mnemometer.run(
                "longmemeval",
                store,
                suite_options={"dataset": str(MINI), "judges": ["longmemeval"]},
                out=root / store,
                settings=RunSettings(llm=resolve_settings(srv.base_url, srv.model)),
            )
    old = root / "old"
    shutil.copytree(root / "bm25", old)
    header = json.loads((old / "header.json").read_text())
    header.pop("cost")
    header["schema_version"] = 2
    header["system"]["name"] = "legacy"
    (old / "header.json").write_text(json.dumps(header))
    summary = json.loads((old / "summary.json").read_text())
    summary.pop("cost")
    summary["tables"] = [t for t in summary["tables"] if t["name"] not in ("ingest", "cost")]
    summary["overall"] = [m for m in summary["overall"] if m["name"] != "context_tokens"]
    (old / "summary.json").write_text(json.dumps(summary))
    return root


def test_each_cell_carries_what_the_system_costs(runs):
    b = leaderboard([runs])
    cells = {r.system: next(iter(r.cells.values())) for r in b.rows}
    for system in ("bm25", "keyword"):
        c = cells[system].costs
        summary = json.loads((runs / system / "summary.json").read_text())
        assert c.usd_per_correct == pytest.approx(summary["cost"]["per_correct"])
        ingest = next(t for t in summary["tables"] if t["name"] == "ingest")["data"][0]
        assert c.ingest_seconds == pytest.approx(ingest["seconds_per_memory"])
        assert c.ingest_llm_calls is None  # bm25 and keyword meter no LLM calls
        overall = {(m["name"], m["percentile"]): m["value"] for m in summary["overall"]}
        assert c.context_tokens == pytest.approx(overall[("context_tokens", None)])
        assert c.search_p95_ms == pytest.approx(overall[("search_latency", 95.0)])
        assert c.answer_p50_ms == pytest.approx(overall[("answer_latency", 50.0)])
    legacy = cells["legacy"].costs
    assert legacy.usd_per_correct is None and legacy.context_tokens is None
    assert legacy.ingest_seconds is None and legacy.answer_p50_ms is not None


def test_a_figure_a_run_lacks_shows_a_dash_not_zero(runs):
    b = leaderboard([runs])
    text = render(b, "text")
    table = text.split("What each system costs")[1]
    legacy = next(line for line in table.splitlines() if line.startswith("legacy"))
    assert "$" not in legacy and legacy.count("–") >= 5
    bm25 = next(line for line in table.splitlines() if line.startswith("bm25"))
    assert "$0.000" in bm25
    md = render(b, "md")
    assert "| system | headline [95% CI] | context tokens / question |" in md
    assert json.loads(render(b, "json"))["rows"][0]["cells"]
    csv = render(b, "csv").splitlines()
    assert csv[0].endswith("usd_per_correct")


def test_the_html_table_sorts_by_value_with_an_inline_script(runs, tmp_path):
    out = tmp_path / "board.html"
    invoke_cli("leaderboard", str(runs), "--format", "html", "-o", str(out))
    html = out.read_text()
    section = html.split('id="decision"')[1].split("</section>")[0]
    assert 'class="sortable board"' in section
    assert re.search(r'data-v="0\.000\d+"', section)  # dollars sort as numbers
    assert 'data-v=""' in section  # the legacy run's missing figures sort last
    assert "makeSortable" in html and not re.search(r"<script[^>]+src=", html)


def test_a_model_without_a_price_is_named_on_the_board(tmp_path):
    with FakeLLMServer(default=benchmark_reply) as srv:
        mnemometer.run(
            "longmemeval",
            "bm25",
            suite_options={"dataset": str(MINI)},
            out=tmp_path / "r",
            settings=RunSettings(llm=resolve_settings(srv.base_url, srv.model)),
        )
    b = leaderboard([tmp_path])
    assert next(iter(b.rows[0].cells.values())).costs.usd_per_correct is None
    assert any("no price for model 'fake-llm': add it with --prices" in n for n in b.notes)


def test_a_repeat_without_a_price_leaves_the_cell_without_dollars(runs):
    """The mean of the priced repeats alone would look like the whole system's cost."""
    priced = read_summary(runs / "bm25")
    assert priced.cost.per_correct is not None
    unpriced = priced.model_copy(
        update={
            "cost": priced.cost.model_copy(
                update={"usd": None, "per_correct": None, "unpriced": ["my-model"]}
            )
        }
    )
    assert cell_costs([priced, priced]).usd_per_correct == pytest.approx(priced.cost.per_correct)
    both = cell_costs([priced, unpriced])
    assert both.usd_per_correct is None and both.unpriced == ["my-model"]
    assert both.context_tokens == pytest.approx(cell_costs([priced]).context_tokens)
