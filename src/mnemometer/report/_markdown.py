"""Text from runs and datasets placed in Markdown: shown as text, never as markup.

A dataset name, a group value, a note or an error message comes from files mnemometer
did not write (a dataset, a suite, a system's reply). Markdown passes raw HTML through,
so each is escaped where a report puts it: ``<``, ``>`` and ``&`` as entities, ``|``
(which would end a table cell) and ``](`` (a link, or an image that loads when the
report is viewed) with a backslash, and a line break (which would end the row or start a
block) as a space. Plain brackets, as in an interval ``[0.58, 0.96]``, stay as they are.
"""

from __future__ import annotations

import html


def md(value: object) -> str:
    """``value`` as Markdown text on one line: safe in a heading, a list or a table cell."""
    text = html.escape(str(value), quote=False).replace("|", "\\|").replace("](", "\\](")
    return " ".join(text.splitlines())
