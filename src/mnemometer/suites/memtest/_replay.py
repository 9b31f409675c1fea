"""The phase checkpoint of memtest's access-schedule replay (``memtest-replay.json``).

The replay is the costly, order-bound phase of a memtest run: every scheduled access is a
search, and a changed store is indexed again afterwards. Its outcome per memory (found
before, found after, mean access latency) is all the ``forget/`` items need, so it is
written once, atomically, and a resumed run reads it instead of replaying.
"""

from __future__ import annotations

import json
from pathlib import Path

from mnemometer.log._writer import atomic_write

REPLAY_FILE = "memtest-replay.json"

Outcomes = dict[str, tuple[bool, bool, float]]


def write_replay(run_dir: Path, outcomes: Outcomes) -> None:
    """Checkpoint the replay's outcomes (written whole or not at all)."""
    rows = {m: [b, a, ms] for m, (b, a, ms) in outcomes.items()}
    atomic_write(Path(run_dir) / REPLAY_FILE, json.dumps({"version": 1, "outcomes": rows}))


def read_replay(run_dir: Path) -> Outcomes | None:
    """The checkpointed outcomes, or ``None`` when there are none.

    An unreadable checkpoint is ``None`` too: the replay simply runs again.
    """
    try:
        doc = json.loads((Path(run_dir) / REPLAY_FILE).read_text("utf-8"))
        rows = doc["outcomes"]
        return {str(m): (bool(b), bool(a), float(ms)) for m, (b, a, ms) in rows.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
