"""Print what a conversation dataset holds and how long it takes to load (Markdown).

Run from the repository root, e.g.::

    .venv/bin/python scripts/describe_conversations.py ../shared/seed-data/locomo/locomo10.json

The figures in ``docs/datasets.md`` come from this script.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter

from mnemometer.datasets import load_dataset


def main() -> None:
    """Load the file ``--repeat`` times and describe it."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path")
    ap.add_argument("--format", default=None, help="reader name (default: sniffed)")
    ap.add_argument("--repeat", type=int, default=5, help="loads to time (median reported)")
    args = ap.parse_args()

    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        ds = load_dataset(args.path, format=args.format)
        times.append(time.perf_counter() - t0)
    convs = ds.conversations
    sessions = [len(c.sessions) for c in convs]
    turns = [t for c in convs for _, t in c.turns()]
    print("| figure | value |\n|---|---|")
    print(f"| conversations | {len(convs)} |")
    print(f"| sessions | {sum(sessions)} ({min(sessions)}-{max(sessions)} per conversation) |")
    print(
        f"| sessions with a parsed date | {sum(s.date is not None for c in convs for s in c.sessions)} |"
    )
    print(f"| turns | {len(turns)} ({sum(len(t.text.split()) for t in turns)} words) |")
    print(f"| turns with an image caption | {sum(t.caption is not None for t in turns)} |")
    print(f"| questions | {len(ds.queries)} |")
    codes = Counter((q.type, q.metadata.get("category")) for q in ds.queries)
    for (qtype, code), n in sorted(codes.items(), key=lambda kv: (str(kv[0][1]), kv[0][0])):
        label = f"{qtype} (category {code})" if code is not None else qtype
        print(f"| - {label} | {n} |")
    print(f"| questions with no evidence | {sum(not q.relevant_ids for q in ds.queries)} |")
    print(f"| evidence turn ids | {sum(len(q.relevant_ids) for q in ds.queries)} |")
    print(f"| load time (median of {args.repeat}) | {statistics.median(times):.2f} s |")
    print(f"| content hash | `{ds.info.content_hash}` |")
    print("\nNotes (info.notes):\n")
    for note in ds.info.notes:
        print(f"- {note}")


if __name__ == "__main__":
    main()
