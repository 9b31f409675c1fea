"""``mnemometer run`` options for agent runs (``--agent``, the LLM endpoint, scenarios).

Kept apart from ``run.py`` so the verb stays thin: :func:`agent_options` adds the options,
:func:`agent_run_kwargs` turns them into keyword arguments for :func:`mnemometer.run`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from mnemometer.cli._common import parse_options
from mnemometer.errors import MnemometerError

_OPTIONS: list[Callable[[Any], Any]] = [
    click.option(
        "--agent",
        "-a",
        help="Agent name (rag, mem0, letta, http); drives a "
        "conversation suite such as `scenarios`.",
    ),
    click.option(
        "--agent-option",
        "-A",
        "agent_opts",
        multiple=True,
        metavar="KEY=VALUE",
        help="Option for the agent; repeatable.",
    ),
    click.option(
        "--llm-base-url",
        help="OpenAI-compatible endpoint, e.g. "
        "http://127.0.0.1:8080/v1 (env MNEMOMETER_LLM_BASE_URL).",
    ),
    click.option("--llm-model", help="Model name at that endpoint (env MNEMOMETER_LLM_MODEL)."),
    click.option(
        "--llm-api-key",
        help="API key, if the endpoint wants one "
        "(env MNEMOMETER_LLM_API_KEY; never written to the run log).",
    ),
    click.option(
        "--llm-config",
        type=click.Path(path_type=Path),
        help="TOML file with an [llm] table (base_url, model, api_key, ...).",
    ),
    click.option(
        "--llm-cache",
        type=click.Path(path_type=Path),
        help="Directory for the LLM disk cache (keyed on the full request).",
    ),
    click.option(
        "--noise",
        "noise",
        multiple=True,
        type=float,
        metavar="RATIO",
        help="Perturb user turns (seeded); repeat for several levels (scenarios).",
    ),
    click.option(
        "--scenario",
        "scenario_ids",
        multiple=True,
        metavar="ID",
        help="Run only this scenario; repeatable (scenarios).",
    ),
    click.option("--letta-url", help="Letta server URL for --agent letta."),
    click.option(
        "--config",
        "agent_config",
        type=click.Path(path_type=Path),
        help="Agent config file (TOML), e.g. for --agent http.",
    ),
]


def agent_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add the agent-run options to a click command (and ``--repeat`` unless present)."""
    for opt in reversed(_OPTIONS):
        f = opt(f)
    names = {p.name for p in getattr(f, "__click_params__", [])}
    if "repeat" not in names:
        f = click.option(
            "--repeat",
            type=int,
            default=None,
            help="Runs of every scenario (mean and 95% CI per scenario).",
        )(f)
    return f


def agent_run_kwargs(suite_options: dict[str, Any], **kw: Any) -> dict[str, Any]:
    """Keyword arguments for :func:`mnemometer.run` from the agent options (may be empty).

    Suite-level flags (``--noise``, ``--repeat``, ``--scenario``) go into ``suite_options``.
    """
    if kw.get("noise"):
        suite_options["noise"] = list(kw["noise"])
    if kw.get("scenario_ids"):
        suite_options["scenarios"] = list(kw["scenario_ids"])
    agent = kw.get("agent")
    if kw.get("repeat") is not None and agent is not None:
        suite_options["repeat"] = kw["repeat"]
    if agent is None:
        used = [f"--{k.replace('_', '-')}" for k in ("letta_url", "agent_config") if kw.get(k)]
        if kw.get("agent_opts"):
            used.append("--agent-option")
        if kw.get("repeat") is not None:
            used.append("--repeat")  # suite directories take it before this point
        if used:
            raise MnemometerError(f"{used[0]} needs --agent")
        return {"llm": _llm(kw)} if _llm_flags(kw) else {}
    options = parse_options(kw.get("agent_opts") or (), "--agent-option")
    if kw.get("letta_url"):
        options["base_url"] = kw["letta_url"]
    if kw.get("agent_config"):
        options["config"] = str(kw["agent_config"])
    llm = _llm(kw) if _llm_flags(kw) or agent in ("rag", "mem0") else None
    return {"agent": agent, "agent_options": options, "llm": llm}


def _llm_flags(kw: dict[str, Any]) -> bool:
    return any(
        kw.get(k) for k in ("llm_base_url", "llm_model", "llm_api_key", "llm_config", "llm_cache")
    )


def _llm(kw: dict[str, Any]) -> Any:
    from mnemometer.llm import resolve_settings

    return resolve_settings(
        kw.get("llm_base_url"),
        kw.get("llm_model"),
        kw.get("llm_api_key"),
        config_file=kw.get("llm_config"),
        cache_dir=kw.get("llm_cache"),
    )
