"""Score rankings with the peer harnesses' own code (run by the peers' venv, `make peers-env`).

Reads a JSON job on stdin: ``file`` (a LoCoMo-format ``locomo10.json``), ``ks`` and
``rankings`` (``"<sample_id>/<question index from 0>"`` -> dialogue ids in rank order).
Each peer loads the file its own way (its evidence parsing, its questions) and scores each
ranking with its own function; prints ``{key: {"<peer>:<metric>@<k>": value}}``. A question
a peer leaves out has none of its keys. Imports only the peers and the standard library.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from benchd_harness.benchmarks.locomo import LoCoMoBenchmark
from benchd_harness.scoring.deterministic import score_retrieval_recall
from infolang_bench.datasets import locomo as infolang
from mceval.adapters.base import Memory
from mceval.datasets.locomo import _convo_to_items
from mceval.eval.metrics import compute_metrics
from mceval.eval.scorer import score as mce_score


def main() -> None:
    job = json.load(sys.stdin)
    path = Path(job["file"])
    ks: list[int] = job["ks"]
    rank: dict[str, list[str]] = job["rankings"]
    raw = json.loads(path.read_text(encoding="utf-8"))
    out: dict[str, dict[str, Any]] = {key: {} for key in rank}

    # infolang-bench: its own units (evidence as written), its own score().
    for unit in infolang.iter_units(str(path.parent)):
        for q in unit.questions:
            sample, idx = q.qid.rsplit(":", 1)
            key = f"{sample}/{idx}"
            if key in rank:
                hits = [{"id": d, "tags": d} for d in rank[key]]
                row = infolang.score(q, hits, unit.ctx, ks)
                for mode in infolang.MODES:
                    for k in ks:
                        out[key][f"infolang-bench:{mode}@{k}"] = row[f"{mode}@{k}"]

    # memory-core-eval: its LoCoMo loader (drops questions without an evidence session),
    # its per-question score() and its aggregate.
    results = []
    for convo in raw:
        for item in _convo_to_items(convo):
            sample, n = item["question_id"].rsplit(":q", 1)
            key = f"{sample}/{n}"
            if key not in rank:
                continue
            mems = [
                Memory(
                    id=d,
                    content="",
                    score=0.0,
                    session_id=f"{sample}:session_{d[1:].split(':')[0]}",
                )
                for d in rank[key]
            ]
            res = mce_score(
                item["question_id"],
                item["question_type"],
                False,
                set(item["answer_session_ids"]),
                mems,
                len(mems),
                ks,
            )
            results.append(res)
            for k in ks:
                out[key][f"memory-core-eval:recall@{k}"] = float(res.recall[k])
    overall = compute_metrics(results, ks)["overall"] if results else {}

    # benchd-harness: its LoCoMo loader (category 5 dropped), its retrieval-hit rule over
    # the top k turns' texts as it ingests them (the turn's `text`).
    text = {
        f"{s['sample_id']}/{t['dia_id']}": t.get("text", "")
        for s in raw
        for key, turns in s["conversation"].items()
        if key.startswith("session_") and isinstance(turns, list)
        for t in turns
    }
    keys = [
        f"{s['sample_id']}/{i}"
        for s in raw
        for i, qa in enumerate(s["qa"])
        if qa.get("category") != 5
    ]
    for key, item in zip(keys, LoCoMoBenchmark(data_path=path).load_items(), strict=True):
        if key in rank:
            sample = key.split("/")[0]
            for k in ks:
                recall = "\n".join(text[f"{sample}/{d}"] for d in rank[key][:k])
                hit = score_retrieval_recall(recall, str(item.expected_answer))
                out[key][f"benchd-harness:retrieval_hit@{k}"] = float(hit)

    json.dump({"questions": out, "memory-core-eval:overall": overall}, sys.stdout)


if __name__ == "__main__":
    main()
