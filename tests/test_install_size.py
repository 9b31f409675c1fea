"""The systems table's install-size method (benchmarks/_install_size.py) on this environment."""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "_install_size.py"


@pytest.fixture(scope="module")
def size():
    spec = importlib.util.spec_from_file_location("_install_size", _PATH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["_install_size"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_core_closure_follows_requirements_but_not_extras(size) -> None:
    core = size.closure(size.CORE)
    assert {"mnemometer", "pydantic", "pydantic-core", "numpy", "httpx"} <= core
    assert "torch" not in core and "mem0ai" not in core  # only behind extras


@pytest.mark.slow  # a few seconds: stats every file qdrant-client's closure installed
def test_own_size_counts_only_what_is_not_shared(size) -> None:
    pytest.importorskip("qdrant_client")
    own = size.own_mb(["qdrant-client"], size.CORE)
    alone = size.dist_bytes("qdrant-client") / 1e6
    assert own >= alone > 0  # its own files, plus whatever it pulls in beyond core
    assert size.own_mb(["qdrant-client"], size.CORE + ["qdrant-client"]) == 0
    assert size.own_mb(["no-such-distribution-here"], size.CORE) is None
    with pytest.raises(md.PackageNotFoundError):
        size.dist_bytes("no-such-distribution-here")
