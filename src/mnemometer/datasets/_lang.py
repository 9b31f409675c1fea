"""Language detection from text (enough to pick a tokeniser)."""

from __future__ import annotations

import re
from collections.abc import Iterable

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_ALPHA = re.compile(r"[A-Za-z]")


def detect_language(texts: Iterable[str], sample: int = 200) -> str:
    """Return ``zh`` when CJK characters dominate the first ``sample`` texts, else ``en``."""
    cjk = latin = 0
    for i, t in enumerate(texts):
        if i >= sample:
            break
        cjk += len(_CJK.findall(t))
        latin += len(_ALPHA.findall(t))
    # One CJK character carries roughly a word; weight Latin letters by an average word length.
    return "zh" if cjk > latin / 5 else "en"
