"""``http``: any memory service over HTTP, described by a small JSON or TOML file.

Example (``memsvc.toml``)::

    base_url = "http://127.0.0.1:8000"
    timeout = 10                      # seconds per request
    retries = 0                       # extra attempts after a transient failure (optional)
    auth_env = "MEMSVC_TOKEN"         # bearer token read from this variable (optional)

    [reset]
    method = "POST"
    path = "/reset"

    [store]
    method = "POST"
    path = "/memories"
    body = { text = "{text}", id = "{memory_id}", created = "{timestamp}" }

    [search]
    method = "POST"
    path = "/search"
    body = { query = "{query}", limit = "{top_k}" }
    results = "results"               # where the hit list is in the reply (dotted path)
    id = "metadata.memory_id"         # where each hit's memory id is (dotted path)
    score = "score"                   # optional
    text = "memory"                   # optional

A string that is exactly ``"{name}"`` is replaced by the value itself (so ``{top_k}`` stays a
number); other strings have each ``{name}`` substituted. Names: ``text``, ``memory_id``,
``timestamp`` (store), ``query``, ``top_k`` (search). ``GET`` requests send the body's
fields as query parameters. Requests go through :class:`mnemometer.http.HttpClient`
(one pool of connections shared by the run's threads). Every request has a timeout; an HTTP
error, a timeout or a reply that is not the JSON the mapping describes raises an error
naming the endpoint, which the runner records against the item (a search) or the memory
(a store call: the run goes on, see ``docs/stores.md``).

A write that is retried (``retries``) may already have been applied: every store call
carries an ``Idempotency-Key`` header (``idempotency_header``), the same on its retries and
new for each write of each ingest, so a service that honours it applies the write once; a
service that stores by the memory id it is sent (``id = "{memory_id}"``) is idempotent
anyway. The retries are counted (:meth:`HttpStore.write_retries`) and reported with what
storing cost.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import urllib.parse
import uuid
from typing import Any, Literal

from pydantic import Field

from mnemometer.config import StrictModel, load_model
from mnemometer.errors import MnemometerError
from mnemometer.http import HttpClient
from mnemometer.stores._protocol import Hit
from mnemometer.stores._ties import DEFAULT_TIE_SEED, check_seed, sort_rows

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


class Endpoint(StrictModel):
    """One call the store makes."""

    method: Literal["GET", "POST", "PUT", "DELETE", "PATCH"] = "POST"
    """HTTP method."""
    path: str
    """Path appended to ``base_url``; may hold placeholders."""
    body: dict[str, Any] | None = None
    """JSON body template (query parameters for ``GET``)."""


class SearchEndpoint(Endpoint):
    """The search call and where the hits are in its reply."""

    results: str = ""
    """Dotted path to the list of hits in the reply (empty: the reply is the list)."""
    id: str = "id"
    """Dotted path to a hit's memory id."""
    score: str | None = "score"
    """Dotted path to a hit's score (optional)."""
    text: str | None = None
    """Dotted path to a hit's text (optional)."""


class HttpConfig(StrictModel):
    """How to talk to one memory service."""

    base_url: str
    """Service root, e.g. ``http://127.0.0.1:8000``."""
    timeout: float = Field(10.0, gt=0)
    """Seconds allowed per request."""
    retries: int = Field(0, ge=0)
    """Extra attempts after a transient failure (refused or dropped connection, timeout,
    408/409/425/429/5xx). Off by default: a store call that timed out may have been applied,
    and sending it again stores a memory twice unless the service honours the idempotency
    key or stores by memory id. Retries are counted and reported."""
    backoff: float = Field(0.5, ge=0)
    """Seconds before the first retry; each wait doubles (with jitter), ``Retry-After`` wins."""
    auth_env: str | None = None
    """Environment variable holding a bearer token (never written to the run log)."""
    auth_header: str = "Authorization"
    """Header that carries the token."""
    auth_scheme: str = "Bearer"
    """Prefix of the header value (empty for a bare token)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra headers sent with every request."""
    idempotency_header: str = "Idempotency-Key"
    """Header of each store call carrying a key unique to that write and the same on its
    retries (empty: none is sent)."""
    reset: Endpoint | None = None
    """Forget everything (optional: without it, ``reset`` is a no-op)."""
    store: Endpoint
    """Store one memory."""
    search: SearchEndpoint
    """Search."""


def load_config(path: str | os.PathLike[str]) -> HttpConfig:
    """Read and validate an HTTP store file (``.toml`` or JSON).

    Raises:
        MnemometerError: missing file, bad syntax or a field that does not fit.
    """
    return load_model(path, HttpConfig, what="http store config")


