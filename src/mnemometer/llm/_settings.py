"""Where and how to reach an LLM endpoint: settings from arguments, environment and file.

Arguments win over the environment (``MNEMOMETER_LLM_BASE_URL``, ``MNEMOMETER_LLM_MODEL``,
``MNEMOMETER_LLM_API_KEY``, ``MNEMOMETER_LLM_CACHE``, ...), which wins over a config file's
``[llm]`` table (read through :func:`mnemometer.config.load_model`). The settings are what
a run records (redacted) and hands on; the client in :mod:`mnemometer.llm` is what talks.

A run resolves its endpoint once, where it enters (the command line, or ``run``,
``resume``, ``run_experiment``, ``run_suite`` and ``sweep``), each setting in this order:

1. a flag (``--llm-base-url``, ``--llm-model``, ``--llm-api-key``, ``--llm-timeout``,
   ``--llm-cache``), or from Python ``RunSettings(llm=...)``;
2. the environment, ``MNEMOMETER_LLM_*``, including what the command line loaded from the
   nearest ``.env`` (a variable already set wins over the file);
3. the ``[llm]`` table of ``--llm-config FILE``.

A resume given no flag asks the endpoint the run recorded (its key from the environment)
before the environment's. The result, ``None`` when no base URL is configured anywhere, is
handed down: suites get it as ``RunContext.llm``, stores and agents as the ``llm`` they are
built with. Nothing below the runner reads the environment for it: a part that needs an
endpoint takes it with :func:`require_settings`, which fails with one line naming the
flag and the variable. A store's or suite's own explicit options (``-S base_url=... -S
llm_model=...``, a reranker's ``model``, the scenarios' ``embedding_model``) win over the
run's endpoint, for that part alone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import Field

from mnemometer import _env
from mnemometer.config import StrictModel, load_model
from mnemometer.errors import MnemometerError
from mnemometer.llm._providers import no_endpoint, provider_of

ENV_PREFIX = "MNEMOMETER_LLM_"
NO_ENDPOINT = (
    "no LLM endpoint: pass --llm-base-url URL or set MNEMOMETER_LLM_BASE_URL "
    "(start a local one with `mnemometer serve-llm`)"
)
NO_MODEL = "no LLM model: pass --llm-model NAME or set MNEMOMETER_LLM_MODEL"


class LLMError(MnemometerError):
    """The LLM endpoint is unreachable, rejected the request, or answered nonsense."""


@dataclass(frozen=True, slots=True)
class LLMSettings:
    """Where and how to reach the endpoint (resolved by :meth:`mnemometer.llm.LLMClient.from_settings`)."""

    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 60.0
    max_retries: int = 3
    cache_dir: Path | None = None

    def __post_init__(self) -> None:
        _env.remember_secret(self.api_key)  # scrubbed from anything a run writes

    @property
    def provider(self) -> str | None:
        """The LiteLLM provider the model names (``anthropic/...``); ``None``: OpenAI-compatible."""
        return provider_of(self.model)

    def redacted(self) -> dict[str, Any]:
        """Settings for a run header: never the key; the provider when the model names one."""
        out: dict[str, Any] = {
            "base_url": self.base_url,
            "model": self.model,
            "api_key": "***" if self.api_key else None,
            "timeout": self.timeout,
            "max_retries": self.max_retries,
        }
        if self.provider is not None:  # an empty base URL is then the provider's own
            out["provider"] = self.provider
        return out


class LLMConfig(StrictModel):
    """The ``[llm]`` table of an LLM config file; every key is optional."""

    base_url: str | None = None
    """Endpoint root including ``/v1``."""
    model: str | None = None
    """Model name sent with every request."""
    api_key: str | None = None
    """Bearer token, if the server wants one."""
    timeout: float | None = Field(default=None, gt=0)
    """Seconds allowed per HTTP attempt."""
    max_retries: int | None = Field(default=None, ge=0)
    """Extra attempts after a transient failure."""
    cache_dir: str | None = None
    """Directory of the disk cache."""


def resolve_settings(*args: Any, **kwargs: Any) -> LLMSettings:
    """Merge arguments, environment and config file (in that order of precedence).

    Takes :func:`find_settings`' arguments.

    Raises:
        LLMError: no base URL or model anywhere, or an unreadable or invalid config file.
    """
    found = find_settings(*args, **kwargs)
    if found is None:  # say what a model with a misspelt provider lacks, not just a URL
        model = kwargs.get("model", args[1] if len(args) > 1 else None)
        raise LLMError(no_endpoint(model or os.environ.get(ENV_PREFIX + "MODEL"), NO_ENDPOINT))
    return require_settings(found)


def find_settings(
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    *,
    config_file: str | Path | None = None,
    timeout: float | None = None,
    max_retries: int | None = None,
    cache_dir: str | Path | None = None,
) -> LLMSettings | None:
    """Like :func:`resolve_settings`, but ``None`` when no base URL is configured anywhere.

    What a run resolves: a run that asks no model needs no endpoint. The model may be left
    empty (``""``) for a component that names its own (an embedding model, a reranker's).

    Raises:
        LLMError: an unreadable or invalid config file, or a bad timeout or retry count.
    """
    file_cfg: dict[str, Any] = {}
    if config_file is not None:
        try:
            cfg = load_model(config_file, LLMConfig, table="llm", what="LLM config")
        except MnemometerError as e:
            raise LLMError(str(e)) from None
        file_cfg = cfg.model_dump(exclude_none=True)

    def pick(arg: Any, key: str) -> Any:
        if arg is not None:
            return arg
        env = os.environ.get(ENV_PREFIX + key.upper())
        return env if env not in (None, "") else file_cfg.get(key)

    def number(arg: Any, key: str, kind: type[float] | type[int], default: float) -> Any:
        value = pick(arg, key)
        if value is None:
            return kind(default)
        try:
            n = kind(value)
        except (TypeError, ValueError):
            n = None
        if n is None or n < 0 or (n == 0 and key == "timeout"):
            least = "a positive number" if key == "timeout" else "a whole number >= 0"
            raise LLMError(f"LLM {key} must be {least}, got {value!r}")
        return n

    url = pick(base_url, "base_url")
    name = str(pick(model, "model") or "")
    if not url and provider_of(name) is None:  # a provider's model needs no base URL
        return None
    cache = pick(cache_dir, "cache_dir") or os.environ.get(ENV_PREFIX + "CACHE")
    key = pick(api_key, "api_key") or None
    if api_key is None and provider_of(name) is not None and _openai_key(key):
        key = None  # never send OpenAI's key to another provider: LiteLLM reads its own
    if base_url is None and api_key is None and key:
        _check_key_destination(str(url or ""))
    return LLMSettings(
        base_url=str(url or "").rstrip("/"),
        model=name,
        api_key=key,
        timeout=number(timeout, "timeout", float, 60.0),
        max_retries=number(max_retries, "max_retries", int, 3),
        cache_dir=Path(cache) if cache else None,
    )


def _check_key_destination(url: str) -> None:
    """Refuse to send the environment's API key to an endpoint a ``.env`` file chose.

    The command line loads the nearest ``.env``, which may sit in a directory someone else
    wrote (a cloned suite, a shared folder): its ``MNEMOMETER_LLM_BASE_URL`` would receive
    the key the user keeps in their own environment. A key and an endpoint from the same
    file, or a loopback endpoint, are the user's own choice.
    """
    from mnemometer.envfile import dotenv_of

    source = dotenv_of(ENV_PREFIX + "BASE_URL")
    if source is None or not url or _is_loopback(url):
        return
    if dotenv_of(ENV_PREFIX + "API_KEY") == source:
        return
    raise LLMError(
        f"the LLM endpoint {url} comes from {source}, but the API key comes from your "
        "environment: mnemometer does not send your key to an endpoint a .env file chose. "
        "Pass --llm-base-url, set MNEMOMETER_LLM_BASE_URL yourself, or put the key in that "
        "file too"
    )


def _is_loopback(url: str) -> bool:
    """True when ``url``'s host is this machine (127.0.0.0/8, ::1, localhost)."""
    import ipaddress
    from urllib.parse import urlsplit

    host = (urlsplit(url if "//" in url else "//" + url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _openai_key(key: str | None) -> bool:
    """True when ``key`` is the value of ``OPENAI_API_KEY`` (or another alias of ours).

    The command line fills ``MNEMOMETER_LLM_API_KEY`` from ``OPENAI_API_KEY``
    (:data:`mnemometer.envfile.ALIASES`); that key belongs to an OpenAI-compatible endpoint,
    not to ``anthropic/...``.
    """
    from mnemometer.envfile import ALIASES

    return bool(key) and any(os.environ.get(a) == key for a in ALIASES[ENV_PREFIX + "API_KEY"])


def require_settings(
    llm: LLMSettings | None,
    *,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    timeout: float | None = None,
) -> LLMSettings:
    """The run's endpoint with a component's own options over it; never the environment.

    Args:
        llm: the run's settings (``None``: none configured).
        base_url: the component's own endpoint (a store's ``-S base_url=``).
        model: the component's own model (``-S llm_model=``, an embedding model).
        api_key: the component's own key.
        timeout: the component's own timeout per request.

    Raises:
        LLMError: no endpoint or no model, naming the flag and the variable to set.
    """
    own = {"base_url": base_url, "model": model, "api_key": api_key, "timeout": timeout}
    given = {k: v for k, v in own.items() if v not in (None, "")}
    if llm is None:
        if not given.get("base_url") and provider_of(model) is None:
            raise LLMError(no_endpoint(model, NO_ENDPOINT))
        llm = LLMSettings(base_url="", model="")
    merged = replace(llm, **given)
    if not merged.model:
        raise LLMError(NO_MODEL)
    if not merged.base_url and merged.provider is None:  # a provider's endpoint, not its model
        raise LLMError(no_endpoint(merged.model, NO_ENDPOINT))
    return replace(merged, base_url=merged.base_url.rstrip("/"))
