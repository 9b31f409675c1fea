"""Gates: check a comparison against a TOML policy; the verdict is the exit code."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import Field, ValidationError

from mnemometer.comparison._model import COMPARISON_SCHEMA_VERSION, Comparison
from mnemometer.config import StrictModel, load_model
from mnemometer.errors import MnemometerError, did_you_mean


class GatePolicy(StrictModel):
    """A gate policy. Every key is optional; Memory Layer's gate files load as they are."""

    min_paired_items: int = 0
    """Fail with fewer paired items (repeats of an item count once)."""
    min_success_rate_delta: float = 0.0
    """Fail when the success delta is below this (so by default a regression fails)."""
    max_mcnemar_p_value: float | None = None
    """Fail when the McNemar p is above this."""
    max_holm_p_value: float | None = None
    """Fail when the Holm-adjusted success p is above this."""
    max_item_mcnemar_p_value: float | None = None
    """Memory Layer's spelling of ``max_mcnemar_p_value``: every test is over items (repeats
    aggregated per item), so both keys check the same p."""
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
    min_candidate_success_rate: float | None = None
    """Absolute floor on the candidate's success rate."""
    min_group_candidate_success_rate: dict[str, float] = Field(default_factory=dict)
    """``field:value`` group → floor on the candidate's success rate there; a group with no
    paired observations fails."""
    allow_forced: bool = False
    """Accept a comparison made with ``--force`` over mismatched runs."""


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


def gate(comparison: Comparison | str | Path, policy: GatePolicy | str | Path) -> GateResult:
    """Check ``comparison`` against ``policy`` (objects or file paths)."""
    c = comparison if isinstance(comparison, Comparison) else load_comparison(comparison)
    pol = policy if isinstance(policy, GatePolicy) else load_policy(policy)
    checks: list[GateCheck] = []

    def check(name: str, ok: bool, message: str) -> None:
        checks.append(GateCheck(name=name, passed=ok, message=message))

    if c.forced:
        check(
            "allow_forced",
            pol.allow_forced,
            "comparison was forced over mismatched runs: " + "; ".join(c.mismatches),
        )
    check(
        "min_paired_items",
        c.items >= pol.min_paired_items,
        f"paired items {c.items} (minimum {pol.min_paired_items}; {c.pairs} observations "
        "with repeats)",
    )
    s = c.success
    if s.delta is None:
        check("min_success_rate_delta", False, "no scorable pairs: success delta undefined")
    else:
        check(
            "min_success_rate_delta",
            s.delta >= pol.min_success_rate_delta,
            f"success delta {s.delta:+.4f} (minimum {pol.min_success_rate_delta:+.4f})",
        )
    if pol.max_mcnemar_p_value is not None:
        check(
            "max_mcnemar_p_value",
            s.p_value <= pol.max_mcnemar_p_value,
            f"McNemar p over {s.pairs} items {s.p_value:.4g} (maximum {pol.max_mcnemar_p_value:g})",
        )
    if pol.max_holm_p_value is not None:
        ph = s.p_holm if s.p_holm is not None else s.p_value
        check(
            "max_holm_p_value",
            ph <= pol.max_holm_p_value,
            f"Holm-adjusted success p {ph:.4g} (maximum {pol.max_holm_p_value:g})",
        )
    if pol.max_item_mcnemar_p_value is not None:
        check(
            "max_item_mcnemar_p_value",
            s.p_value <= pol.max_item_mcnemar_p_value,
            f"McNemar p over {s.pairs} items (majority over repeats) "
            f"{s.p_value:.4g} (maximum {pol.max_item_mcnemar_p_value:g})",
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
    if pol.min_candidate_success_rate is not None:
        rate = s.candidate_rate
        check(
            "min_candidate_success_rate",
            rate is not None and rate >= pol.min_candidate_success_rate,
            f"candidate success {'n/a' if rate is None else f'{rate:.4f}'} "
            f"(minimum {pol.min_candidate_success_rate:.4f})",
        )
    for key, floor in pol.min_group_candidate_success_rate.items():
        g = c.group(key)
        if g is None or g.success.pairs == 0 or g.success.candidate_rate is None:
            check(
                "min_group_candidate_success_rate",
                False,
                f"group {key!r} has no paired observations"
                f"{did_you_mean(key, [x.key for x in c.groups])}",
            )
        else:
            rate = g.success.candidate_rate
            check(
                "min_group_candidate_success_rate",
                rate >= floor,
                f"group {key} candidate success {rate:.4f} (minimum {floor:.4f})",
            )
    return GateResult(
        passed=all(ch.passed for ch in checks), checks=checks, warnings=list(c.claim_warnings)
    )
