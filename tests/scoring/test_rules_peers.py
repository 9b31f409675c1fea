"""The rules against the peers' own code: the same rankings through infolang-bench,
memory-core-eval and benchd-harness as installed from PyPI (``make peers-env``, which
``make test`` runs; a venv of their own, their code never imported here).

engram-search's benchmark script is not in its PyPI package: its rule is transcribed and
checked by hand only (``rule_helpers.EXPECTED``).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import rule_helpers as H
from conftest import REPO, seed_file

from mnemometer.datasets import load_dataset
from mnemometer.log import read_log
from mnemometer.scoring.rules import (
    AnswerInContext,
    RawAny,
    RawStrict,
    SessAny,
    SessionHit,
    SessStrict,
)

VENV = Path(os.environ.get("PEERS_VENV", Path.home() / ".cache" / "mnemometer" / "peers" / "venv"))
PYTHON = VENV / "bin" / "python"
DRIVER = REPO / "tests" / "peers_driver.py"
# Our rule -> the peer's metric (``<peer>:<metric>``) it transcribes.
PAIRS = {
    RawAny: "infolang-bench:raw_any",
    RawStrict: "infolang-bench:raw_strict",
    SessAny: "infolang-bench:sess_any",
    SessStrict: "infolang-bench:sess_strict",
    SessionHit: "memory-core-eval:recall",
    AnswerInContext: "benchd-harness:retrieval_hit",
}

pytestmark = pytest.mark.skipif(
    not PYTHON.exists(), reason=f"the peer harnesses are not installed in {VENV}: make peers-env"
)


def peers(path: Path, records: dict[str, dict[str, Any]], ks: list[int]) -> dict[str, Any]:
    """The peers' own values for each record's ranking (their loaders read ``path``)."""
    rankings = {
        f"{r['item_id']}/{int(r['step'].rsplit('/q', 1)[1]) - 1}": [
            h["id"].split("/", 1)[1] for h in r["retrieved"]
        ]
        for r in records.values()
    }
    job = {"file": str(path), "ks": ks, "rankings": rankings}
    done = subprocess.run(
        [str(PYTHON), str(DRIVER)],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def _key(record: dict[str, Any]) -> str:
    return f"{record['item_id']}/{int(record['step'].rsplit('/q', 1)[1]) - 1}"


def disagreements(
    records: dict[str, dict[str, Any]], theirs: dict[str, Any], ks: list[int]
) -> dict[str, list[str]]:
    """Rule -> the questions where our value and the peer's differ (``None``: left out)."""
    out: dict[str, list[str]] = {}
    for rule, metric in PAIRS.items():
        scorer = rule(ks=ks)
        for step, record in records.items():
            ours = {m["k"]: m["value"] for m in scorer.score(record)}
            got = theirs["questions"][_key(record)]
            for k in ks:
                if ours.get(k) != got.get(f"{metric}@{k}"):
                    out.setdefault(rule.name, []).append(f"{step}@{k}")
    return out


def test_the_peers_own_code_scores_the_hand_built_ranking_as_the_rules_do(tmp_path: Path):
    path = H.write_file(tmp_path)
    res = H.run_locomo(path, tmp_path / "run")
    records = {r.step: r.model_dump() for r in read_log(res.path).items}
    ks = [1, 2, 5, 10]
    theirs = peers(path, records, ks)
    assert disagreements(records, theirs, ks) == {}
    # And both are the values worked out by hand.
    got = theirs["questions"]
    assert [got[f"tiny/{i}"].get("memory-core-eval:recall@2") for i in range(5)] == [
        v[1] for v in H.EXPECTED["session-hit"].values()
    ]
    assert [got[f"tiny/{i}"].get("benchd-harness:retrieval_hit@10") for i in range(5)] == [
        v[3] for v in H.EXPECTED["answer-in-context"].values()
    ]


@pytest.mark.slow
def test_on_all_of_locomo_the_peers_agree_with_the_table_but_for_evidence_they_read_raw(
    tmp_path: Path,
):
    """BM25 over the 10 conversations; each peer's own function on every ranking."""
    data = seed_file("locomo", "locomo10.json")
    res = H.run_locomo(data, tmp_path / "run", store="bm25")
    records = {r.step: r.model_dump() for r in read_log(res.path).items}
    assert len(records) == 1986
    theirs = peers(data, records, [5, 10])
    repaired = {q.id for q in load_dataset(data).queries if "evidence" in q.metadata}
    assert len(repaired) == 10  # the questions whose evidence mnemometer reads repaired
    differ = disagreements(records, theirs, [5, 10])
    assert "answer-in-context" not in differ  # benchd reads no evidence: every question
    for rule, where in differ.items():
        assert {w.split("@")[0] for w in where} <= repaired, rule
    # The table's memory-core-eval row against memory-core-eval's own aggregate.
    row = next(d for d in res.summary.sections["rules"]["rules"] if d["rule"] == "session-hit")
    own = theirs["memory-core-eval:overall"]["recall@5"]
    assert abs(100 * row["value"] - own) < 0.2, (row, own)
