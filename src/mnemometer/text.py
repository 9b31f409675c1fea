"""Text processing shared by datasets and stores: language detection and tokenisation."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable
from functools import cache

_WORD = re.compile(r"\w+(?:'+\w+)*", re.UNICODE)
"""A word: letters and digits, with apostrophes inside it (``don't``) but not around it."""
_ASCII_GAPS = str.maketrans({chr(i): " " for i in range(128) if not re.match(r"[\w']", chr(i))})
"""Every ASCII character that is neither a word character nor an apostrophe, as a space."""
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_EN_STOP = frozenset(
    """a an and are as at be been but by did do does for from had has have he her his i if in
    into is it its me my no not of on or our she so that the their them then there these they
    this to was we were what when where which who whom why will with you your""".split()
)
_ZH_STOP = frozenset(
    "的 了 在 是 和 与 及 也 就 都 而 之 把 被 对 给 从 向 于 吗 呢 吧 啊 么 什么 哪些 有 过 一个".split()
)
_jieba_lock = threading.Lock()

Tokenizer = Callable[[str], list[str]]


def tokenizer(lang: str, stem: bool = True) -> Tokenizer:
    """Return the tokeniser for ``lang`` (``en``, ``zh``; anything else is treated as ``en``).

    English: lower-cased words, stop words removed, Snowball-stemmed when ``stem``.
    Chinese: jieba search-mode segmentation (words and their sub-words), plus any Latin
    words, stop words removed; jieba's dictionary loads a character at a time
    (:mod:`mnemometer._zhdict`), with the same tokens as jieba's own loader.
    """
    return _zh_tokenizer() if lang.startswith("zh") else _en_tokenizer(stem)


@cache
def _en_tokenizer(stem: bool) -> Tokenizer:
    stemmer = None
    if stem:
        import Stemmer

        stemmer = Stemmer.Stemmer("english")

    def tok(text: str) -> list[str]:
        low = text.lower()
        if not low.isascii():
            words = [w for w in _WORD.findall(low) if w not in _EN_STOP]
        elif "'" in low:  # the same words as _WORD, by translate and split: 30% faster
            stripped = [w.strip("'") for w in low.translate(_ASCII_GAPS).split()]
            words = [w for w in stripped if w and w not in _EN_STOP]
        else:
            words = [w for w in low.translate(_ASCII_GAPS).split() if w not in _EN_STOP]
        return stemmer.stemWords(words) if stemmer else words

    return tok


@cache
def _zh_tokenizer() -> Tokenizer:
    from mnemometer._zhdict import jieba_cutter

    with _jieba_lock:  # jieba's dictionary load is not thread-safe
        cut = jieba_cutter()
    en = _en_tokenizer(True)

    def tok(text: str) -> list[str]:
        out: list[str] = []
        for run in _CJK_RUN.findall(text):
            out.extend(w for w in cut(run) if w not in _ZH_STOP)
        rest = _CJK_RUN.sub(" ", text)
        if rest.strip():
            out.extend(en(rest))
        return out

    return tok


_ALPHA = re.compile(r"[A-Za-z]")


def detect_language(texts: Iterable[str], sample: int = 200) -> str:
    """Return ``zh`` when CJK characters dominate the first ``sample`` texts, else ``en``."""
    cjk = latin = 0
    for i, t in enumerate(texts):
        if i >= sample:
            break
        cjk += sum(len(r) for r in _CJK_RUN.findall(t))
        latin += len(_ALPHA.findall(t))
    # One CJK character carries roughly a word; weight Latin letters by an average word length.
    return "zh" if cjk > latin / 5 else "en"
