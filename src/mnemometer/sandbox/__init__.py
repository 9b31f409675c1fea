"""Where suite-provided commands and agent CLIs run, and what they leave behind.

Nothing here knows a suite: a :class:`Sandbox` rewrites an argv for bubblewrap (or a
private ``HOME`` without it), :func:`run_command` runs it with a scrubbed environment
(:func:`task_env`), a time limit, capped output and no stragglers, :func:`check_fixture`
and :func:`copy_fixture` keep a workspace inside its suite, :func:`run_agent` drives the
Codex and Claude Code CLIs, and the memory helper's artifacts become :class:`Evidence`.
The build item types (``mnemometer.suites.tasks``) put these together.
"""

from mnemometer.sandbox._agent_cli import run_agent
from mnemometer.sandbox._confine import task_env
from mnemometer.sandbox._evidence import Evidence
from mnemometer.sandbox._sandbox import (
    AGENT_HOMES,
    HOME_FILES,
    ISOLATIONS,
    SCRIPT_SUFFIXES,
    Sandbox,
    SandboxError,
    bwrap_problem,
    resolve_isolation,
)
from mnemometer.sandbox._shell import (
    CommandError,
    CommandResult,
    render,
    run_command,
    split_template,
)
from mnemometer.sandbox._workspace import (
    EVALS_DIR,
    FixtureError,
    bad_relative,
    check_fixture,
    copy_fixture,
    evals_root,
    fresh_dir,
    read_workspace_file,
    workspace_file,
)

__all__ = [
    "AGENT_HOMES",
    "EVALS_DIR",
    "HOME_FILES",
    "ISOLATIONS",
    "SCRIPT_SUFFIXES",
    "CommandError",
    "CommandResult",
    "Evidence",
    "FixtureError",
    "Sandbox",
    "SandboxError",
    "bad_relative",
    "bwrap_problem",
    "check_fixture",
    "copy_fixture",
    "evals_root",
    "fresh_dir",
    "render",
    "read_workspace_file",
    "resolve_isolation",
    "run_agent",
    "run_command",
    "split_template",
    "task_env",
    "workspace_file",
]
