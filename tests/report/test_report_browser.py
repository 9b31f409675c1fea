"""The HTML reports in a real headless Chromium (Debian's, driven by playwright).

Every page: loads from disk with no console error and no network request (every request
that is not the page's own file is aborted and recorded), and leaves a screenshot in
``test-artifacts/browser/``. Then what a person does: search and filter the items of a run,
page through a large one, read a comparison's discordant items, sort a leaderboard.

``make test-live`` installs Chromium where it can (root with apt-get); elsewhere these tests
skip and say why.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import SEED
from report_helpers import synthetic_run

from mnemometer.testing._browser import CHROMIUM, launch

pytestmark = pytest.mark.live
expect: Any = None  # playwright's, once the browser fixture has imported it

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "browser"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).is_file():
        pytest.skip(
            f"Chromium not found at {CHROMIUM}: browser tests skipped (`make test-live` "
            "installs Debian's chromium as root with apt-get; elsewhere install it yourself)"
        )
    global expect
    try:
        from playwright.sync_api import expect as _expect
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (it is in the dev group): browser tests skipped")
    expect = _expect
    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every kind of page the issue names, written by the CLI as a user would."""
    from conftest import invoke_cli

    from mnemometer import RunSettings, SystemSpec, run, run_suite
    from mnemometer.llm import LLMSettings
    from mnemometer.testing import FakeLLMServer
    from mnemometer.testing.llm_server import echo_memories

    root = tmp_path_factory.mktemp("site")
    runs = root / "runs"
    for ds in ("demo-en", "demo-zh"):  # the demo's runs
        for store in ("keyword", "bm25"):
            run("retrieval", store, dataset=ds, out=runs / "demo" / f"{ds}-{store}")
    run("memtest", "bm25", dataset="demo-en", out=runs / "memtest")
    with FakeLLMServer(default=echo_memories) as srv:
        run(
            "scenarios",
            SystemSpec.agent("rag", store="bm25"),
            suite_options={"similarity": "none"},
            out=runs / "scenarios",
            settings=RunSettings(llm=LLMSettings(srv.base_url, srv.model)),
        )
    team = Path(__file__).resolve().parents[2] / "examples" / "suites" / "team-memory"
    run_suite(team, conditions=["no-memory", "lexical"], out=runs / "team")
    synthetic_run(runs / "large" / "big", 3000)
    locomo = SEED / "locomo" / "locomo10.json"  # LoCoMo evidence retrieval, when it is here
    if locomo.is_file():
        run("retrieval", "bm25", dataset=locomo, out=runs / "locomo")
    out = root / "html"
    pages = {}
    for name, path in (
        ("demo-en-bm25", runs / "demo" / "demo-en-bm25"),
        ("demo-zh-keyword", runs / "demo" / "demo-zh-keyword"),
        ("memtest", runs / "memtest"),
        ("scenarios", runs / "scenarios"),
        ("team-lexical", runs / "team" / "lexical-r0"),
        ("large", runs / "large" / "big"),
        ("locomo", runs / "locomo"),
    ):
        if not path.is_dir():
            continue
        pages[name] = out / f"{name}.html"
        assert invoke_cli("report", path, "-o", pages[name]).exit_code == 0
    pages["comparison"] = out / "comparison.html"
    r = invoke_cli(
        "compare",
        runs / "team",
        "-b",
        "no-memory",
        "-c",
        "lexical",
        "--resamples",
        "500",
        "-o",
        pages["comparison"],
    )
    assert r.exit_code == 0, r.output
    pages["leaderboard"] = out / "leaderboard.html"
    r = invoke_cli("leaderboard", runs, "-o", pages["leaderboard"])
    assert r.exit_code == 0, r.output
    return pages


