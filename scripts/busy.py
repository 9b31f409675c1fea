"""Keep CPUs busy while another command runs: CI's fast group runs under load.

``python scripts/busy.py --workers 2 --max-seconds 3600 &`` starts two processes that spin
until they are killed, their parent exits, or ``--max-seconds`` pass (so a CI that dies
never leaves them spinning). A newcomer's machine is a busy 2-core machine: a test that
passes only on an idle one depends on the machine's speed, which the tests must not.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import time


def spin(deadline: float, parent: int) -> None:
    """Busy-loop until ``deadline`` or until ``parent`` is gone."""
    n = 0
    while True:
        n += 1
        if n % 1_000_000 == 0 and (time.monotonic() > deadline or os.getppid() != parent):
            return


def main() -> None:
    """Start the spinning workers and wait for them."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--max-seconds", type=float, default=3600.0)
    args = ap.parse_args()
    deadline = time.monotonic() + args.max_seconds
    me = os.getpid()
    procs = [
        multiprocessing.Process(target=spin, args=(deadline, me), daemon=True)
        for _ in range(args.workers)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join()


if __name__ == "__main__":
    main()
