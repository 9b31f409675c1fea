from __future__ import annotations

import importlib.util
from pathlib import Path

from mnemometer import run
from mnemometer._registry import STORES
from mnemometer.testing import check_store

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "adapters" / "substring_store.py"


def load_example():
    spec = importlib.util.spec_from_file_location("substring_store", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.SubstringStore


def test_adapter_guide_example_passes_conformance_and_runs(tmp_path: Path) -> None:
    cls = load_example()
    rep = check_store(cls())
    assert rep.ok, str(rep)
    assert {"list_ids", "delete", "abstains"} <= set(rep.capabilities)
    STORES.register("substring-example", cls)
    try:
        res = run("retrieval", "substring-example", dataset="demo-en", out=tmp_path / "r")
    finally:
        STORES.unregister("substring-example")
    hit = next(m for m in res.summary.overall if m.name == "hit" and m.k == 20)
    assert hit.value > 0.5
    abst = next(m for m in res.summary.overall if m.name == "abstention")
    assert abst.value is not None  # it declares abstains, so negatives are scored
