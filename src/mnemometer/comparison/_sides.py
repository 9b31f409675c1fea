"""Split command-line run paths into baseline and candidate sides."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from mnemometer.comparison._pairs import condition_of, expand_runs
from mnemometer.errors import MnemometerError, did_you_mean
from mnemometer.log._schema import HEADER_FILE


def split_sides(
    paths: Sequence[str | Path],
    baseline_condition: str | None = None,
    candidate_condition: str | None = None,
) -> tuple[list[Path], list[Path]]:
    """Split command-line run paths into baseline and candidate runs.

    ``A... vs B...`` splits at the literal ``vs``; two run directories given as such are
    baseline then candidate; otherwise runs are split by condition: ``baseline_condition`` and
    ``candidate_condition`` when given, else ``no-memory`` is the baseline when it is one
    of exactly two conditions.

    Raises:
        MnemometerError: the split is ambiguous or a named condition has no runs.
    """
    args = [str(p) for p in paths]
    if "vs" in args:
        i = args.index("vs")
        base, cand = expand_runs(args[:i]), expand_runs(args[i + 1 :])
        if not base or not cand:
            raise MnemometerError("give run directories on both sides of 'vs'")
        return base, cand
    explicit = len(args) == 2 and all((Path(a) / HEADER_FILE).is_file() for a in args)
    if explicit and baseline_condition is None and candidate_condition is None:
        return [Path(args[0])], [Path(args[1])]  # the same run twice: a self-comparison
    runs = expand_runs(args)
    from mnemometer.log._reader import read_header

    by_cond: dict[str, list[Path]] = defaultdict(list)
    for r in runs:
        by_cond[condition_of(read_header(r))].append(r)
    names = list(by_cond)
    if baseline_condition is None and candidate_condition is None:
        if len(names) == 2 and "no-memory" in names:
            baseline_condition = "no-memory"
        else:
            raise MnemometerError(
                f"cannot tell baseline from candidate among conditions {names}: pass "
                "--baseline COND and --candidate COND, or separate the runs with 'vs'"
            )
    for given in (baseline_condition, candidate_condition):
        if given is not None and given not in by_cond:
            raise MnemometerError(
                f"no run has condition {given!r}{did_you_mean(given, names)}; "
                f"conditions found: {', '.join(names)}"
            )
    if candidate_condition is None:
        rest = [n for n in names if n != baseline_condition]
        if len(rest) != 1:
            raise MnemometerError(f"pass --candidate COND (one of {', '.join(rest)})")
        candidate_condition = rest[0]
    if baseline_condition is None:
        rest = [n for n in names if n != candidate_condition]
        if len(rest) != 1:
            raise MnemometerError(f"pass --baseline COND (one of {', '.join(rest)})")
        baseline_condition = rest[0]
    return by_cond[baseline_condition], by_cond[candidate_condition]
