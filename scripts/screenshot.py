"""Screenshot an HTML report in Debian's headless Chromium (for the README).

Usage: python scripts/screenshot.py PAGE.html OUT.png [--width 1280] [--height 1000]

Opens the page from disk with every network request refused, waits until its items are
drawn, and saves the top WIDTH x HEIGHT pixels as PNG.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from playwright.sync_api import sync_playwright

from mnemometer.testing._browser import launch


def main() -> None:
    """Open the page, wait for its items, save the screenshot."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("page", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=1000)
    a = ap.parse_args()
    with sync_playwright() as p:
        browser = launch(p)
        ctx = browser.new_context(viewport={"width": a.width, "height": a.height})
        ctx.route(
            "**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort()
        )
        page = ctx.new_page()
        page.goto(a.page.resolve().as_uri())
        page.wait_for_selector("body[data-ready]")
        a.out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(a.out))
        browser.close()
    print(f"{a.out} ({a.out.stat().st_size / 1e3:.0f} kB)")


if __name__ == "__main__":
    main()
