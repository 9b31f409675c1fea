"""Calibrate the similarity rescue threshold on a labelled set of answers.

``data/similarity_calibration.json`` holds answers written for the distinct expected answers
of the packaged scenarios, plus four exact values from ``memory_scalability``'s facts (a
phone number, a badge number, a date, a time). Each answer is labelled ``right`` (correct,
often without the exact keyword), ``verbose`` (correct and long), ``wrong`` (another value,
including **near misses**: a wrong day, time, e-mail, number, name, city or brand) or
``negation`` (the right value denied: "Not Amazon.").

The rescue only lifts replies that miss a keyword, and never an **exact** answer (an
e-mail, time, weekday, month, number or yes/no; see
:func:`mnemometer.scoring.keywords.exact_answer`): sentence similarity cannot tell
"Monday at 3pm" from "Monday at 2pm". So the threshold is the smallest 0.01 step strictly
above every ``wrong`` answer to an open (non-exact) expected answer; persona answers are
left out (never rescued). The report gives, at that threshold:

* the **false-accept rate**: wrong open answers at or above it (0 on the set by
  construction, with a one-sided 95% upper bound), and **held out**: each expected answer's
  wrong answers against the threshold calibrated on all the others;
* the exact answers' wrong near misses the rescue would lift if it applied to them, and
  the negations (which are graded 0 before similarity is asked);
* how many right and verbose answers it still rescues.

Run it with::

    python -m mnemometer.scoring.calibrate [--similarity minilm|endpoint]
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mnemometer.scoring.keywords import exact_answer
from mnemometer.scoring.similarity import (
    MINILM_FALSE_ACCEPT,
    MINILM_FALSE_ACCEPT_HELD_OUT,
    MINILM_THRESHOLD,
    Similarity,
)

LABELLED = Path(__file__).parent / "data" / "similarity_calibration.json"
LABELS = ("right", "verbose", "wrong", "negation")


@dataclass(frozen=True)
class Calibration:
    """The outcome of a calibration."""

    threshold: float
    """Smallest 0.01 step above every open wrong answer's similarity."""
    max_wrong: float
    """Highest similarity of a wrong answer to an open expected answer."""
    false_accept: float
    """Share of open wrong answers at or above the threshold (0 by construction)."""
    false_accept_upper: float
    """One-sided 95% upper bound on the false-accept rate (Clopper-Pearson)."""
    false_accept_held_out: float
    """Share of open wrong answers at or above the threshold calibrated without their own
    expected answer (leave one expected answer out)."""
    right_above: float
    """Share of open ``right`` answers at or above the threshold."""
    verbose_above: float
    """Share of open ``verbose`` answers at or above the threshold."""
    mean: dict[str, float]
    """Mean similarity per label (open answers)."""
    n: dict[str, int]
    """Open answers per label."""
    rows: int
    """Rows in the set (persona and exact included)."""
    sha256: str
    """SHA-256 of the set file."""
    exact_wrong: list[tuple[float, str, str]]
    """Wrong answers to exact expected answers, most similar first."""
    negations: list[tuple[float, str, str]]
    """Negated right answers, most similar first."""
    closest_wrong: list[tuple[float, str, str]]
    """The five open wrong answers most similar to their expected answer."""

    def exact_above(self) -> int:
        """Exact near misses the rescue would lift if exact answers were not excluded."""
        return sum(v >= self.threshold for v, _, _ in self.exact_wrong)


def _step_above(value: float) -> float:
    return math.floor(value * 100 + 1) / 100  # strictly above, on a 0.01 grid


def _upper95(k: int, n: int) -> float:
    """One-sided 95% Clopper-Pearson upper bound for k events in n trials."""
    if n == 0:
        return 1.0
    if k == 0:
        return 1 - 0.05 ** (1 / n)
    from scipy.stats import beta

    return float(beta.ppf(0.95, k + 1, n - k)) if k < n else 1.0


def describe_set(labelled: Path = LABELLED) -> dict[str, Any]:
    """File name, row count and SHA-256 of a calibration set."""
    raw = labelled.read_bytes()
    return {
        "file": labelled.name,
        "rows": len(json.loads(raw)),
        "sha256": hashlib.sha256(raw).hexdigest(),
    }


