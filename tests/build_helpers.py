"""A deterministic "extraction model" for the fake LLM server, and small corpora."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from mnemometer.testing.llm_server import last_user_message

_TEXT = re.compile(r'"""\n(.*)\n"""', re.DOTALL)
_EN = re.compile(
    r"^(?P<person>[A-Z][a-z]+(?: [A-Z][a-z]+)?) (?P<rest>.*?)"
    r"(?: at (?:the )?(?P<loc>[A-Z][\w' ]+?))?(?: in (?P<time>\d{4}))?\.$"
)
_ZH = re.compile(
    r"^(?:(?P<time>第\S+?回)，)?(?:之后|于是)?(?P<person>\S{2,3}?)在(?P<loc>\S+?)"
    r"(?P<rest>(?:读书|葬花|作诗|题匾|称王|取宝|出发|出生)\S*)$"
)
_TERMS = re.compile(r"^- (.+)$", re.MULTILINE)
ERAS = {"Middle Ages", "唐朝"}
CONCEPTS = {"Friendship"}


def sentences(text: str) -> list[str]:
    out = []
    text = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    for s in re.split(r"(?<=[.。])\s*", text):
        s = s.strip()
        if s and not s.startswith("#"):
            out.append(s)
    return out


def facts_for(text: str) -> list[dict[str, Any]]:
    facts = []
    for s in sentences(text):
        if s.endswith("。"):
            m = _ZH.match(s.rstrip("。"))
            if not m:
                continue
            facts.append(
                {
                    "content": s,
                    "person": m["person"],
                    "location": m["loc"],
                    "time": m["time"] or "",
                    "era": "",
                    "event_type": "事件",
                    "chain": "c1" if "之后" in s or "于是" in s else "",
                }
            )
        else:
            m = _EN.match(s)
            if not m:
                continue
            words = [w for w in (m["rest"] or "event").split(" ") if w != "then"]
            verb = words[0] if words else "event"
            facts.append(
                {
                    "content": s,
                    "person": m["person"],
                    "location": m["loc"] or "",
                    "time": m["time"] or "",
                    "era": "",
                    "event_type": verb,
                    "chain": "quest" if "then" in s.lower() else "",
                }
            )
    return facts


def is_extraction(body: dict[str, Any]) -> bool:
    """True for an extraction request (its prompt quotes a chunk)."""
    return any('"""' in str(m.get("content")) for m in body["messages"])


def extraction_reply(body: dict[str, Any]) -> str:
    """Answer an extraction or classification request the way a good model would."""
    user = last_user_message(body)
    m = _TEXT.search(user)
    if m:
        return json.dumps({"facts": facts_for(m.group(1))}, ensure_ascii=False)
    terms = _TERMS.findall(user)
    labels = [
        {"term": t, "kind": "era" if t in ERAS else "concept" if t in CONCEPTS else "place"}
        for t in terms
    ]
    return json.dumps({"labels": labels}, ensure_ascii=False)


EN_FILES = {
    "book1/ch1.md": "---\ntitle: Chapter one\n---\n# One\n\nAlice met Bob at the Library in 1991. "
    "Alice found a map at the Library.\n\nBob sailed to the Harbour in 1992. "
    "Carol painted a mural at the Harbour in 1992.",
    "book1/ch2.md": "Alice then crossed the river at the Bridge. Alice then climbed the tower "
    "at the Tower in 1993.\n\nBob lived happily at the Middle Ages. "
    "Carol spoke about love at the Friendship.",
    "book2/ch1.txt": "Dave wrote a letter at the Castle in 1991. Alice visited Dave at the "
    "Castle in 1994. Alice then rode home at the Farm.",
}
ZH_FILES = {
    "红楼梦/第一回.md": "第一回，贾宝玉在大观园读书。林黛玉在潇湘馆葬花。\n\n第二回，贾宝玉在怡红院作诗。"
    "之后贾宝玉在大观园题匾。",
    "西游记/第一回.txt": "孙悟空在花果山称王。于是孙悟空在东海取宝。唐僧在长安出发。"
    "唐僧在唐朝出生。",
}


def write_corpus(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def gone(pid: int, within: float = 5.0) -> bool:
    """True once ``pid`` no longer runs (gone or a zombie); SIGKILL lands asynchronously."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False
