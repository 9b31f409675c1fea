"""Connecting to a Letta server (letta-client 1.x) and choosing its model and embedding.

Shared by the ``letta`` agent and the ``letta`` store. Everything that can be wrong with
the server is found here, before a run starts, and said in one line with the fix: not
reachable, too old for letta-client 1.x, running on an unmigrated database, no model or
embedding to use.
"""

from __future__ import annotations

import os
import re
import warnings
from typing import Any

from mnemometer._registry import require
from mnemometer.envfile import quiet_libraries
from mnemometer.errors import MnemometerError
from mnemometer.services._letta_install import TESTED

DEFAULT_URL = "http://127.0.0.1:8283"
_START = "start one with `mnemometer serve letta`"


def default_url() -> str:
    """``$MNEMOMETER_LETTA_URL`` or Letta's default ``http://127.0.0.1:8283``."""
    return os.environ.get("MNEMOMETER_LETTA_URL") or DEFAULT_URL


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version)[:3])


def connect(base_url: str, token: str | None, what: str) -> tuple[Any, str]:
    """A checked ``letta_client.Letta`` and the server's version.

    Raises:
        MnemometerError: unreachable, too old (before 0.16), or an unmigrated database.
    """
    quiet_libraries()
    sdk = require("letta_client", "letta", what)
    client = sdk.Letta(
        base_url=base_url,
        api_key=token or os.environ.get("MNEMOMETER_LETTA_TOKEN") or None,
        max_retries=1,
        timeout=120.0,
    )
    try:
        version = str(client.health().version)
    except Exception as e:
        raise MnemometerError(
            f"cannot reach the Letta server at {base_url} ({type(e).__name__}: {str(e)[:120]}); "
            f"{_START} or pass --letta-url"
        ) from None
    if _version_tuple(version) < (0, 16):
        raise MnemometerError(
            f"the Letta server at {base_url} is {version}; letta-client 1.x needs 0.16 or "
            f"newer (tested: {', '.join(TESTED)}); {_START}"
        )
    if version not in TESTED:
        warnings.warn(
            f"Letta server {version} at {base_url} is untested (tested: {', '.join(TESTED)})",
            stacklevel=2,
        )
    try:
        client.agents.list(limit=1)
    except Exception as e:
        text = str(e)
        if "does not exist" in text or "UndefinedTable" in text:
            raise MnemometerError(
                f"the Letta server at {base_url} runs on an unmigrated database "
                f"({text[:120]}); apply letta's migrations (`alembic upgrade head`, see "
                f"docs/systems.md) or {_START}"
            ) from None
        raise MnemometerError(
            f"the Letta server at {base_url} failed listing agents ({type(e).__name__}: "
            f"{text[:160]})"
        ) from None
    return client, version


def llm_kwargs(client: Any, model: str | None, llm: Any, context_window: int) -> dict[str, Any]:
    """How agents get their LLM: a handle, an explicit endpoint, or the server's only one."""
    if model:
        return {"model": model}
    if llm is not None and llm.model:  # a run's endpoint may name no model
        return {
            "llm_config": {
                "model": llm.model,
                "model_endpoint_type": "openai",
                "model_endpoint": llm.base_url,
                "context_window": int(context_window),
            }
        }
    handles = [
        str(m.handle)
        for m in client.models.list()
        if m.handle and not m.handle.startswith("letta/")
    ]
    if len(handles) == 1:
        return {"model": handles[0]}
    raise MnemometerError(
        "--agent letta: choose the model with -A model=HANDLE "
        f"({', '.join(handles[:8]) or 'the server offers none'}) or pass --llm-base-url "
        "and --llm-model"
    )


def embedding_kwargs(
    client: Any,
    embedding: str | None,
    endpoint: str | None,
    model: str,
    dim: int,
) -> dict[str, Any]:
    """How agents get embeddings: a handle, an explicit endpoint, or the server's default."""
    if embedding:
        return {"embedding": embedding}
    if endpoint:
        return {
            "embedding_config": {
                "embedding_model": model,
                "embedding_endpoint_type": "openai",
                "embedding_endpoint": endpoint,
                "embedding_dim": int(dim),
                "embedding_chunk_size": 300,
            }
        }
    handles = [
        str(m.handle)
        for m in client.models.embeddings.list()
        if m.handle and not m.handle.startswith("letta/")
    ]
    preferred = "openai/text-embedding-3-small"
    if preferred in handles or len(handles) == 1:
        return {"embedding": preferred if preferred in handles else handles[0]}
    raise MnemometerError(
        "letta: choose the embedding with -A embedding=HANDLE "
        f"({', '.join(handles[:8]) or 'the server offers none'}) or -A embedding_endpoint=URL"
    )


def text_of(messages: Any) -> list[str]:
    """The assistant messages' texts in a Letta response."""
    out = []
    for m in messages:
        if getattr(m, "message_type", "") == "assistant_message":
            content = m.content
            if isinstance(content, list):
                content = " ".join(str(getattr(p, "text", "")) for p in content)
            out.append(str(content))
    return out
