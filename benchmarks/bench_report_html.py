"""The HTML report of a 10,000-item run: file size, time to write, time to first render.

Makes a real run: ``mnemometer generate`` (21,500 memories, 10,049 queries) and the
retrieval suite with bm25 (CLI end to end), then writes its HTML report and opens it in
Debian's headless Chromium (playwright, no network), timing:

  * write: ``mnemometer.report.report(run, "html")`` in this process (wall and CPU), after
    starting the chart engine once (timed apart: about a second, once per process);
  * first render: navigation start to the first page of items drawn (``window.mmReadyAt``,
    set by the page once it has decoded every item), and first contentful paint;
  * filter: typing a search term until the count changes (includes the 120 ms debounce).

Reference, in the same run: the same page with the items embedded as plain JSON (no
compression), to show what compression costs at open and saves on disk.

Run: .venv/bin/python benchmarks/bench_report_html.py [--items N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

from _procs import CLI, generate

from mnemometer.testing._browser import CHROMIUM, launch


def make_run(root: Path, items: int) -> Path:
    data = root / "data.jsonl"
    size = int(items * 2.14) + 1  # the generator writes ~0.467 queries per memory
    generate(data, size, seed=1)
    out = root / "run"
    subprocess.run(
        [
            CLI,
            "run",
            "retrieval",
            "--dataset",
            data,
            "--store",
            "bm25",
            "--out",
            out,
            "--format",
            "none",
        ],
        check=True,
        capture_output=True,
    )
    return out


def warm_up() -> None:
    """Start vl-convert's engine, so neither page pays for it."""
    import vl_convert

    vl_convert.vegalite_to_svg(
        {
            "mark": "point",
            "data": {"values": [{"x": 1}]},
            "encoding": {"x": {"field": "x", "type": "quantitative"}},
        }
    )


def write(run: Path, path: Path, plain: bool) -> tuple[float, float]:
    from mnemometer.report import _html, _html_run, report

    saved = _html_run.embed
    if plain:
        _html_run.embed = _html.json_block  # the reference: items as plain JSON
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        path.write_text(report(run, "html"), "utf-8")
        return time.perf_counter() - wall, time.process_time() - cpu
    finally:
        _html_run.embed = saved


def open_in_chromium(browser, path: Path, term: str) -> dict[str, float]:
    from playwright.sync_api import expect

    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    requests: list[str] = []
    ctx.route(
        "**/*",
        lambda r: (
            r.continue_()
            if r.request.url.startswith("file:")
            else (requests.append(r.request.url), r.abort())
        ),
    )
    page = ctx.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(path.resolve().as_uri())
    page.wait_for_selector("body[data-ready]", timeout=120_000)
    ready = page.evaluate("() => window.mmReadyAt")
    fcp = page.evaluate(
        "() => (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime"
    )
    started = time.perf_counter()
    page.fill("#mm-search", term)
    expect(page.locator("#mm-count")).to_contain_text(" of ", timeout=60_000)
    search = time.perf_counter() - started
    count = page.inner_text("#mm-count")
    ctx.close()
    assert not errors and not requests, (errors, requests)
    return {"ready_ms": ready, "fcp_ms": fcp or float("nan"), "search_s": search, "count": count}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--keep", type=Path, help="Write the pages here (default: a temp dir).")
    a = ap.parse_args()
    load = os.getloadavg()[0]
    print(f"load average {load:.2f} on {os.cpu_count()} cores (wall figures grow with load)")
    with tempfile.TemporaryDirectory() as tmp:
        root = a.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        run = make_run(root, a.items)
        n = sum(1 for _ in open(run / "items.jsonl"))
        log = (run / "items.jsonl").stat().st_size
        print(
            f"run: {n:,} items, items.jsonl {log / 1e6:.1f} MB (made in "
            f"{time.perf_counter() - t:.1f} s)"
        )
        t = time.perf_counter()
        warm_up()
        print(f"  chart engine warm-up (once per process): {time.perf_counter() - t:.2f} s")
        pages = {
            "compressed (mnemometer)": root / "report.html",
            "plain JSON (reference)": root / "report-plain.html",
        }
        for (label, path), plain in zip(pages.items(), (False, True), strict=True):
            wall, cpu = write(run, path, plain)
            print(
                f"  {label:<24} {path.stat().st_size / 1e6:5.2f} MB, written in "
                f"{wall:.2f} s wall / {cpu:.2f} s CPU"
            )
        if not Path(CHROMIUM).is_file():
            print(f"no Chromium at {CHROMIUM}: first-render figures skipped")
            return
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = launch(p)
            for label, path in pages.items():
                open_in_chromium(browser, path, "week")  # warm the browser's caches once
                r = open_in_chromium(browser, path, "person 4321 ")
                print(
                    f"  {label:<24} first paint {r['fcp_ms']:6.0f} ms, items drawn "
                    f"{r['ready_ms']:6.0f} ms, search {1000 * r['search_s']:5.0f} ms "
                    f"-> {r['count']}"
                )
            browser.close()


if __name__ == "__main__":
    main()