class Page:
    """A page opened from disk, with every console error and network attempt recorded."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.page.on("requestfailed", lambda r: self.requests.append(r.url))
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_selector("body[data-ready]", timeout=30_000)

    def _route(self, route: Any) -> None:
        url = route.request.url
        if url.startswith("file://"):
            route.continue_()
        else:
            self.requests.append(url)
            route.abort()

    def _console(self, msg: Any) -> None:
        if msg.type in ("error", "warning"):
            self.errors.append(f"{msg.type}: {msg.text}")

    def shot(self, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def close(self) -> None:
        self.context.close()

    def count(self) -> str:
        return self.page.inner_text("#mm-count")

    def filtered(self) -> None:
        """Wait until the item count says a filter applies (the page forbids eval, so
        waits go through locators, not wait_for_function)."""
        expect(self.page.locator("#mm-count")).to_contain_text(" of ")

    def rows(self) -> Any:
        return self.page.locator("#mm-items tbody tr.item-row")


@pytest.fixture
def open_page(browser: Any) -> Iterator[Any]:
    opened: list[Page] = []

    def _open(path: Path) -> Page:
        p = Page(browser, path)
        opened.append(p)
        return p

    yield _open
    for p in opened:
        assert not p.errors, p.errors
        assert not p.requests, f"network requests from a report page: {p.requests}"
        p.close()


@pytest.mark.parametrize(
    "name",
    [
        "demo-en-bm25",
        "demo-zh-keyword",
        "memtest",
        "scenarios",
        "team-lexical",
        "large",
        "locomo",
        "comparison",
        "leaderboard",
    ],
)
def test_every_page_loads_offline_with_no_console_error(open_page, site, name):
    if name not in site:
        pytest.skip(f"no {name} page: its seed data is not in {SEED}")
    p = open_page(site[name])
    assert p.page.locator("svg").count() >= 1  # the charts are there, drawn inline
    shot = p.shot(name)
    assert shot.stat().st_size > 10_000
    print(f"screenshot: {shot}")


def test_search_and_filters_change_what_is_shown(open_page, site):
    p = open_page(site["demo-en-bm25"])
    assert p.count() == "15 items" and p.rows().count() == 15
    p.page.fill("#mm-search", "priya")
    p.filtered()
    assert p.count() == f"{p.rows().count()} of 15 items" and 0 < p.rows().count() < 15
    for text in p.rows().all_inner_texts():
        assert "priya" in text.lower()
    p.page.fill("#mm-search", "")
    expect(p.page.locator("#mm-count")).to_have_text("15 items")
    p.page.select_option("#mm-status", "fail")
    p.filtered()
    statuses = p.rows().evaluate_all("rs => rs.map(r => r.dataset.status)")
    assert statuses and set(statuses) == {"fail"}
    p.page.select_option("#mm-status", "all")
    p.page.select_option("select[data-group='type']", "person")
    p.filtered()
    assert p.rows().count() == 3
    for text in p.rows().all_inner_texts():
        assert "person" in text
    p.rows().first.click()  # the item opens: its query, what came back (relevant marked)
    detail = p.page.locator("tr.detail")
    assert detail.locator(".hit.rel").count() >= 1
    assert "Query" in detail.inner_text() and "Metrics" in detail.inner_text()
    p.shot("demo-en-bm25-filtered")


def test_a_scenario_item_shows_each_turn_and_its_verdict(open_page, site):
    p = open_page(site["scenarios"])
    p.page.fill("#mm-search", "conditional_memory_updates")
    p.filtered()
    p.rows().first.click()
    turns = p.page.locator("tr.detail table.turns")
    assert turns.count() == 1
    assert "score" in turns.inner_text() and "expected" in turns.inner_text()


def test_a_large_run_opens_pages_and_filters_without_freezing(open_page, site):
    started = time.perf_counter()
    p = open_page(site["large"])
    opened = time.perf_counter() - started
    assert p.count() == "3000 items" and p.rows().count() == 50  # one page is drawn
    p.page.click("#mm-next")
    assert p.page.inner_text("#mm-page") == "page 2 of 60"
    assert p.rows().first.get_attribute("data-id") == "q00050"
    started = time.perf_counter()
    p.page.fill("#mm-search", "week 7?")
    p.filtered()
    searched = time.perf_counter() - started
    assert p.count().endswith("of 3000 items")
    p.page.fill("#mm-search", "")
    expect(p.page.locator("#mm-count")).to_have_text("3000 items")
    p.page.select_option("#mm-status", "error")
    expect(p.page.locator("#mm-count")).to_have_text("3 of 3000 items")
    p.rows().first.click()
    assert "TimeoutError" in p.page.locator("tr.detail .err").inner_text()
    print(f"3,000 items: opened in {opened:.2f} s, searched in {searched:.2f} s")
    assert opened < 20 and searched < 5  # generous: a shared, loaded machine


def test_the_comparison_lists_its_discordant_items(open_page, site):
    p = open_page(site["comparison"])
    rows = p.page.locator("tr.discordant")
    assert rows.count() > 10
    text = p.page.inner_text("#discordant")
    assert "Fixed by the candidate" in text and "baseline answered" in text
    assert p.page.locator("#gate .verdict").count() == 1
    p.page.fill("input[data-filter='mm-discordant']", "deploy")
    visible = p.page.locator("tr.discordant:visible")
    assert 0 < visible.count() < rows.count()
    for t in visible.all_inner_texts():
        assert "deploy" in t.lower()


def test_the_leaderboard_sorts_and_links_each_cell_to_its_run(open_page, site):
    p = open_page(site["leaderboard"])
    table = p.page.locator("section#board table.board")
    first = table.locator("tbody tr td:first-child").all_inner_texts()
    table.locator("thead tr:last-child th").first.click()
    after = table.locator("tbody tr td:first-child").all_inner_texts()
    assert after == sorted(first, key=str.lower)
    table.locator("thead tr:last-child th").first.click()
    assert table.locator("tbody tr td:first-child").all_inner_texts() == after[::-1]
    hrefs = table.locator("a").evaluate_all("as => as.map(a => a.getAttribute('href'))")
    assert hrefs
    for h in hrefs:
        assert (site["leaderboard"].parent / h).is_file()
    p.page.click("section#board table.board a >> nth=0")  # a run report opens from the board
    p.page.wait_for_selector("body[data-ready]")
    assert p.page.locator("#mm-items").count() == 1


def test_the_decision_table_sorts_each_figure_by_value_with_missing_ones_last(open_page, site):
    """Seconds per memory can span decades: sorted as text, 4.7e-05 would follow 0.0003."""
    p = open_page(site["leaderboard"])
    table = p.page.locator("section#decision table")
    heads = table.locator("thead tr:last-child th")
    col = heads.all_inner_texts().index("ingest s / memory")

    def values() -> list[str]:
        cells = table.locator(f"tbody tr td:nth-child({col + 1})")
        return cells.evaluate_all("tds => tds.map(td => td.getAttribute('data-v'))")

    before = values()
    assert len([v for v in before if v]) >= 3 and "" in before
    # The page's own figures are this machine's timings, which need not span decades; give
    # the numeric cells figures whose text order is not their numeric order.
    spread = ["0.0003", "4.7e-05", "0.012", "2e-05", "0.0009", "1.5e-05", "0.2", "8e-06"]
    table.locator(f"tbody tr td:nth-child({col + 1})").evaluate_all(
        "(tds, vs) => tds.forEach((td, i) => td.getAttribute('data-v') && td.setAttribute('data-v', vs[i % vs.length]))",
        spread,
    )
    given = [v for v in values() if v]
    assert sorted(given) != sorted(given, key=float)  # sorted as text would be wrong
    nums = sorted(float(v) for v in given)
    missing = [""] * (len(before) - len(nums))
    heads.nth(col).click()
    assert [float(v) for v in values()[: len(nums)]] == nums
    assert values()[len(nums) :] == missing
    heads.nth(col).click()
    assert [float(v) for v in values()[: len(nums)]] == nums[::-1]
    assert values()[len(nums) :] == missing  # last either way
    assert not p.errors
