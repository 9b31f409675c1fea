"""LongMemEval streaming: index a LongMemEval-shaped file of 500 questions x 50 sessions
in constant memory, against reading it whole.

Target: the streamed index's peak RSS grows by less than a fifth of the file's size over the
interpreter's own (it holds one question at a time), however big the file. Reference, in the
same run on the same file: reading it whole (``read_longmemeval``, every haystack in
memory), which is what a non-streaming loader does with the 2.7 GB M file.

Run: .venv/bin/python benchmarks/bench_longmemeval_stream.py [QUESTIONS SESSIONS TURN_CHARS]
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

PROBE = """
import resource, sys, time
from pathlib import Path
from mnemometer.datasets._longmemeval import longmemeval_index, read_longmemeval
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
ds = (longmemeval_index if sys.argv[2] == "index" else read_longmemeval)(Path(sys.argv[1]))
secs = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(before, peak, len(ds.queries), secs)
"""

WORDS = (
    "the a my we you said travel garden paint bike teal weekend recipe coffee dog walk park "
    "meeting project deadline book novel chapter movie music guitar lesson doctor visit gym "
    "run marathon friend sister brother birthday party gift cake flight hotel beach mountain"
).split()


def write_file(
    path: Path, questions: int = 500, sessions: int = 50, turn_chars: int = 300, seed: int = 0
) -> int:
    """Write a LongMemEval-shaped JSON list (the documented fields) one question at a time."""
    rng = random.Random(seed)

    def text() -> str:
        out: list[str] = []
        while sum(len(w) + 1 for w in out) < turn_chars:
            out.append(rng.choice(WORDS))
        return " ".join(out)

    with open(path, "w", encoding="utf-8") as f:
        f.write("[")
        for q in range(questions):
            qid = f"gen_{q:04d}" + ("_abs" if q % 17 == 0 else "")
            sids = [f"s_{q}_{j}" if j != 7 else f"answer_{q}_1" for j in range(sessions)]
            hay = []
            for j in range(sessions):
                turns = [
                    {"role": "user" if t % 2 == 0 else "assistant", "content": text()}
                    for t in range(10)
                ]
                if j == 7:
                    turns[2]["has_answer"] = True
                hay.append(turns)
            item = {
                "question_id": qid,
                "question_type": rng.choice(
                    ["single-session-user", "multi-session", "temporal-reasoning"]
                ),
                "question": "What colour did I paint my bike?",
                "answer": "teal",
                "question_date": "2023/06/01 (Thu) 10:00",
                "haystack_session_ids": sids,
                "haystack_dates": [
                    f"2023/05/{1 + j % 28:02d} (Mon) 12:{j % 60:02d}" for j in range(sessions)
                ],
                "haystack_sessions": hay,
                "answer_session_ids": [f"answer_{q}_1"],
            }
            f.write(("," if q else "") + json.dumps(item))
        f.write("]")
    return path.stat().st_size


def probe(path: Path, how: str) -> tuple[int, int, int, float]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(path), how], check=True, capture_output=True, text=True
    )
    before, peak, n, secs = out.stdout.split()
    return int(before), int(peak), int(n), float(secs)


def main() -> int:
    q, s, chars = (int(x) for x in (sys.argv[1:4] if len(sys.argv) > 3 else (500, 50, 300)))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "longmemeval_gen.json"
        size = write_file(path, q, s, chars)
        mb = size / 2**20
        b, p, n, secs = probe(path, "index")
        grow = (p - b) / 1024
        print(f"file: {q} questions x {s} sessions, {mb:.0f} MB")
        print(
            f"streamed index: {n} questions in {secs:.1f} s, peak RSS +{grow:.0f} MB over start ({p / 1024:.0f} MB)"
        )
        b2, p2, _, secs2 = probe(path, "full")
        print(
            f"reference, whole read: {secs2:.1f} s, peak RSS +{(p2 - b2) / 1024:.0f} MB over start ({p2 / 1024:.0f} MB)"
        )
        ok = grow < mb / 5
        print(
            f"target: index growth < {mb / 5:.0f} MB (a fifth of the file): {'met' if ok else 'MISSED'}"
        )
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
