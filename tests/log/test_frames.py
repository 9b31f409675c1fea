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
    overall = c[(c["group"] == "") & (c["metric"] == "headline")].iloc[0]
    assert overall["items"] == cmp.headline.pairs and overall["delta"] == cmp.headline.delta
    assert overall["ci_method"] == "bca"
    assert {"type:person", "difficulty:easy"} <= set(c["group"])


def test_without_pandas_each_frame_names_the_analysis_extra(tmp_path: Path):
    import subprocess
    import sys

    code = f"""
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "pandas":
            raise ModuleNotFoundError(name)
sys.meta_path.insert(0, Block())
from mnemometer import compare, read_log, run
a = run("retrieval", "keyword", dataset="demo-en", out={str(tmp_path / "a")!r}, limit=3)
for frame in (a.to_pandas, read_log(a.path).to_pandas, compare([a.path], [a.path]).to_pandas):
    try:
        frame()
    except Exception as e:
        print(type(e).__name__, e)
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) == 3
    assert all(
        line == "MissingExtraError results as a DataFrame needs the optional dependency "
        "'pandas': pip install 'mnemometer[analysis]'"
        for line in lines
    ), lines
