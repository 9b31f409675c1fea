"""Debian's headless Chromium, launched the one way the HTML reports are opened in it.

The browser tests, the README screenshot script and the first-render benchmark all start
Chromium here: no sandbox, no GPU, and no background traffic of its own, so any network
request a page makes is the page's (and the caller refuses it).
"""

from __future__ import annotations

import os
from typing import Any

#: The Chromium binary (``$CHROMIUM``, else Debian's).
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")

ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)


def launch(playwright: Any) -> Any:
    """Start headless Chromium from a running ``sync_playwright()``; the caller closes it."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=list(ARGS))
