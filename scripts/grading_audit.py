"""Grade the adversarial replies table with the installed mnemometer, kind by kind.

The table (``tests/data/grading/adversarial.jsonl``) holds, for the packaged scenarios'
graded turns, replies of five kinds with the score each must get: negations of the right
answer and shotgun lists (must fail), near misses (must fail), right paraphrases and right
answers that name the old fact as former (must pass). ``tests/suites/test_scenario_adversarial.py``
asserts every row; this script prints how a given version of the grader does, so versions
can be compared (docs/scenarios.md, "Adversarial replies")::

    python scripts/grading_audit.py                       # this checkout
    PYTHONPATH=/path/to/old/src python scripts/grading_audit.py   # an older grader

``--agents`` also runs the negation, shotgun and oracle agents of the test over the whole
suite (``similarity=none``) and prints their accuracy.
"""

from __future__ import annotations

import argparse
import inspect
import json
import tempfile
from collections import defaultdict
from pathlib import Path

import mnemometer
from mnemometer.suites.scenarios import ScenarioSuite, load_scenarios

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "tests" / "data" / "grading" / "adversarial.jsonl"
KINDS = ("negation", "shotgun", "near-miss", "paraphrase", "former")


def _load_test_module():
    import importlib.util

    path = ROOT / "tests" / "suites" / "test_scenario_adversarial.py"
    spec = importlib.util.spec_from_file_location("adversarial_agents", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    """Print the table's outcome kind by kind (and the agents' accuracy with --agents)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--table", type=Path, default=TABLE)
    p.add_argument("--similarity", default="minilm", choices=["minilm", "none"])
    p.add_argument("--agents", action="store_true", help="also run the three in-test agents")
    p.add_argument("--show", action="store_true", help="list every row off its target")
    args = p.parse_args()
    rows = [json.loads(line) for line in args.table.read_text(encoding="utf-8").splitlines()]
    suite = ScenarioSuite(similarity=args.similarity)
    steps = {s.id: [st for st in s.steps if st.grade is not None] for s in load_scenarios()}
    with_context = "context" in inspect.signature(suite.grade).parameters
    print(f"mnemometer {mnemometer.__file__}")
    print(
        f"suite version {suite.version}, similarity {args.similarity}, rescue threshold "
        f"{suite.threshold}, {len(rows)} replies"
    )
    by: dict[str, list[tuple[dict, float]]] = defaultdict(list)
    for r in rows:
        step = steps[r["scenario"]][r["turn"]]
        extra = (getattr(step, "context", ""),) if with_context else ()
        by[r["kind"]].append((r, suite.grade(r["reply"], step.grade, *extra).score))
    print(f"{'kind':<11} {'n':>3}  {'target':<9} {'on target':>9}  {'mean score':>10}")
    for kind in KINDS:
        got = by.get(kind, [])
        target = "fail (0)" if all(r["score"] == 0.0 for r, _ in got) else "pass (>0)"
        hit = sum((s == 0.0) == (r["score"] == 0.0) for r, s in got)
        mean = sum(s for _, s in got) / len(got) if got else float("nan")
        print(f"{kind:<11} {len(got):>3}  {target:<9} {hit:>5}/{len(got):<3}  {mean:>10.3f}")
        if args.show:
            for r, s in got:
                if (s == 0.0) != (r["score"] == 0.0):
                    print(f"    {s:.1f}  {r['scenario']}#{r['turn']}: {r['reply']!r}")
    if args.agents:
        mod = _load_test_module()
        with tempfile.TemporaryDirectory() as tmp:
            for name in ("negation", "shotgun", "oracle"):
                acc = mod.run_agent(name, Path(tmp) / name)
                print(f"{name} agent: accuracy {acc:.3f} over 13 scenarios")


if __name__ == "__main__":
    main()
