"""Gates: check a comparison against a TOML policy; the verdict is the exit code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from mnemometer.comparison._model import COMPARISON_SCHEMA_VERSION, Comparison
from mnemometer.config import StrictModel, load_model
from mnemometer.errors import MnemometerError, did_you_mean


class GatePolicy(StrictModel):
    """A gate policy. Every key is optional; Memory Layer's gate files load as they are.

    Every check reads the comparison's **headline** (the number the suite declared), never
    an item's ``success`` flag: Memory Layer's ``*success*`` keys are its names for the
    headline checks (for a suite directory the headline is the items' success).
    """

    min_paired_items: int = 0
    """Fail with fewer paired items (repeats of an item count once)."""
    min_headline_delta: float | None = None
    """Fail when the headline delta is below this (default 0: a regression fails)."""
    min_success_rate_delta: float | None = None
    """Memory Layer's name of ``min_headline_delta`` (used when that one is not given)."""
    max_p_value: float | None = None
    """Fail when the headline's p (from the test the design calls for) is above this."""
    max_mcnemar_p_value: float | None = None
    """Memory Layer's name of ``max_p_value`` (McNemar's test where items are independent
    0/1 values, the clustered test where they cluster)."""
    max_holm_p_value: float | None = None
    """Fail when the Holm-adjusted headline p is above this."""
    max_item_mcnemar_p_value: float | None = None
    """Memory Layer's other name of ``max_p_value``."""
    max_token_delta: int | None = None
    """Fail when the candidate spent more than this many extra tokens."""
    max_latency_delta_ms: float | None = None
    """Fail when the candidate's mean latency grew by more than this."""
    min_metric_delta: dict[str, float] = Field(default_factory=dict)
    """Metric key or name → minimum mean paired delta. A metric the comparison never
    measured counts as a delta of 0, as in Memory Layer (the check says so), unless
    ``strict_metrics``."""
    strict_metrics: bool = False
    """Fail checks on metrics the comparison never measured instead of counting them as 0."""
    min_candidate_metric: dict[str, float] = Field(default_factory=dict)
    """Metric key or name → absolute floor on the candidate's mean."""
    min_candidate_headline: float | None = None
    """Absolute floor on the candidate's headline."""
    min_candidate_success_rate: float | None = None
    """Memory Layer's name of ``min_candidate_headline``."""
    min_group_candidate_headline: dict[str, float] = Field(default_factory=dict)
    """``field:value`` group → floor on the candidate's headline there; a group with no
    paired observations fails."""
    min_group_candidate_success_rate: dict[str, float] = Field(default_factory=dict)
    """Memory Layer's name of ``min_group_candidate_headline``."""
    allow_forced: bool = False
    """Accept a comparison made with ``--force`` over mismatched runs."""
    allow_vary: list[str] = Field(default_factory=list)
    """Components a comparison may declare it varies (``judge``, ``reader``, ...); any
    other declared variation fails the gate."""
    allow_unfinished: bool = False
    """Accept runs that did not finish (their missing items are unpaired)."""
    max_unpaired_items: int = 0
    """Fail when more item results than this have no partner on the other side."""
    max_failed_items: int = 0
    """Fail when more paired items than this errored or timed out on either side."""
    max_judge_false_positive_rate: float | None = None
    """Fail when a judge of either side accepted more than this share of answers known to
    be wrong (its measured false-positive rate), or when a judge's rate was not measured."""


class GateCheck(StrictModel):
    """One check of a gate."""

    name: str
    """Policy key checked."""
    passed: bool
    """Whether it held."""
    message: str
    """What was compared."""


class GateResult(StrictModel):
    """The verdict."""

    passed: bool
    """True when every check held."""
    checks: list[GateCheck]
    """Every check, in policy order."""
    warnings: list[str] = Field(default_factory=list)
    """What the claim still lacks (held-out suite, 100+ reviewed items); never fails it."""

    @property
    def reasons(self) -> list[str]:
        """Messages of the failed checks."""
        return [c.message for c in self.checks if not c.passed]


def load_policy(path: str | Path) -> GatePolicy:
    """Read a TOML gate policy.

    Raises:
        MnemometerError: missing file, malformed TOML, unknown keys or wrong types.
    """
    return load_model(path, GatePolicy, what="gate policy")


def load_comparison(path: str | Path) -> Comparison:
    """Read a comparison JSON written by ``mnemometer compare --format json``.

    Raises:
        MnemometerError: missing, malformed or not a comparison.
    """
    p = Path(path)
    try:
        raw = p.read_bytes()
        version = json.loads(raw).get("schema_version") if raw.strip().startswith(b"{") else None
        if isinstance(version, int) and version < COMPARISON_SCHEMA_VERSION:
            raise MnemometerError(
                f"{p}: a comparison of schema {version}, written by an older mnemometer whose "
                "tests counted repeats as separate observations; run `mnemometer compare` "
                "again"
            )
        return Comparison.model_validate_json(raw)
    except FileNotFoundError:
        raise MnemometerError(f"{p}: no such comparison file") from None
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(map(str, err["loc"])) or "(file)"
        raise MnemometerError(
            f"{p}: not a comparison written by `mnemometer compare --format json` "
            f"({loc}: {err['msg']})"
        ) from None


def _first(*values: float | None) -> float | None:
    return next((v for v in values if v is not None), None)


def _named(pol: GatePolicy, *keys: str) -> str:
    """The first of ``keys`` the policy sets (the check is reported under the user's name)."""
    return next((k for k in keys if getattr(pol, k) not in (None, {})), keys[0])


def gate(comparison: Comparison | str | Path, policy: GatePolicy | str | Path) -> GateResult:
    """Check ``comparison`` against ``policy`` (objects or file paths).

    Complete evidence first: a run that did not finish, unpaired or failed items beyond the
    policy, a forced pairing, a declared variation the policy does not allow, or a headline
    on which no claim is possible (too few clusters) each fail the gate with its reason.
    """
    c = comparison if isinstance(comparison, Comparison) else load_comparison(comparison)
    pol = policy if isinstance(policy, GatePolicy) else load_policy(policy)
    checks: list[GateCheck] = []

    def check(name: str, ok: bool, message: str) -> None:
        checks.append(GateCheck(name=name, passed=ok, message=message))

    _evidence(c, pol, check)
    check(
        "min_paired_items",
        c.items >= pol.min_paired_items,
        f"paired items {c.items} (minimum {pol.min_paired_items}; {c.pairs} observations "
        "with repeats)",
    )
    h = c.headline
    label = c.headline_spec.label
    floor = _first(pol.min_headline_delta, pol.min_success_rate_delta, 0.0)
    name = _named(pol, "min_headline_delta", "min_success_rate_delta")
    if h.delta is None:
        check(name, False, f"no paired {label} values: the delta is undefined")
    else:
        check(
            name,
            h.delta >= floor,  # type: ignore[operator]
            f"{label} delta {h.delta:+.4f} (minimum {floor:+.4f})",
        )
    if h.no_claim:
        check("no_claim", False, f"{label}: {h.no_claim}")
    max_p = _first(pol.max_p_value, pol.max_mcnemar_p_value, pol.max_item_mcnemar_p_value)
    if max_p is not None:
        check(
            _named(pol, "max_p_value", "max_mcnemar_p_value", "max_item_mcnemar_p_value"),
            h.p_value is not None and h.p_value <= max_p,
            f"{label} p {'n/a' if h.p_value is None else f'{h.p_value:.4g}'} "
            f"({h.test or 'no test'} over {h.pairs} items; maximum {max_p:g})",
        )
    if pol.max_holm_p_value is not None:
        ph = h.p_holm if h.p_holm is not None else h.p_value
        check(
            "max_holm_p_value",
            ph is not None and ph <= pol.max_holm_p_value,
            f"Holm-adjusted {label} p {'n/a' if ph is None else f'{ph:.4g}'} "
            f"(maximum {pol.max_holm_p_value:g})",
        )
    if pol.max_token_delta is not None:
        check(
            "max_token_delta",
            c.cost.token_delta <= pol.max_token_delta,
            f"token delta {c.cost.token_delta:+d} (maximum {pol.max_token_delta:+d})",
        )
    if pol.max_latency_delta_ms is not None:
        lat = c.cost.latency_delta_ms
        check(
            "max_latency_delta_ms",
            lat is not None and lat <= pol.max_latency_delta_ms,
            f"latency delta {'n/a' if lat is None else f'{lat:+.2f}'} ms "
            f"(maximum {pol.max_latency_delta_ms:+g})",
        )
    for key, floor in pol.min_metric_delta.items():
        m = c.metric(key)
        if m is None or m.mean_delta is None:
            hint = did_you_mean(key, [x.key for x in c.metrics])
            if pol.strict_metrics:
                check(
                    "min_metric_delta",
                    False,
                    f"metric {key!r} was not measured in the comparison{hint}",
                )
            else:
                check(
                    "min_metric_delta",
                    0.0 >= floor,
                    f"metric {key!r} was not measured{hint}: counted as delta 0 "
                    f"(minimum {floor:+.4f}; strict_metrics = true fails instead)",
                )
        else:
            check(
                "min_metric_delta",
                m.mean_delta >= floor,
                f"{m.key} delta {m.mean_delta:+.4f} (minimum {floor:+.4f})",
            )
    for key, floor in pol.min_candidate_metric.items():
        m = c.metric(key)
        if m is None or m.candidate_mean is None:
            check("min_candidate_metric", False, f"metric {key!r} has no candidate values")
        else:
            check(
                "min_candidate_metric",
                m.candidate_mean >= floor,
                f"candidate {m.key} {m.candidate_mean:.4f} (minimum {floor:.4f})",
            )
    least = _first(pol.min_candidate_headline, pol.min_candidate_success_rate)
    if least is not None:
        rate = h.candidate
        check(
            _named(pol, "min_candidate_headline", "min_candidate_success_rate"),
            rate is not None and rate >= least,
            f"candidate {label} {'n/a' if rate is None else f'{rate:.4f}'} (minimum {least:.4f})",
        )
    floors = {**pol.min_group_candidate_success_rate, **pol.min_group_candidate_headline}
    group_check = _named(pol, "min_group_candidate_headline", "min_group_candidate_success_rate")
    for key, least in floors.items():
        g = c.group(key)
        if g is None or g.headline.pairs == 0 or g.headline.candidate is None:
            check(
                group_check,
                False,
                f"group {key!r} has no paired observations"
                f"{did_you_mean(key, [x.key for x in c.groups])}",
            )
        else:
            rate = g.headline.candidate
            check(
                group_check,
                rate >= least,
                f"group {key} candidate {label} {rate:.4f} (minimum {least:.4f})",
            )
    return GateResult(
        passed=all(ch.passed for ch in checks), checks=checks, warnings=list(c.claim_warnings)
    )


def _evidence(c: Comparison, pol: GatePolicy, check: Any) -> None:
    """The checks that the evidence is complete and is what the policy accepts."""
    if c.forced:
        check(
            "allow_forced",
            pol.allow_forced,
            "comparison was forced over mismatched runs: " + "; ".join(c.mismatches),
        )
    for what in c.varies:
        check(
            "allow_vary",
            what in pol.allow_vary,
            f"the comparison varies the {what} (declared with --vary {what}): "
            + (
                "allowed by the policy"
                if what in pol.allow_vary
                else f'the policy does not allow it (allow_vary = ["{what}"])'
            ),
        )
    unfinished = c.baseline.unfinished + c.candidate.unfinished
    if unfinished:
        check(
            "allow_unfinished",
            pol.allow_unfinished,
            f"{len(unfinished)} run(s) did not finish: {', '.join(unfinished[:3])}; resume "
            "them (`mnemometer run --resume`) and compare again",
        )
    check(
        "max_unpaired_items",
        c.unpaired <= pol.max_unpaired_items,
        f"{c.unpaired} item result(s) without a partner (maximum {pol.max_unpaired_items})",
    )
    if pol.max_judge_false_positive_rate is not None:
        bound = pol.max_judge_false_positive_rate
        for side, info in (("baseline", c.baseline), ("candidate", c.candidate)):
            for judge, rate in info.judge_false_positive_rates.items():
                check(
                    "max_judge_false_positive_rate",
                    rate is not None and rate <= bound,
                    f"{side} judge {judge} accepted "
                    + ("an unmeasured share" if rate is None else f"{100 * rate:.1f}%")
                    + f" of answers known to be wrong (maximum {100 * bound:.1f}%)",
                )
    failed = max(c.baseline.failed, c.candidate.failed)
    check(
        "max_failed_items",
        failed <= pol.max_failed_items,
        f"failed items: baseline {c.baseline.failed}, candidate {c.candidate.failed} "
        f"(maximum {pol.max_failed_items} per side)",
    )
