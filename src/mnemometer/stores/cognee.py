"""``cognee``: cognee's knowledge engine with its embedded defaults, in the run directory.

cognee keeps a relational database (SQLite), a vector database (LanceDB) and a graph
(Ladybug, a Kuzu fork) under one system directory, and the added texts under a data
directory; this store puts both inside its ``workdir``. Memories are added as documents;
``cognify`` (chunking, then one LLM extraction of a knowledge graph and one summary per
document) runs once per batch: on ``flush``, i.e. once per conversation in the
``retrieval`` suite (``cognify=each`` runs it per memory instead, to measure the
difference). Every document's name is cognee's hash of its text, so each retrieved chunk
maps back to the memories it holds.

Two search modes: ``chunks`` (vector search over the chunks; no LLM call) and
``graph_completion`` (the context cognee's graph completion retrieves for the question:
triplets of the graph and the chunks they come from, ranked by where the chunks appear;
the answer itself, an LLM call, is the reader's job and not asked for).

The LLM is the run's (``--llm-base-url``/``--llm-model``, or ``-S base_url=``); it and
cognee's embedding endpoint are reached through a metering relay on 127.0.0.1, which
answers embeddings itself with the packaged MiniLM.

cognee's configuration is process-wide, so one cognee works at a time in a process. A
store that is alone in its process drives cognee there
(:class:`~mnemometer.stores._cognee_engine.CogneeEngine`); a store made while another is
open runs its cognee in a worker process of its own
(:class:`~mnemometer.stores._worker.ProcessWorker`), so the stores of several
conversations fill at once (``--concurrency``), each metered by its own relay.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mnemometer.embeddings import DEFAULT_MODEL, MINILM_REQUIRES, model_path
from mnemometer.envfile import quiet_libraries
from mnemometer.errors import MissingExtraError, MnemometerError
from mnemometer.stores._extracting import llm_settings
from mnemometer.stores._protocol import Hit, IngestCost
from mnemometer.stores._ties import DEFAULT_TIE_SEED, check_seed
from mnemometer.stores._vector import data_dir

_EXTRA = "cognee"
_MODES = ("chunks", "graph_completion")
_ENGINE = "mnemometer.stores._cognee_engine:CogneeEngine"
_HERE: weakref.WeakSet[CogneeStore] = weakref.WeakSet()  # open stores driving cognee here
_HERE_LOCK = threading.Lock()


class CogneeStore:
    """cognee (graph + vector memory engine), embedded, with everything in the run directory.

    Args:
        mode: ``chunks`` or ``graph_completion`` (see the module docstring).
        cognify: ``batch`` (once per flush: per conversation) or ``each`` (per memory).
        model: ``minilm`` (packaged) or the directory of a sentence-transformers model
            (one per process: the first cognee store's there).
        base_url: OpenAI-compatible endpoint (default: the run's ``--llm-base-url``).
        llm_model: model name (default: the run's ``--llm-model``).
        api_key: the endpoint's key, if it wants one.
        dated: write the memory's date before its text.
        retry_seconds: how long cognee keeps retrying an LLM reply it cannot use (cognee's
            own floor is 240 s per call, with at least two attempts; process-wide).
        llm: the run's LLM settings (given by the runner).
        workdir: the run's store directory (given by the runner).
        tie_seed: seed of the hash that orders equal scores (see ``docs/stores.md``).
        process: ``auto`` (in this process when no other cognee store is open here, else
            in a worker process), ``here`` or ``worker``.
    """

    requires = (("cognee", "cognee"), *MINILM_REQUIRES)
    """Optional modules, checked when the name is looked up."""

    abstains = False

    def __init__(
        self,
        mode: str = "chunks",
        cognify: str = "batch",
        model: str | os.PathLike[str] = DEFAULT_MODEL,
        base_url: str | None = None,
        llm_model: str | None = None,
        api_key: str | None = None,
        dated: bool = True,
        retry_seconds: float | None = None,
        llm: Any = None,
        workdir: Path | None = None,
        tie_seed: int = DEFAULT_TIE_SEED,
        process: str = "auto",
    ) -> None:
        quiet_libraries()
        self.tie_seed = check_seed(tie_seed)
        if mode not in _MODES:
            raise MnemometerError(f"cognee: mode must be one of {', '.join(_MODES)}, got {mode!r}")
        if cognify not in ("batch", "each"):
            raise MnemometerError(f"cognee: cognify must be batch or each, got {cognify!r}")
        if process not in ("auto", "here", "worker"):
            raise MnemometerError(f"cognee: process must be auto, here or worker, got {process!r}")
        if importlib.util.find_spec("cognee") is None:  # before the environment is set
            raise MissingExtraError("the cognee store", _EXTRA, "cognee")
        self.mode, self.cognify, self.dated = mode, cognify, bool(dated)
        self.retry_seconds = retry_seconds
        self.settings = llm_settings(llm, base_url, llm_model, api_key, "the cognee store")
        self.model = model_path(str(model))
        self.dir = data_dir(workdir, "cognee", self)
        options = {
            "directory": self.dir,
            "settings": self.settings,
            "mode": mode,
            "cognify": cognify,
            "model": str(model),
            "dated": self.dated,
            "retry_seconds": retry_seconds,
            "tie_seed": self.tie_seed,
        }
        with _HERE_LOCK:
            here = process == "here" or (process == "auto" and not _HERE)
            if here:
                _HERE.add(self)
        self.process = "here" if here else "worker"
        self._engine: Any = None
        self._worker: Any = None
        if here:
            from mnemometer.stores._cognee_engine import CogneeEngine

            self._engine = CogneeEngine(**options)
        else:  # the child imports cognee and loads the model while this thread goes on
            from mnemometer.stores._worker import ProcessWorker

            self._worker = ProcessWorker(_ENGINE, options, "cognee")

    def resolved_options(self) -> dict[str, Any]:
        """The mode, model and endpoint actually used, for the run log."""
        return {
            "mode": self.mode,
            "cognify": self.cognify,
            "retry_seconds": self.retry_seconds,
            "model": self.model,
            "base_url": self.settings.base_url,
            "llm_model": self.settings.model,
            "tie_seed": self.tie_seed,
        }

    @property
    def worker_pid(self) -> int | None:
        """The worker process's id (``None`` when cognee runs in this process)."""
        return None if self._worker is None else self._worker.pid

    def _do(self, method: str, *args: Any) -> Any:
        if self._worker is not None:
            return self._worker.call(method, *args)
        return getattr(self._engine, method)(*args)

    def close(self) -> None:
        """Stop the worker process, if any; another store may then drive cognee here."""
        if self._worker is not None:
            self._worker.close()
        with _HERE_LOCK:
            _HERE.discard(self)

    def reset(self) -> None:
        """Forget everything: cognee's own prune of this store's data and system."""
        self._do("reset")

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        """Add one memory (cognified on ``flush``, or at once with ``cognify=each``)."""
        self.store_many([(text, metadata)])

    def store_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Add memories; with ``cognify=each`` each is cognified as it comes."""
        self._do("store_many", list(items))

    def flush(self) -> None:
        """Add and cognify everything pending, as one batch; a failure is recorded."""
        self._do("flush")

    def ingest_costs(self) -> list[IngestCost]:
        """LLM calls, tokens, seconds and failures of every cognify since ``reset``."""
        return self._do("ingest_costs")

    def list_ids(self) -> list[str]:
        """Ids of the memories cognified without error."""
        return self._do("list_ids")

    def search(self, query: str, top_k: int) -> list[Hit]:
        """Chunks, or the chunks in the graph-completion context; each credits its memories."""
        return self._do("search", query, top_k)