def fill(template: Any, values: dict[str, Any]) -> Any:
    """Substitute ``{name}`` placeholders in a JSON template (see the module docstring)."""
    if isinstance(template, str):
        whole = _PLACEHOLDER.fullmatch(template)
        if whole and whole.group(1) in values:
            return values[whole.group(1)]
        return _PLACEHOLDER.sub(
            lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), template
        )
    if isinstance(template, dict):
        return {k: fill(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [fill(v, values) for v in template]
    return template


def pick(obj: Any, dotted: str) -> Any:
    """Follow a dotted path (``a.b.0.c``) into parsed JSON; ``KeyError`` when it is absent."""
    if not dotted:
        return obj
    for part in dotted.split("."):
        if isinstance(obj, list) and part.isdigit() and int(part) < len(obj):
            obj = obj[int(part)]
        elif isinstance(obj, dict) and part in obj:
            obj = obj[part]
        else:
            raise KeyError(dotted)
    return obj


class HttpStore:
    """Any memory service over HTTP, mapped by a small config file (see ``docs/stores.md``).

    Args:
        config: path to the service's JSON or TOML file.
        tie_seed: seed of the hash that orders hits with equal scores (when the mapping
            has a score; see ``docs/stores.md``).
    """

    abstains = False

    def __init__(self, config: str | os.PathLike[str], tie_seed: int = DEFAULT_TIE_SEED) -> None:
        self.config_path = str(config)
        self.tie_seed = check_seed(tie_seed)
        self.cfg = load_config(config)
        self._ids: dict[str, None] = {}
        self._ingest = uuid.uuid4().hex  # a new one at every reset: keys of writes, not texts
        self._retries = 0
        self._lock = threading.Lock()
        headers = dict(self.cfg.headers)
        if self.cfg.auth_env:
            token = os.environ.get(self.cfg.auth_env)
            if not token:
                raise MnemometerError(
                    f"{config}: auth_env names {self.cfg.auth_env}, which is not set"
                )
            scheme = f"{self.cfg.auth_scheme} " if self.cfg.auth_scheme else ""
            headers[self.cfg.auth_header] = scheme + token
        self._http = HttpClient(
            self.cfg.base_url,
            headers=headers,
            timeout=self.cfg.timeout,
            retries=self.cfg.retries,
            backoff=self.cfg.backoff,
        )

    def _call(
        self,
        ep: Endpoint,
        values: dict[str, Any],
        headers: dict[str, str] | None = None,
        retries: int | None = None,
    ) -> Any:
        path = fill(ep.path, {k: urllib.parse.quote(str(v)) for k, v in values.items()})
        body = fill(ep.body, values) if ep.body is not None else None
        if ep.method == "GET":
            params, body = _query(body), None
        else:
            params = None
        return self._http.request_json(
            ep.method, path, json=body, params=params, headers=headers, retries=retries
        )

    def resolved_options(self) -> dict[str, Any]:
        """The tie seed, for the run log."""
        return {"tie_seed": self.tie_seed}

    def reset(self) -> None:
        """Call the reset endpoint (when configured); what follows is a new ingest.

        Forgetting everything twice is forgetting everything: the call is retried (at
        least twice) even when writes are not.
        """
        if self.cfg.reset is not None:
            self._call(self.cfg.reset, {}, retries=max(self.cfg.retries, 2))
        self._ids.clear()
        self._ingest = uuid.uuid4().hex
        self._retries = 0

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        """Call the store endpoint: one write, retried under one idempotency key."""
        mid = str(metadata["memory_id"])
        headers = {}
        if self.cfg.idempotency_header:
            key = hashlib.sha256(f"{self._ingest}\0{mid}\0{text}".encode()).hexdigest()[:32]
            headers[self.cfg.idempotency_header] = key
        values = {"text": text, "memory_id": mid, "timestamp": metadata.get("timestamp") or ""}
        try:
            self._call(self.cfg.store, values, headers)
        finally:
            with self._lock:
                self._retries += max(0, self._http.last_attempts - 1)
        self._ids[mid] = None

    def write_retries(self) -> int:
        """Store calls sent again after a transient failure, since the last reset."""
        return self._retries

    def list_ids(self) -> list[str]:
        """Ids of every memory sent to the service."""
        return list(self._ids)

    def close(self) -> None:
        """Release pooled connections."""
        self._http.close()

    def search(self, query: str, top_k: int) -> list[Hit]:
        """Call the search endpoint and map its reply to hits (at most ``top_k``)."""
        if top_k <= 0:
            return []
        ep = self.cfg.search
        reply = self._call(ep, {"query": query, "top_k": top_k})
        try:
            results = pick(reply, ep.results)
        except KeyError:
            raise MnemometerError(
                f"http store: search reply has no {ep.results!r}: {json.dumps(reply)[:160]}"
            ) from None
        if not isinstance(results, list):
            raise MnemometerError(
                f"http store: search reply's {ep.results or 'body'} is not a list"
            )
        hits: list[Hit] = []
        for i, r in enumerate(results[:top_k]):
            try:
                mid = pick(r, ep.id)
                score = float(pick(r, ep.score)) if ep.score else float(-i)
                text = str(pick(r, ep.text)) if ep.text else ""
            except (KeyError, TypeError, ValueError):
                raise MnemometerError(
                    f"http store: search hit {i} does not match the mapping "
                    f"(id={ep.id!r}, score={ep.score!r}): {json.dumps(r)[:160]}"
                ) from None
            hits.append(Hit(str(mid), score, text))
        if ep.score:
            # Equal scores in the service's own order may be its insertion order: re-sort
            # by the tie rule. Only within the reply: the service was asked for top_k, and
            # asking a remote service for more than the run asks for is not ours to do.
            rows = sort_rows(((h.memory_id, h.score, h.text) for h in hits), self.tie_seed)
            hits = [Hit(mid, score, text) for mid, score, text in rows]
        return hits


def _query(body: dict[str, Any] | None) -> dict[str, str] | None:
    """A GET body as query parameters: scalars as text, anything nested as JSON."""
    if body is None:
        return None
    return {
        k: v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for k, v in body.items()
    }