def calibration_record() -> dict[str, Any]:
    """What a run header records about the shipped MiniLM threshold."""
    return {
        "model": "minilm",
        **describe_set(),
        "threshold": MINILM_THRESHOLD,
        "false_accept": MINILM_FALSE_ACCEPT,
        "false_accept_held_out": MINILM_FALSE_ACCEPT_HELD_OUT,
    }


def calibrate(sim: Similarity, labelled: Path = LABELLED) -> Calibration:
    """Score every labelled answer and pick the threshold."""
    rows = json.loads(labelled.read_text(encoding="utf-8"))
    sim.warm([t for r in rows for t in (r["answer"], r["expected"])])  # one batch
    by: dict[str, list[float]] = {k: [] for k in LABELS}
    wrong_by_expected: dict[str, list[float]] = defaultdict(list)
    wrong: list[tuple[float, str, str]] = []
    exact_wrong: list[tuple[float, str, str]] = []
    negations: list[tuple[float, str, str]] = []
    for r in rows:
        if r.get("grader") == "persona":
            continue  # persona turns are never rescued
        value = sim(r["answer"], r["expected"])
        assert value is not None
        row = (value, r["answer"], r["expected"])
        if r["label"] == "negation":
            negations.append(row)
            continue
        if exact_answer(r["expected"]):
            if r["label"] == "wrong":
                exact_wrong.append(row)
            continue
        by[r["label"]].append(value)
        if r["label"] == "wrong":
            wrong.append(row)
            wrong_by_expected[r["expected"]].append(value)
    max_wrong = max(by["wrong"])
    threshold = _step_above(max_wrong)
    held_out = 0
    for expected, values in wrong_by_expected.items():
        others = [v for e, vs in wrong_by_expected.items() if e != expected for v in vs]
        held_out += sum(v >= _step_above(max(others)) for v in values)
    n_wrong = len(by["wrong"])
    accepted = sum(v >= threshold for v in by["wrong"])

    def share(label: str) -> float:
        return sum(v >= threshold for v in by[label]) / len(by[label])

    return Calibration(
        threshold=threshold,
        max_wrong=max_wrong,
        false_accept=accepted / n_wrong,
        false_accept_upper=_upper95(accepted, n_wrong),
        false_accept_held_out=held_out / n_wrong,
        right_above=share("right"),
        verbose_above=share("verbose"),
        mean={k: sum(v) / len(v) for k, v in by.items() if v},
        n={k: len(v) for k, v in by.items() if v},
        rows=len(rows),
        sha256=describe_set(labelled)["sha256"],
        exact_wrong=sorted(exact_wrong, reverse=True),
        negations=sorted(negations, reverse=True),
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
    print(f"set: {LABELLED.name}, {c.rows} rows, sha256 {c.sha256[:16]}")
    print(f"open answers: {c.n}")
    print("mean cosine: " + ", ".join(f"{k} {v:.3f}" for k, v in c.mean.items()))
    print(f"max wrong: {c.max_wrong:.3f}  ->  threshold {c.threshold:.2f}")
    for value, answer, expected in c.closest_wrong:
        print(f"  wrong {answer!r} vs {expected!r}: {value:.3f}")
    print(
        f"false accepts: {c.false_accept:.1%} of {c.n['wrong']} wrong answers "
        f"(95% upper bound {c.false_accept_upper:.1%}); held out: {c.false_accept_held_out:.1%}"
    )
    print(f"rescued at the threshold: right {c.right_above:.0%}, verbose {c.verbose_above:.0%}")
    print(
        f"exact answers (never rescued): {c.exact_above()} of {len(c.exact_wrong)} wrong near "
        "misses would pass the threshold, e.g."
    )
    for value, answer, expected in c.exact_wrong[:5]:
        print(f"  wrong {answer!r} vs {expected!r}: {value:.3f}")
    above = sum(v >= c.threshold for v, _, _ in c.negations)
    print(
        f"negations (graded 0 before similarity): {above} of {len(c.negations)} at or above "
        "the threshold, e.g."
    )
    for value, answer, expected in c.negations[:3]:
        print(f"  {answer!r} vs {expected!r}: {value:.3f}")


if __name__ == "__main__":
    main()
