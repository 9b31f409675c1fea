"""The MemTest seed's runner loop with its keyword adapter, re-implemented minimally.

The reference process for ``bench_startup.py``: what a user of the seed ran on a MemTest
JSON file (``python runner.py``-style, pure standard library). Written from the behaviour
described in ``../shared/research/memtest.md`` (sections 3 and 7.3), not copied:

* load the file with ``json.load``; ``reset()``; store every memory's versions (or its
  ``content``) with a flat metadata dict;
* the adapter keeps the last stored text per memory id; a search splits the query on
  whitespace (after Chinese punctuation), keeps other tokens of 2+ characters as they are
  (case and punctuation included) and every CJK character, scores each memory by the fraction of keywords that occur in
  its text, drops zero scores, sorts by score (ties keep insertion order), cuts at top-k;
* retrieval: ``search(query, 20)`` for every query with expected ids; precision and recall
  per query type; the reasoning pass re-runs the 事件检索/组合检索/组合推理 queries.

Prints the report as one JSON line. Run: ``python benchmarks/seed_memtest.py DB.json``.
It reproduces the research note's figures: Harry Potter P 4.7% / R 47.5% (Event 43.2,
Person 52.3, Multi-hop 33.3), sample_db_100 P 4.5% / R 90.0%, Four Novels P 6.3% / R 28.2%.
"""

from __future__ import annotations

import json
import re
import sys

_CJK = re.compile(r"[\u4e00-\u9fff]")


class KeywordAdapter:
    def __init__(self) -> None:
        self.texts: dict[str, str] = {}

    def reset(self) -> None:
        self.texts.clear()

    def store(self, text: str, metadata: dict) -> None:
        self.texts[metadata["memory_id"]] = text

    def search(self, query: str, top_k: int = 20) -> list[dict]:
        for p in "，？。":
            query = query.replace(p, " ")
        words: set[str] = set()
        for token in query.split():
            if _CJK.search(token):
                words.update(c for c in token if _CJK.match(c))
            elif len(token) > 1:
                words.add(token)
        if not words:
            return []
        hits = []
        for mid, text in self.texts.items():
            score = sum(w in text for w in words) / len(words)
            if score > 0:
                hits.append({"memory_id": mid, "score": score, "content": text})
        hits.sort(key=lambda h: -h["score"])
        return hits[:top_k]


def _meta(m: dict) -> dict:
    person, place, when, event = (m.get(k) for k in ("person", "location", "time", "event"))
    return {
        "memory_id": m["memory_id"],
        "category": m.get("category"),
        "person_name": person.get("name") if isinstance(person, dict) else person,
        "location_city": place.get("city") if isinstance(place, dict) else place,
        "time_absolute": when.get("absolute") if isinstance(when, dict) else when,
        "event_type": event.get("type") if isinstance(event, dict) else m.get("event_type"),
    }


def run(db: dict, adapter: KeywordAdapter) -> dict:
    adapter.reset()
    stored = 0
    for m in db.get("memories", []):
        meta = _meta(m)
        texts = [v["content"] for v in m.get("versions") or []] or [m.get("content", "")]
        for text in texts:
            adapter.store(text, meta)
            stored += 1
    by_type: dict[str, list[int]] = {}
    correct = expected = 0
    queries = db.get("queries", [])
    for q in queries:
        want = set(q.get("expected_memory_ids") or [])
        if not want:
            continue
        text = q.get("query_text") or q.get("query", "")
        found = {h["memory_id"] for h in adapter.search(text, 20)[:20]}
        c = len(found & want)
        t = by_type.setdefault(q.get("query_type", "unknown"), [0, 0, 0])
        t[0] += c
        t[1] += len(want)
        t[2] += 1
        correct += c
        expected += len(want)
    logic = [q for q in queries if q.get("query_type") in ("事件检索", "组合检索", "组合推理")]
    logic_hits = 0
    for q in logic:
        want = set(q.get("expected_memory_ids") or [])
        found = {h["memory_id"] for h in adapter.search(q.get("query_text", ""), 20)}
        logic_hits += bool(found & want)
    return {
        "stored": stored,
        "memories": len(db.get("memories", [])),
        "precision": round(correct / (len(queries) * 20), 3) if queries else 0,
        "recall": round(correct / expected, 3) if expected else 0,
        "by_type": {
            k: {"precision": round(c / (n * 20), 3), "recall": round(c / e, 3), "count": n}
            for k, (c, e, n) in by_type.items()
        },
        "logic_accuracy": round(logic_hits / len(logic), 3) if logic else 0,
    }


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        db = json.load(f)
    print(json.dumps(run(db, KeywordAdapter()), ensure_ascii=False))


if __name__ == "__main__":
    main()
