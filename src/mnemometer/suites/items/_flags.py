"""The ``run`` flags of suite directories, and where the ones only the user may give came from.

``--allow-shell`` (consent to run the suite's code), ``--sandbox``, ``--pass-env`` and
the other sandbox flags are :attr:`~mnemometer.suites.Flag.user_only`: a suite directory
may hold a ``.env`` the command line loads, so they are taken from the command line (or
the API) only, and the run header records where each came from. A resume takes them from
its own command line again (a run header is a file anyone may have written), save a
recorded ``--sandbox bwrap``, which only narrows.
"""

from __future__ import annotations

from typing import Any

from mnemometer.suites._base import Flag

FLAGS: tuple[Flag, ...] = (
    Flag(
        "--profile",
        "profile",
        "offline (deterministic, no provider calls) or llm "
        "(default: the manifest's default_profile).",
        "choice:offline,llm",
    ),
    Flag("--memories", "memories", "Seed memories (overrides the manifest's).", "path"),
    Flag(
        "--skip-unsupported",
        "skip_unsupported",
        "Skip shell items instead of refusing the suite (recorded).",
        "bool",
    ),
    Flag(
        "--allow-shell",
        "allow_shell",
        "Run items that execute the suite's commands "
        "(command_task, agent builds). Suites are code: read them first. "
        "Command line only (never from the environment or a .env file).",
        "bool",
        user_only=True,
    ),
    Flag("--dry-run", "dry_run", "Validate shell items and execute nothing.", "bool"),
    Flag(
        "--pass-env",
        "pass_env",
        "Environment variable (name or * pattern) shell items receive beyond the minimal "
        "environment and the suite's pass_env, e.g. an agent's API key; repeatable. "
        "Command line only.",
        multiple=True,
        user_only=True,
    ),
    Flag(
        "--sandbox",
        "isolation",
        "Isolation of shell items: auto (bubblewrap where it works), bwrap or none. "
        "Command line only.",
        "choice:auto,bwrap,none",
        user_only=True,
        narrows=("bwrap",),  # a resume keeps a recorded bwrap: it only narrows
    ),
    Flag(
        "--agent-home",
        "agent_home",
        "Bootstrap files for the sandbox's private HOME (default: the suite's). Command line only.",
        "choice:none,codex,claude",
        user_only=True,
    ),
    Flag(
        "--sandbox-ro",
        "sandbox_ro",
        "A path the sandbox shows read-only (e.g. an agent CLI installed by npm). "
        "Command line only.",
        "path",
        multiple=True,
        user_only=True,
    ),
    Flag(
        "--sandbox-network",
        "sandbox_network",
        "Keep the network in the sandbox though the suite does not allow it (recorded). "
        "Command line only.",
        "bool",
        user_only=True,
    ),
)
"""The flags ``run`` declares for suite directories (the ``items`` suite)."""


def origins_of(
    given: dict[str, str] | None, suite: frozenset[str] = frozenset(), **set_: bool
) -> dict[str, str]:
    """Where each user-only option came from: as the command line says, else the API.

    ``suite`` names the ones ``suite.toml`` also sets (its ``pass_env``, its ``[sandbox]``
    ``network`` and ``agent_home``): recorded as ``suite.toml``, or ``command line and
    suite.toml`` when both give one. A resume passes its caller's, never the header's record.
    """
    out = {}
    for k, v in set_.items():
        base = given.get(k, "default") if given is not None else "API argument" if v else "default"
        if k in suite and not base.endswith("suite.toml"):
            base = "suite.toml" if base == "default" else f"{base} and suite.toml"
        out[k] = base
    return out


def set_by_manifest(manifest: Any, agent_home: str | None) -> frozenset[str]:
    """The user-only options ``suite.toml`` sets too: its ``pass_env`` and ``[sandbox]``.

    Its ``agent_home`` counts only while ``--agent-home`` does not replace it.
    """
    by_suite = {
        "pass_env": bool(manifest.pass_env),
        "sandbox_network": manifest.sandbox.network,
        "agent_home": manifest.sandbox.agent_home != "none" and agent_home is None,
    }
    return frozenset(k for k, v in by_suite.items() if v)
