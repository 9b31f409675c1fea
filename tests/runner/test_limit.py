"""``--limit N`` on every suite a store runs offline: the first N items of the plan, recorded."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import invoke_cli

from mnemometer.log import read_header, read_items, read_log

TEAM = Path(__file__).resolve().parents[2] / "examples" / "suites" / "team-memory"


@pytest.mark.parametrize(
    ("suite", "run_dir"),
    [
        (["retrieval", "-d", "demo-en", "-s", "bm25"], "."),
        (["memtest", "-d", "demo-en", "-s", "bm25"], "."),
        ([str(TEAM), "--condition", "lexical"], "lexical-r0"),  # an items suite directory
    ],
)
def test_limit_runs_the_first_items_of_the_full_plan(
    suite: list[str], run_dir: str, tmp_path: Path
) -> None:
    def ids(out: Path, *extra: str) -> list[str]:
        r = invoke_cli("run", *suite, "-o", out, "--format", "none", *extra)
        assert r.exit_code == 0, r.output
        return list(dict.fromkeys(i.item_id for i in read_items(out / run_dir)))

    full = ids(tmp_path / "full")
    short = ids(tmp_path / "short", "--limit", "3")
    assert len(full) > 3 and short == full[:3]
    assert read_header(tmp_path / "short" / run_dir).limit == 3
    frame = read_log(tmp_path / "short" / run_dir).to_pandas()
    assert list(dict.fromkeys(frame["item_id"])) == short


def test_limit_below_one_is_refused(tmp_path: Path) -> None:
    r = invoke_cli("run", "retrieval", "-d", "demo-en", "-s", "bm25", "--limit", "0")
    assert r.exit_code == 2 and "--limit must be at least 1" in r.output
