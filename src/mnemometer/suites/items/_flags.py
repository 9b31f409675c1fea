"""The ``run`` flags of suite directories, and where the ones only the user may give came from.

``--allow-shell`` (consent to run the suite's code), ``--sandbox``, ``--pass-env`` and
the other sandbox flags are :attr:`~mnemometer.suites.Flag.user_only`: a suite directory
may hold a ``.env`` the command line loads, so they are taken from the command line (or
the API) only, and the run header records where each came from. A resume takes them from
its own command line again (a run header is a file anyone may have written), save a
recorded ``--sandbox bwrap``, which only narrows.

``suite.toml`` itself is a file inside the suite too: what it sets for its commands
(``pass_env``, ``[sandbox]`` ``network`` and ``agent_home``) is a request these flags
must grant before any command runs (:func:`check_requests`).
"""

from __future__ import annotations

import fnmatch
import shlex
from typing import Any

from mnemometer.errors import ConsentError
from mnemometer.sandbox import HOME_FILES
from mnemometer.sandbox._confine import MINIMAL_ENV
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
        "environment, e.g. an agent's API key; repeatable. The suite's pass_env only asks: "
        "each name it lists must be given here. Command line only.",
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
        "Bootstrap files (credentials) for the sandbox's private HOME (default: none; the "
        "suite's agent_home only asks for them). Command line only.",
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
        "Keep the network in the sandbox (a suite's network = true only asks for it; "
        "recorded). Command line only.",
        "bool",
        user_only=True,
    ),
)
"""The flags ``run`` declares for suite directories (the ``items`` suite)."""


def origins_of(
    given: dict[str, str] | None, suite: frozenset[str] = frozenset(), **set_: bool
) -> dict[str, str]:
    """Where each user-only option came from: as the command line says, else the API.

    ``suite`` names the ones ``suite.toml`` asks for too (its ``pass_env``, its
    ``[sandbox]`` ``network`` and ``agent_home``): recorded as ``requested by
    suite.toml`` after where the grant came from (``command line, requested by
    suite.toml``). A resume passes its caller's, never the header's record.
    """
    out = {}
    for k, v in set_.items():
        base = given.get(k, "default") if given is not None else "API argument" if v else "default"
        if k in suite and not base.endswith("suite.toml"):
            base = f"{base}, requested by suite.toml"
        out[k] = base
    return out


def set_by_manifest(manifest: Any, agent_home: str | None) -> frozenset[str]:
    """The user-only options ``suite.toml`` asks for: its ``pass_env`` and ``[sandbox]``.

    Its ``agent_home`` counts only while ``--agent-home`` does not replace it with another.
    """
    home = manifest.sandbox.agent_home
    by_suite = {
        "pass_env": bool(manifest.pass_env),
        "sandbox_network": manifest.sandbox.network,
        "agent_home": home != "none" and agent_home in (None, home),
    }
    return frozenset(k for k, v in by_suite.items() if v)


def covers(user: str, asked: str) -> bool:
    """Whether the user's ``--pass-env`` pattern ``user`` lets through all ``asked`` names.

    The same name or pattern, a pattern matching the name, or ``PREFIX*`` over a pattern
    starting with ``PREFIX`` (so only ``*`` covers ``*``). Any other pair of patterns is
    not compared: the user names the suite's pattern itself.
    """
    if user == asked:
        return True
    if not any(c in asked for c in "*?["):
        return fnmatch.fnmatchcase(asked, user)
    prefix = user[:-1]
    return user.endswith("*") and not any(c in prefix for c in "*?[") and asked.startswith(prefix)


def requests(
    manifest: Any,
    pass_env: list[str] | tuple[str, ...] = (),
    isolation: str = "auto",
    agent_home: str | None = None,
    sandbox_network: bool = False,
) -> str | None:
    """What ``suite.toml`` asks for its commands that these grants leave out, and the flags.

    ``"to receive X and the network: run with --pass-env X --sandbox-network"``, or
    ``None`` when everything asked for is granted (see :func:`check_requests`).
    """
    granted = (*MINIMAL_ENV, *pass_env)  # the minimal environment is every command's
    asked = [p for p in manifest.pass_env if not any(covers(u, p) for u in granted)]
    what = list(asked)
    flags = [f"--pass-env {shlex.quote(p)}" for p in asked]
    if manifest.sandbox.network and not sandbox_network and isolation != "none":
        what.append("the network")
        flags.append("--sandbox-network")
    home = manifest.sandbox.agent_home
    if home != "none" and agent_home is None:
        files = ", ".join(HOME_FILES[home][2])
        what.append(f"{home}'s bootstrap files in their HOME ({files})")
        flags.append(f"--agent-home {home}")
    if not what:
        return None
    listed = what[0] if len(what) == 1 else f"{', '.join(what[:-1])} and {what[-1]}"
    return f"to receive {listed}: run with {' '.join(flags)}"


def check_requests(
    manifest: Any,
    where: str,
    pass_env: list[str] | tuple[str, ...],
    isolation: str,
    agent_home: str | None,
    sandbox_network: bool,
) -> None:
    """Refuse the run unless the user granted what ``suite.toml`` asks for its commands.

    The manifest's ``pass_env`` (each name or pattern covered by one of the user's, see
    :func:`covers`; the minimal environment needs no grant), ``[sandbox] network = true``
    (``--sandbox-network``, or ``--sandbox none``, which keeps the host's network anyway)
    and ``agent_home`` (``--agent-home`` naming it; another value replaces it) are
    requests: a suite directory is not the user. Called only when commands will run.

    Raises:
        ConsentError: one line naming ``where`` (the manifest), what it asks for and the
            flags that grant it.
    """
    left = requests(manifest, pass_env, isolation, agent_home, sandbox_network)
    if left is not None:
        raise ConsentError(f"{where} asks for its commands {left} to grant it")
