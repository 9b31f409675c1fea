"""engram-search as a mnemometer store: its own documents and its own retrieval pipeline.

engram-search (PyPI ``engram-search``, repository Nitin-Gupta1109/engram) indexes a
conversation as documents of its own (``engram.ingestion.parser.session_to_documents``:
overlapping chunks of six turns with the session date in front and each turn's speaker
named, plus a synthetic "preferences" and a "topics" document per session) and ranks them
with ``engram.retrieval.pipeline.RetrievalPipeline``: dense cosine, its own BM25 and name /
quoted-phrase boosts, fused by reciprocal rank, then optionally a cross-encoder. Its LoCoMo
script (``benchmarks/locomo_bench.py``) does exactly this per conversation; this adapter
does the same with the turns a suite stores, asks the pipeline, and credits each document
it returns to the turns whose words it carries.

Its published LoCoMo number used ``--mode rerank`` with ``BAAI/bge-large-en-v1.5`` and the
cross-encoder ``BAAI/bge-reranker-v2-m3``, both hub names that engram downloads. Nothing is
fetched here: the embedder is mnemometer's packaged all-MiniLM-L6-v2 (engram's own
``minilm`` entry) loaded by path, and the cross-encoder stage runs only when a local
cross-encoder directory is given (``reranker=``). So the default is the claim's pipeline
without the two models that cannot be had offline.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from mnemometer.embeddings import DEFAULT_MODEL, MINILM_REQUIRES, model_path, offline_env
from mnemometer.errors import MnemometerError
from mnemometer.stores import DEFAULT_TIE_SEED, Hit, check_seed, rank_rows, tie_key

__all__ = ["MODES", "UNITS", "EngramStore", "locomo_date"]

MODES = ("hybrid", "dense", "rerank")
UNITS = ("chunk", "turn")


def locomo_date(timestamp: str) -> str:
    """An ISO timestamp written as LoCoMo writes a session date (``1:56 pm on 8 May, 2023``).

    engram's script puts the dataset's own date string in front of every document
    (``[1:56 pm on 8 May, 2023] ...``); the suite hands the date as ISO 8601, so it is
    written back in that form. A value that is not ISO 8601 is used as given.
    """
    try:
        t = datetime.fromisoformat(timestamp)
    except ValueError:
        return timestamp
    hour = t.hour % 12 or 12
    return f"{hour}:{t.minute:02d} {'am' if t.hour < 12 else 'pm'} on {t.day} {t:%B}, {t.year}"


def _bool(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    if str(value).lower() in ("true", "1", "yes"):
        return True
    if str(value).lower() in ("false", "0", "no"):
        return False
    raise MnemometerError(f"engram store: {name} must be true or false, got {value!r}")


class EngramStore:
    """engram-search 0.1.7: ``session_to_documents`` + ``RetrievalPipeline``, fully local.

    Args:
        mode: ``hybrid`` (dense + BM25 + boosts, reciprocal rank fusion: engram's pipeline
            without the cross-encoder), ``dense`` (cosine only, the script's ``--mode
            dense``) or ``rerank`` (the pipeline with its cross-encoder over the top 20:
            the published configuration; needs ``reranker``).
        unit: ``chunk`` (engram's own documents, as its LoCoMo script builds them) or
            ``turn`` (each memory one document, dated as engram dates its documents).
        model: ``minilm`` (mnemometer's packaged all-MiniLM-L6-v2) or the directory of a
            sentence-transformers model (e.g. a local copy of bge-large-en-v1.5). Never a
            hub name: engram would download it.
        engram_name: engram's name for the model at ``model`` (``bge-large``, ``bge-base``,
            ``minilm``, ...), so engram applies that model's settings: for the BGE models
            its query prefix, which engram adds only when the model goes by that name.
        reranker: the directory of a sentence-transformers cross-encoder (e.g. a local copy
            of BAAI/bge-reranker-v2-m3, engram's default) for ``mode=rerank``.
        preferences: add engram's synthetic preference and topic documents (``unit=chunk``;
            its script's default).
        tie_seed: engram breaks equal scores by the order it is given the documents; they
            are given in the order of this seed's hash of their turns' ids, so the ranking
            does not depend on the dataset file's order (see mnemometer's ``docs/stores.md``).

    CLI: ``-S mode=dense``, ``-S unit=turn``, ``-S model=/path/to/bge-large-en-v1.5
    -S engram_name=bge-large``, ``-S mode=rerank -S reranker=/path/to/bge-reranker-v2-m3``.

    Speakers: engram knows two roles, ``user`` and ``assistant``, and extracts preferences
    and topics from the user's turns only; its LoCoMo script makes ``speaker_a`` the user.
    A store is not told which speaker that is: the first speaker stored is the user and the
    second the assistant, and each turn is written ``Name: text`` as engram writes it.
    Memories from more than two speakers, or without ``metadata['speaker']``, are all the
    user's and keep their text as given. A memory without ``metadata['session']`` is a
    session of its own.
    """

    #: Optional modules, checked when the name is looked up (engram-search is a dependency).
    requires = MINILM_REQUIRES

    #: engram ranks every document; an empty result never means "nothing relevant".
    abstains = False

    def __init__(
        self,
        mode: str = "hybrid",
        unit: str = "chunk",
        model: str | os.PathLike[str] = DEFAULT_MODEL,
        engram_name: str | None = None,
        reranker: str | os.PathLike[str] | None = None,
        preferences: bool | str = True,
        tie_seed: int = DEFAULT_TIE_SEED,
    ) -> None:
        if mode not in MODES:
            raise MnemometerError(f"engram store: mode must be one of {MODES}, got {mode!r}")
        if unit not in UNITS:
            raise MnemometerError(f"engram store: unit must be one of {UNITS}, got {unit!r}")
        if mode == "rerank" and reranker is None:
            raise MnemometerError(
                "engram store: mode=rerank needs a local cross-encoder, e.g. "
                "-S reranker=/path/to/bge-reranker-v2-m3 (engram's default, a hub name, is "
                "never downloaded here); or use mode=hybrid, the same pipeline without it"
            )
        self.mode, self.unit = mode, unit
        self.preferences = _bool(preferences, "preferences")
        self.tie_seed = check_seed(tie_seed)
        self.model_dir = model_path(model)  # raises naming -S model=... for a bad path
        offline_env()  # before sentence-transformers is imported (by engram, lazily)
        from engram.retrieval.embedder import MODELS, Embedder
        from engram.retrieval.pipeline import RetrievalPipeline

        name = engram_name or ("minilm" if str(model) == DEFAULT_MODEL else None)
        if name is not None and name not in MODELS:
            raise MnemometerError(
                f"engram store: engram_name must be one of {sorted(MODELS)}, got {name!r}"
            )
        # engram resolves its names to hub ids; keep its name (its settings) but load the
        # weights from the local directory.
        self.embedder = Embedder(name or self.model_dir)
        self.embedder._hf_id = self.model_dir
        self.engram_name = name
        ce = None
        if mode == "rerank":
            from engram.retrieval.reranker import CrossEncoderReranker

            path = os.path.expanduser(str(reranker))
            if not os.path.isdir(path):
                raise MnemometerError(
                    f"engram store: reranker {str(reranker)!r} is not a directory; give a "
                    "local sentence-transformers cross-encoder (-S reranker=/path/to/model)"
                )
            ce = CrossEncoderReranker(os.path.abspath(path))
        self.reranker_dir = None if ce is None else ce._model_name
        self.pipeline = RetrievalPipeline(
            embedder=self.embedder, reranker=ce, use_reranker=ce is not None, dense_top_k=50
        )
        self._lock = threading.Lock()
        self.reset()

    def resolved_options(self) -> dict[str, Any]:
        """Options as resolved (the model directories actually loaded), for the run log."""
        return {
            "mode": self.mode,
            "unit": self.unit,
            "model": self.model_dir,
            "engram_name": self.engram_name,
            "reranker": self.reranker_dir,
            "preferences": self.preferences,
            "tie_seed": self.tie_seed,
        }

    # ---- the Store protocol ------------------------------------------------------------

    def reset(self) -> None:
        """Forget everything."""
        with self._lock:
            self._memories: list[tuple[str, str, dict[str, Any]]] = []
            self._docs: list[Any] = []
            self._credits: dict[str, list[str]] = {}
            self._dirty = False

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        """Remember ``text`` under ``metadata['memory_id']`` (indexed at :meth:`flush`)."""
        if "memory_id" not in metadata:
            raise MnemometerError("engram store: metadata needs a 'memory_id'")
        with self._lock:
            self._memories.append((str(metadata["memory_id"]), str(text), dict(metadata)))
            self._dirty = True

    def store_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Store every ``(text, metadata)`` pair (one conversation: indexed together)."""
        for text, metadata in items:
            self.store(text, metadata)

    def flush(self) -> None:
        """Build engram's documents from everything stored and embed them."""
        with self._lock:
            if not self._dirty:
                return
            from engram.backends.base import Document

            infos = self._documents()
            # engram breaks ties by input order: give it the documents in a seeded hash
            # order of what they credit, never the file's order.
            infos.sort(
                key=lambda d: tie_key("|".join(d["credits"]) + "|" + d["kind"], self.tie_seed)
            )
            vecs = self.embedder.encode_documents([d["text"] for d in infos]) if infos else []
            self._docs = [
                Document(id=d["id"], text=d["text"], embedding=v.tolist(), metadata=d["metadata"])
                for d, v in zip(infos, vecs, strict=True)
            ]
            self._credits = {d["id"]: d["credits"] for d in infos}
            self._dirty = False

    def search(self, query: str, top_k: int) -> list[Hit]:
        """The documents engram ranks first for ``query``, in its order, each credited to its turns.

        A document's turns share its score, ``1 / (1 + its rank)``; a turn in several
        documents takes its best; equal scores are ordered by the seeded id hash.
        """
        if self._dirty:
            self.flush()
        if top_k <= 0 or not query.strip() or not self._docs:
            return []
        with self._lock:  # the pipeline writes scores into the shared documents
            if self.mode == "dense":
                q = self.embedder.encode_query(query)
                ranked = [d for d, _ in self.pipeline._dense_rank(q, self._docs)]
                by_id = {d.id: d for d in self._docs}
                docs = [by_id[i] for i in ranked]
            else:
                docs = self.pipeline.search(query, self._docs, top_k=len(self._docs))
            rows: list[tuple[str, float, str]] = []
            for rank, doc in enumerate(docs):
                rows.extend((mid, 1.0 / (1 + rank), doc.text) for mid in self._credits[doc.id])
                if len({r[0] for r in rows}) >= top_k:
                    break
        return rank_rows(rows, top_k, self.tie_seed)

    def list_ids(self) -> list[str]:
        """Ids of every memory stored."""
        return list(dict.fromkeys(mid for mid, _, _ in self._memories))

    # ---- engram's documents ------------------------------------------------------------

    def _documents(self) -> list[dict[str, Any]]:
        """The documents engram builds from the stored memories, each with the turns it credits."""
        from engram.ingestion.parser import (
            _chunk_turns,
            _format_timestamp_prefix,
            extract_preferences,
            extract_topics,
            session_to_documents,
        )

        speakers = list(dict.fromkeys(m.get("speaker") for _, _, m in self._memories))
        named = 0 < len(speakers) <= 2 and None not in speakers and "" not in speakers
        roles = dict(zip(speakers, ("user", "assistant"), strict=False)) if named else {}
        names = {r: s for s, r in roles.items()} or None
        sessions: dict[str, list[dict[str, Any]]] = {}
        for mid, text, meta in self._memories:
            sid = str(meta.get("session") or f"memory:{mid}")
            speaker = meta.get("speaker")
            content = text
            if named and text.startswith(f"{speaker}: "):
                content = text[len(speaker) + 2 :]  # engram writes the name back in front
            date = locomo_date(str(meta["timestamp"])) if meta.get("timestamp") else ""
            turn = {"role": roles.get(speaker, "user"), "content": content, "id": mid}
            sessions.setdefault(sid, []).append({**turn, "date": date})
        out = []
        for n, (sid, turns) in enumerate(sessions.items()):
            key = f"s{n}"  # engram's doc ids carry the session id; ours never collide
            date = turns[0]["date"]
            if self.unit == "turn":
                prefix = _format_timestamp_prefix(date)
                for t in turns:
                    text = f"{names[t['role']]}: {t['content']}" if names else t["content"]
                    meta = {"session_id": sid, "timestamp": date, "type": "turn"}
                    out.append(_doc(f"{key}_{t['id']}", prefix + text, meta, [t["id"]], "turn"))
                continue
            docs = session_to_documents(
                session=turns,
                session_id=key,
                timestamp=date,
                include_assistant=True,  # the script's default: every turn in the chunks
                generate_preference_doc=self.preferences,
                generate_topic_doc=self.preferences,
                speaker_names=names,
            )
            chunks = _chunk_turns(turns, max_turns=6)  # session_to_documents' own chunks
            for d in docs:
                kind = d["metadata"]["type"]
                if kind == "session":
                    ci = 0 if d["id"] == key else int(d["id"].rsplit("_c", 1)[1])
                    credits = [t["id"] for t in chunks[ci]]
                else:  # a synthetic document carries words of the user turns it came from
                    pick = extract_preferences if kind == "preference" else extract_topics
                    credits = [t["id"] for t in turns if t["role"] == "user" and pick([t])]
                d["metadata"]["session_id"] = sid
                out.append(_doc(d["id"], d["text"], d["metadata"], credits, kind))
        return [d for d in out if d["credits"]]


def _doc(did: str, text: str, meta: dict[str, Any], credits: list[str], kind: str) -> dict:
    return {"id": did, "text": text, "metadata": meta, "credits": credits, "kind": kind}
