"""How one agent build is scored: commands, files, content, memory evidence, tokens.

Build tasks (``command_task``, ``agent_build_task``, one step of ``agent_build_sequence``)
are scored from plain data: the commands' results and the evidence the sandbox collected
(:mod:`mnemometer.sandbox`), never a live workspace beyond the file checks. The counts keep Memory Layer's names (``score_commands_passed``, ``required_files_*``, ...)
so its gate files and reports read them as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemometer.log._schema import Metric
from mnemometer.sandbox import CommandResult, Evidence, read_workspace_file, workspace_file


def metric(name: str, value: float | None, higher: bool = True) -> Metric:
    """A metric named ``name`` (higher is better unless ``higher`` is false)."""
    return Metric(name=name, value=value, higher_is_better=higher)


def status(res: CommandResult | None) -> dict[str, Any] | None:
    """What ``summary.json`` records of one command (``None`` when it never ran)."""
    if res is None:
        return None
    return {
        "argv": res.argv,
        "exit_code": res.exit_code,
        "timed_out": res.timed_out,
        "seconds": round(res.seconds, 3),
        "error": res.error,
    }


@dataclass
class Scores:
    """One agent run's deterministic scores (Memory Layer's names)."""

    agent: CommandResult | None = None
    setup: list[CommandResult] = field(default_factory=list)
    score: list[tuple[str, bool]] = field(default_factory=list)
    files: list[tuple[str, bool]] = field(default_factory=list)
    forbidden: list[tuple[str, bool]] = field(default_factory=list)
    content: list[tuple[str, bool]] = field(default_factory=list)
    evidence: Evidence | None = None
    tokens: dict[str, int] | None = None
    tokens_required: bool = False
    workspace_present: bool = True
    notes: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Every count under Memory Layer's name (``score_commands_passed``, ...)."""
        e = self.evidence
        return {
            "agent_exit_code": -1
            if self.agent is None or self.agent.exit_code is None
            else self.agent.exit_code,
            "agent_timed_out": int(bool(self.agent and self.agent.timed_out)),
            "workspace_present": int(self.workspace_present),
            "setup_commands_passed": sum(r.ok for r in self.setup),
            "setup_commands_total": len(self.setup),
            "score_commands_passed": sum(ok for _, ok in self.score),
            "score_commands_total": len(self.score),
            "required_files_present": sum(ok for _, ok in self.files),
            "required_files_total": len(self.files),
            "forbidden_files_absent": sum(ok for _, ok in self.forbidden),
            "forbidden_files_total": len(self.forbidden),
            "content_assertions_passed": sum(ok for _, ok in self.content),
            "content_assertions_total": len(self.content),
            "memory_queries_required": e.required if e else 0,
            "memory_queries_verified": e.verified if e else 0,
            "memory_evidence_ok": int(bool(e and e.ok)),
            "token_usage_ok": int(self.tokens is not None or not self.tokens_required),
        }

    def success(self) -> bool:
        """Whether every check passed: the agent, the commands, files, content, evidence, tokens."""
        c = self.counts()
        return (
            c["agent_exit_code"] == 0
            and not c["agent_timed_out"]
            and c["workspace_present"] == 1
            and c["setup_commands_passed"] == c["setup_commands_total"]
            and c["score_commands_passed"] == c["score_commands_total"]
            and c["required_files_present"] == c["required_files_total"]
            and c["forbidden_files_absent"] == c["forbidden_files_total"]
            and c["content_assertions_passed"] == c["content_assertions_total"]
            and c["memory_evidence_ok"] == 1
            and c["token_usage_ok"] == 1
        )

    def metrics(self, success: bool | None = None) -> list[Metric]:
        """The logged metrics; ``success`` overrides :meth:`success` (a sequence's setup)."""
        c = self.counts()
        checks = [ok for _, ok in self.score + self.files + self.forbidden + self.content]
        return [
            metric("success", float(self.success() if success is None else success)),
            metric("checks_passed", sum(checks) / len(checks) if checks else None),
            metric("memory_evidence_ok", float(c["memory_evidence_ok"])),
            metric(
                "memory_queries_verified",
                c["memory_queries_verified"] / c["memory_queries_required"]
                if c["memory_queries_required"]
                else None,
            ),
            metric("token_usage_ok", float(c["token_usage_ok"])),
            metric("agent_timed_out", float(c["agent_timed_out"]), higher=False),
        ]

    def detail(self) -> dict[str, Any]:
        """Everything ``summary.json`` records of the run: counts, each check, the evidence."""
        e = self.evidence
        return {
            "counts": self.counts(),
            "success": self.success(),
            "agent": status(self.agent),
            "setup": [status(r) for r in self.setup],
            "score_commands": [{"command": c, "ok": ok} for c, ok in self.score],
            "required_files": dict(self.files),
            "forbidden_files": dict(self.forbidden),
            "required_content": [{"check": c, "ok": ok} for c, ok in self.content],
            "memory_evidence": None
            if e is None
            else {
                "ok": e.ok,
                "required": e.required,
                "verified": e.verified,
                "notes": e.notes,
                "questions": e.questions,
            },
            "token_usage": self.tokens,
            "token_usage_required": self.tokens_required,
            "notes": self.notes,
        }


def check_workspace(ws: Path, step: Any, sc: Scores) -> None:
    """Add ``step``'s file checks (required, forbidden, required content) in ``ws`` to ``sc``."""
    for rel in step.required_files:
        sc.files.append((rel, workspace_file(ws, rel) is not None))  # never via a link out
    for rel in step.forbidden_files:
        p = ws / rel
        sc.forbidden.append((rel, not (p.exists() or p.is_symlink())))
    for rc in step.required_content:
        raw = read_workspace_file(ws, rc.file)
        ok = raw is not None and rc.contains in raw.decode("utf-8", errors="replace")
        sc.content.append((f"{rc.file} contains {rc.contains!r}", ok))


def aggregate(scores: list[Scores], setup: list[CommandResult]) -> dict[str, int]:
    """A sequence's counts: summed over its steps, its flags true only when every step's is.

    The setup commands ran once, before the first step, and count once.
    """
    out: dict[str, int] = {}
    for sc in scores:
        for k, v in sc.counts().items():
            out[k] = out.get(k, 0) + v
    out["agent_exit_code"] = 0 if all(sc.counts()["agent_exit_code"] == 0 for sc in scores) else 1
    out["memory_evidence_ok"] = int(all(sc.counts()["memory_evidence_ok"] for sc in scores))
    out["workspace_present"] = int(all(sc.workspace_present for sc in scores))
    out["token_usage_ok"] = int(all(sc.counts()["token_usage_ok"] for sc in scores))
    out["setup_commands_passed"] = sum(r.ok for r in setup)
    out["setup_commands_total"] = len(setup)
    return out


def totals(it: Any) -> dict[str, int]:
    """What a dry run reports: how much would be checked."""
    parts = list(getattr(it, "steps", None) or [it])
    return {
        "steps": len(parts) if hasattr(it, "steps") else 0,
        "setup_commands": len(it.setup_commands),
        "score_commands": sum(len(p.score_commands) for p in parts),
        "required_files": sum(len(p.required_files) for p in parts),
        "forbidden_files": sum(len(p.forbidden_files) for p in parts),
        "content_assertions": sum(len(p.required_content) for p in parts),
        "memory_questions": sum(len(p.memory_questions) for p in parts),
    }
