"""Memory Layer's rule for a claim: 100 or more reviewed items of a held-out suite."""

from __future__ import annotations

from collections.abc import Sequence

from mnemometer.log._schema import RunHeader

MIN_REVIEWED_ITEMS = 100
"""Reviewed held-out items a claim needs (Memory Layer's rule before an external claim)."""


def claim_warnings(
    suite_name: str, held_out: bool, label_status: str | None, items: int
) -> list[str]:
    """What is missing for an external claim: a held-out suite and 100+ reviewed items.

    Args:
        suite_name: the suite, as named in the messages.
        held_out: the suite's manifest says ``held_out = true``.
        label_status: ``reviewed``, ``draft``, or ``None`` for a suite without review state.
        items: the items the claim rests on.
    """
    out = []
    if not held_out:
        out.append(
            f"suite {suite_name!r} is not marked held-out (held_out = true in suite.toml): "
            "a suite used while tuning cannot support an external claim"
        )
    reviewed = items if label_status == "reviewed" else 0
    if reviewed < MIN_REVIEWED_ITEMS:
        state = "labels not reviewed" if label_status != "reviewed" else f"{items} items"
        out.append(
            f"the claim rests on {reviewed} reviewed items ({state}); an external claim "
            f"needs at least {MIN_REVIEWED_ITEMS}"
        )
    return out


def run_claim_warnings(headers: Sequence[RunHeader], items: int) -> list[str]:
    """:func:`claim_warnings` for compared runs (their suite options say held-out/review)."""
    h = headers[0]
    opts = h.suite_options
    name = str(opts.get("suite_name") or h.dataset.name or h.suite)
    held = all(x.suite_options.get("held_out") is True for x in headers)
    status = opts.get("label_status")
    return claim_warnings(name, held, str(status) if status else None, items)
