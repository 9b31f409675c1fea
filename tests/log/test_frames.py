"""Results as DataFrames: runs, run logs and comparisons, one row per item or test."""

from __future__ import annotations

from pathlib import Path

from mnemometer import compare, read_log, run


def test_runs_and_comparisons_become_dataframes(tmp_path: Path):
    a = run("retrieval", "keyword", dataset="demo-en", out=tmp_path / "a")
    b = run("retrieval", "bm25", dataset="demo-en", out=tmp_path / "b")
    df = a.to_pandas()
    assert len(df) == 15 and set(df["item_id"]) == {i.item_id for i in read_log(a.path).items}
    assert {"success", "hit@20", "mrr@10", "group.type", "latency_ms"} <= set(df.columns)
    assert (df["condition"] == "keyword").all()
    hits = df.dropna(subset=["hit@20"])
    assert hits["hit@20"].mean() == next(m.value for m in a.summary.overall if m.key == "hit@20")
    cmp = compare([a.path], [b.path], resamples=200)
    c = cmp.to_pandas()
    overall = c[(c["group"] == "") & (c["metric"] == "success")].iloc[0]
    assert overall["items"] == cmp.success.pairs and overall["delta"] == cmp.success.delta
    assert overall["ci_method"] == "bca"
    assert {"type:person", "difficulty:easy"} <= set(c["group"])
