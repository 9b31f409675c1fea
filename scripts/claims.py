"""Regenerate the table of ``docs/claims.md``: each published claim beside what it measures here.

Every row is one ``mnemometer run locomo`` of a third-party system through its plug-in
(``examples/plugins/``), and bm25's run beside them; the table reads each run's
rule-sensitivity section: the system under its claim's own rule, under the neutral rule
(``turn-any`` at 5), bm25 and a random ranking under the claim's rule. The reader is the
deterministic test server: the rules read only the rankings.

Run it in the plug-ins' venv (``make claims`` builds the venv and runs this)::

    ~/.cache/mnemometer/plugins/venv/bin/python scripts/claims.py [--limit N] [--write]

``--limit`` counts LoCoMo conversations (default 1: conv-26); ``--write`` replaces the table
between the markers in ``docs/claims.md``. The runs are kept under ``runs/claims/``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from mnemometer.testing import FakeLLMServer
from mnemometer.testing._bench import benchmark_reply, is_judge_request

REPO = Path(__file__).resolve().parents[1]
DATASET = "../shared/seed-data/locomo/locomo10.json"
PORT = 18590
DOC = REPO / "docs" / "claims.md"
BEGIN, END = "<!-- claims:begin -->", "<!-- claims:end -->"
NEUTRAL = ("turn-any", 5)


@dataclass(frozen=True)
class Row:
    """One configuration of one system, and the rule its claim is counted by."""

    system: str
    store: str
    options: tuple[str, ...]
    rule: str | None
    k: int
    what: str

    @property
    def slug(self) -> str:
        """The row's name in ``runs/claims/``."""
        return "-".join([self.store, *(o.replace("=", "-") for o in self.options)])


ROWS = [
    Row("engram-search 0.1.7", "engram", (), "distinct-session", 5, "its documents, hybrid"),
    Row("engram-search 0.1.7", "engram", ("unit=turn",), "distinct-session", 5, "turns, hybrid"),
    Row("taosmd 0.4.0", "taosmd", (), "sess-any", 5, "the recipe's query expansion"),
    Row("taosmd 0.4.0", "taosmd", ("expand=false",), "sess-any", 5, "the plain question"),
    Row("genome-memory 1.2.1", "genome", (), "turn-fraction", 10, "dense"),
    Row("dory-memory 1.2.1", "dory", (), None, 5, "its spreading activation"),
]
BASELINE = Row("bm25", "bm25", (), None, 5, "")


def command(row: Row, limit: int) -> list[str]:
    """The ``mnemometer run`` of one row (as docs/claims.md prints it)."""
    cmd = ["mnemometer", "run", "locomo", "--dataset", DATASET, "--store", row.store]
    for opt in row.options:
        cmd += ["-S", opt]
    cmd += ["--limit", str(limit), "--llm-base-url", f"http://127.0.0.1:{PORT}/v1"]
    cmd += ["--llm-model", "fake-llm", "--format", "none", "--out", out_dir(row, limit)]
    return cmd


def out_dir(row: Row, limit: int) -> str:
    """Where a row's run goes (relative to the repository)."""
    return f"runs/claims/{row.slug}-{limit}"


def rules(run: Path) -> dict[tuple[str, int], dict]:
    """The run's rule-sensitivity rows by (rule, k)."""
    summary = json.loads((run / "summary.json").read_text("utf-8"))
    return {(r["rule"], r["k"]): r for r in summary["sections"]["rules"]["rules"]}


def run_all(rows: list[Row], limit: int) -> dict[Row, dict]:
    """Run each row against one test server; the rule table of each."""
    bin_dir = Path(sys.executable).parent
    out = {}
    # What `python -m mnemometer.testing --port PORT` serves (docs/claims.md starts that).
    server = FakeLLMServer(
        rules=[(is_judge_request, benchmark_reply)],
        default=benchmark_reply,
        models=["fake-llm"],
        port=PORT,
    )
    with server:
        for row in rows:
            target = REPO / out_dir(row, limit)
            shutil.rmtree(target, ignore_errors=True)
            cmd = command(row, limit)
            print("$", " ".join(cmd), file=sys.stderr, flush=True)
            # engram's topic documents iterate a set of strings: one hash seed, one table.
            env = {**os.environ, "PYTHONHASHSEED": "0"}
            subprocess.run([str(bin_dir / cmd[0]), *cmd[1:]], cwd=REPO, env=env, check=True)
            out[row] = rules(target)
    return out


def cell(table: dict, rule: str | None, k: int, random: bool = False) -> str:
    """One figure of a run's rule table (the random ranking's with ``random``); "–": none."""
    if rule is None or (rule, k) not in table:
        return "–"
    r = table[(rule, k)]
    if random:
        return "–" if r["random"] is None else f"{r['random']['value']:.3f}"
    return f"{r['value']:.3f}"


def render(tables: dict[Row, dict], limit: int) -> str:
    """The Markdown table."""
    base = tables[BASELINE]
    head = [
        "| system (configuration) | claim's rule | the system, claim's rule | the system, "
        "`turn-any`@5 | bm25, claim's rule | random ranking, claim's rule | command |",
        "|---|---|---|---|---|---|---|",
    ]
    lines = []
    for row in ROWS:
        t = tables[row]
        rule = f"`{row.rule}`@{row.k}" if row.rule else "not a retrieval rule"
        cmd = " ".join(command(row, limit)).replace(DATASET, "$LOCOMO")
        lines.append(
            f"| {row.system} ({row.what}) | {rule} | {cell(t, row.rule, row.k)} "
            f"| {cell(t, *NEUTRAL)} | {cell(base, row.rule, row.k)} "
            f"| {cell(t, row.rule, row.k, random=True)} | `{cmd}` |"
        )
    bm25 = " ".join(command(BASELINE, limit)).replace(DATASET, "$LOCOMO")
    lines.append(
        f"| bm25 (mnemometer's baseline) | – | – | {cell(base, *NEUTRAL)} | – "
        f"| {cell(base, *NEUTRAL, random=True)} (`turn-any`@5) | `{bm25}` |"
    )
    return "\n".join([*head, *lines])


def main() -> int:
    """Run every row, print the table, and write it into docs/claims.md with ``--write``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=1, help="LoCoMo conversations (default 1)")
    parser.add_argument("--write", action="store_true", help="update docs/claims.md")
    args = parser.parse_args()
    tables = run_all([BASELINE, *ROWS], args.limit)
    table = render(tables, args.limit)
    print(table)
    if args.write:
        text = DOC.read_text("utf-8")
        start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
        DOC.write_text(text[:start] + "\n" + table + "\n" + text[end:], "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
