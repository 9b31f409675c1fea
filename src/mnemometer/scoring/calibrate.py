"""Calibrate the similarity rescue threshold on a labelled set of answers.

``data/similarity_calibration.json`` holds 114 answers written for the 19 distinct expected answers of
the packaged scenarios, each labelled ``right`` (correct, often without the exact keyword),
``verbose`` (correct and long) or ``wrong`` (including wrong answers that share words with
the expected one, such as "Hilton Hotels" for "Choice Hotels"). The 12 answers to persona
turns, which are never rescued, are left out: 102 answers calibrate the threshold.

The rescue must never lift a wrong answer, so the threshold is the smallest value on a
0.01 grid strictly above the most similar wrong answer; the report says how many right and
verbose answers it still rescues. Run it with::

    python -m mnemometer.scoring.calibrate [--similarity minilm|endpoint]
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from mnemometer.scoring.similarity import Similarity

LABELLED = Path(__file__).parent / "data" / "similarity_calibration.json"


@dataclass(frozen=True)
class Calibration:
    """The outcome of a calibration."""

    threshold: float
    """Smallest 0.01 step above every wrong answer's similarity."""
    max_wrong: float
    """Highest similarity of a wrong answer."""
    right_above: float
    """Share of ``right`` answers at or above the threshold."""
    verbose_above: float
    """Share of ``verbose`` answers at or above the threshold."""
    mean: dict[str, float]
    """Mean similarity per label."""
    n: dict[str, int]
    """Answers per label."""
    closest_wrong: list[tuple[float, str, str]]
    """The five wrong answers most similar to their expected answer."""


def calibrate(sim: Similarity, labelled: Path = LABELLED) -> Calibration:
    """Score every labelled answer and pick the threshold."""
    rows = json.loads(labelled.read_text(encoding="utf-8"))
    by: dict[str, list[float]] = {"right": [], "verbose": [], "wrong": []}
    wrong: list[tuple[float, str, str]] = []
    sim.warm([t for r in rows for t in (r["answer"], r["expected"])])  # one batch
    for r in rows:
        if r.get("grader") == "persona":
            continue  # persona turns are never rescued
        value = sim(r["answer"], r["expected"])
        assert value is not None
        by[r["label"]].append(value)
        if r["label"] == "wrong":
            wrong.append((value, r["answer"], r["expected"]))
    max_wrong = max(by["wrong"])
    threshold = math.floor(max_wrong * 100 + 1) / 100  # strictly above, on a 0.01 grid

    def share(label: str) -> float:
        return sum(v >= threshold for v in by[label]) / len(by[label])

    return Calibration(
        threshold=threshold,
        max_wrong=max_wrong,
        right_above=share("right"),
        verbose_above=share("verbose"),
        mean={k: sum(v) / len(v) for k, v in by.items()},
        n={k: len(v) for k, v in by.items()},
        closest_wrong=sorted(wrong, reverse=True)[:5],
    )


def main() -> None:
    """Print the calibration for the chosen similarity backend."""
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--similarity", default="minilm", choices=["minilm", "endpoint"])
    p.add_argument("--embedding-model", default=None)
    args = p.parse_args()
    llm = None
    if args.similarity == "endpoint":
        from mnemometer.llm import LLMClient, resolve_settings

        llm = LLMClient.from_settings(resolve_settings(model=args.embedding_model))
    c = calibrate(Similarity(args.similarity, llm))
    print(f"answers: {c.n}")
    print("mean cosine: " + ", ".join(f"{k} {v:.3f}" for k, v in c.mean.items()))
    print(f"max wrong: {c.max_wrong:.3f}  ->  threshold {c.threshold:.2f}")
    for value, answer, expected in c.closest_wrong:
        print(f"  wrong {answer!r} vs {expected!r}: {value:.3f}")
    print(
        f"rescued at the threshold: right {c.right_above:.0%}, verbose {c.verbose_above:.0%}, "
        "wrong 0%"
    )


if __name__ == "__main__":
    main()
