"""The suffix attack on a decision, end to end: what compare, gate and leaderboard say.

LoCoMo's category 5 is scored by a substring rule ("not mentioned" wins). A reader that
appends ", not mentioned" to every answer therefore wins category 5 without answering
anything better. Two LoCoMo runs over all 10 conversations with bm25 and the lenient judge
of the test server: a short shotgun reader (the first eight words of what was retrieved),
and the same reader with the suffix. Printed: the comparison (the declared headline, judge
accuracy over categories 1-4, with its CR2 interval), a gate asking for +10 points, the
leaderboard of the first run, and the first run's own headline.

Run with any installation: ``python benchmarks/decision_attacks.py [--bin .venv/bin]``
(docs/validity.md quotes its output beside the release before the headline, 040cdb7).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from mnemometer.testing import FakeLLMServer
from mnemometer.testing._bench import benchmark_reply, is_judge_request

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "seed-data" / "locomo" / "locomo10.json"


def short(body: dict) -> str:
    """The first eight words of what was retrieved (a judge request gets its verdict)."""
    reply = benchmark_reply(body)
    return reply if is_judge_request(body) else " ".join(reply.split()[:8])


def suffixed(body: dict) -> str:
    """The short answer with ", not mentioned" appended."""
    reply = short(body)
    return reply if is_judge_request(body) else reply + ", not mentioned"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", type=Path, default=Path(sys.executable).parent)
    args = ap.parse_args()
    cli = str(args.bin / "mnemometer")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        for name, reply in (("plain", short), ("suffix", suffixed)):
            with FakeLLMServer(rules=[(is_judge_request, benchmark_reply)], default=reply) as srv:
                subprocess.run(
                    [cli, "run", "locomo", "-d", str(LOCOMO), "-s", "bm25", "--judge", "lenient"]
                    + ["--llm-base-url", srv.base_url, "--llm-model", srv.model]
                    + ["--out", str(out / name), "--format", "none"],
                    check=True,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
        # The two readers are two endpoints: --force pairs them on any version.
        cmp = [cli, "compare", str(out / "plain"), "vs", str(out / "suffix"), "--force"]
        done = subprocess.run([*cmp, "-o", str(out / "c.json")], capture_output=True, text=True)
        print("\n".join(done.stdout.splitlines()[:4]))
        policy = out / "p.toml"
        policy.write_text("min_success_rate_delta = 0.10\nallow_forced = true\n")
        gate = subprocess.run(
            [cli, "gate", str(out / "c.json"), "--policy", str(policy)],
            capture_output=True,
            text=True,
        )
        print(gate.stdout.strip().splitlines()[0], f"(exit {gate.returncode})")
        board = subprocess.run(
            [cli, "leaderboard", str(out / "plain")], capture_output=True, text=True
        )
        print(board.stdout.strip())
        report = subprocess.run(
            [cli, "report", str(out / "plain")], capture_output=True, text=True
        ).stdout
        print(next((x for x in report.splitlines() if x.startswith("headline")), "(no headline)"))
        print(next((x for x in report.splitlines() if "accuracy:lenient" in x), ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
