"""``.env`` files and the seeds' environment variable names.

The command line loads the nearest ``.env`` (the current directory, then its parents) once at
start-up with python-dotenv, the way the seed benchmarks did. A variable already set in the
environment always wins over the file, and ``MNEMOMETER_DOTENV=0`` turns loading off.

The seeds read their own names (``OPENAI_API_KEY``, ``LETTA_BASE_URL``, ...). Each is accepted
as an alias of a ``MNEMOMETER_*`` name: it fills the canonical variable only when that one is
unset, so an explicit ``MNEMOMETER_*`` setting always wins. Values come from the environment
and nothing here writes them anywhere: run headers record a fingerprint with secrets removed,
never the environment.

:func:`quiet_libraries` sets, once and before any memory system's library is imported, the
switches that keep those libraries from reporting to their vendors (:data:`QUIET`): the
command line, every run and each adapter call it; a value the user set is kept.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from pathlib import Path

ALIASES: dict[str, tuple[str, ...]] = {
    "MNEMOMETER_LLM_API_KEY": ("OPENAI_API_KEY", "DEEPSEEK_API_KEY"),
    "MNEMOMETER_LLM_MODEL": ("BENCH_DEFAULT_MODEL",),
    "MNEMOMETER_LETTA_URL": ("LETTA_BASE_URL",),
    "MNEMOMETER_LETTA_TOKEN": ("LETTA_API_KEY",),
    "MNEMOMETER_MEM0_API_KEY": ("MEM0_API_KEY",),
    "MNEMOMETER_MEM0_BASE_URL": ("MEM0_BASE_URL",),
}
"""Canonical name -> the seeds' names for it, first match wins."""


QUIET: dict[str, str] = {
    "DO_NOT_TRACK": "1",  # the cross-vendor switch (consoledonottrack.com)
    "ANONYMIZED_TELEMETRY": "False",  # chromadb (posthog)
    "MEM0_TELEMETRY": "False",  # mem0 (posthog)
    "GRAPHITI_TELEMETRY_ENABLED": "false",  # graphiti-core (posthog)
    "TELEMETRY_DISABLED": "1",  # cognee
    "COGNEE_TELEMETRY_DISABLED": "1",
    "POSTHOG_DISABLED": "1",
    "LANGSMITH_TRACING": "false",  # langchain / langgraph (langmem)
    "LANGCHAIN_TRACING_V2": "false",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # litellm fetches its price list at import
    "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",  # ... and Anthropic's beta headers
    "LITELLM_OFFLINE_MODE": "true",  # ... and whatever else it would fetch itself
    "LITELLM_TELEMETRY": "False",
    "HF_HUB_OFFLINE": "1",  # huggingface_hub, transformers, sentence-transformers
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "RAY_USAGE_STATS_ENABLED": "0",  # ray
    # Ray's dashboard still sends a "usage stats are disabled" report to its vendor unless
    # the cluster came from ray.init(); sent to a closed port on loopback instead.
    "RAY_USAGE_STATS_REPORT_URL": "http://127.0.0.1:9/",
    "SCARF_NO_ANALYTICS": "true",
}
"""The switches that keep memory systems' libraries from reporting to their vendors or
fetching models and price lists: evaluating a system never phones home."""


def quiet_libraries() -> None:
    """Set every :data:`QUIET` switch a user has not set (before the libraries import).

    Called by the CLI, by every run and by each adapter before it imports its library;
    a value the user set (in the environment or ``.env``) is kept.
    """
    for key, value in QUIET.items():
        os.environ.setdefault(key, value)


def load_dotenv_file(start: str | os.PathLike[str] | None = None) -> Path | None:
    """Load the nearest ``.env`` into ``os.environ`` without overriding what is set.

    Args:
        start: directory to search from (default: the current directory), then its parents.

    Returns:
        The file loaded, or ``None`` (no file, or ``MNEMOMETER_DOTENV=0``).
    """
    if os.environ.get("MNEMOMETER_DOTENV", "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    here = Path(start or Path.cwd()).resolve()
    found = next((d / ".env" for d in (here, *here.parents) if (d / ".env").is_file()), None)
    if found is None:
        return None
    import dotenv  # a core dependency; imported only when a file exists

    before = set(os.environ)
    dotenv.load_dotenv(found, override=False)
    _FROM_FILE.update(dict.fromkeys(set(os.environ) - before, found))
    return found


_FROM_FILE: dict[str, Path] = {}
"""Variable → the ``.env`` file that set it (this process)."""


def dotenv_of(name: str) -> Path | None:
    """The ``.env`` file that set the variable ``name`` (or the alias it was filled from)."""
    return _FROM_FILE.get(name)


def where_set(name: str) -> str:
    """Where the variable ``name`` came from, for a message: a ``.env`` file or not."""
    found = _FROM_FILE.get(name)
    return f"set in {found}" if found is not None else "set in the environment"


def apply_aliases(environ: MutableMapping[str, str] | None = None) -> dict[str, str]:
    """Fill unset canonical variables from the seeds' names.

    Args:
        environ: the mapping to update (default ``os.environ``).

    Returns:
        canonical name -> the alias it was taken from (names only, never values).
    """
    env = os.environ if environ is None else environ
    used: dict[str, str] = {}
    for canonical, aliases in ALIASES.items():
        if env.get(canonical):
            continue
        alias = next((a for a in aliases if env.get(a)), None)
        if alias is not None:
            env[canonical] = env[alias]
            used[canonical] = alias
            if env is os.environ and alias in _FROM_FILE:
                _FROM_FILE[canonical] = _FROM_FILE[alias]
    return used


def prepare_environment(start: str | os.PathLike[str] | None = None) -> Path | None:
    """Load ``.env`` (see :func:`load_dotenv_file`), then apply :data:`ALIASES`."""
    found = load_dotenv_file(start)
    apply_aliases()
    return found
