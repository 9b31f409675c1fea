"""taosmd (taOSmd 0.4.0) as a mnemometer store: its ``VectorMemory`` and its own hybrid search.

taosmd publishes "97.0% Recall@5 on LongMemEval-S": one document per session (its user
turns), and a hit when an answer session is among the top 5 documents. This store gives
taosmd one memory per turn, searches with ``VectorMemory.search`` exactly as the published
recipe calls it (``hybrid=True``, the default ``boost`` fusion, the query extended by
taosmd's own ``expand_query_fast`` entities and ``extract_preferences`` signals) and returns
taosmd's ranking unchanged; mnemometer's rules then score it under the claim's own rule and
the neutral one.

taosmd embeds with an ONNX export of all-MiniLM-L6-v2 that its setup script downloads from
a hub. Here nothing is downloaded: the packaged MiniLM (``mnemometer[embeddings]``) is
exported to ONNX once, checked against sentence-transformers, and cached; ``onnx_path``
points taosmd at any ONNX model directory instead.
"""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import tempfile
import threading
import warnings
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

from mnemometer.embeddings import load_embedder, model_path
from mnemometer.envfile import quiet_libraries
from mnemometer.errors import MissingExtraError, MnemometerError
from mnemometer.stores import Hit

__all__ = ["TaosmdStore", "export_onnx"]

_T = TypeVar("_T")

#: ``VectorMemory.search``'s fusion modes (taosmd 0.4.0, ``vector_memory.py``).
FUSIONS = ("boost", "rrf", "bm25_rrf", "bm25_lemma_rrf", "mem0_additive", "none")

#: Where exported ONNX models are kept (one directory per source model).
CACHE = Path.home() / ".cache" / "mnemometer" / "taosmd"

_PROBES = (
    "The lighthouse keeper repaints the red door every spring.",
    "When did Caroline go to the LGBTQ support group?",
)


def export_onnx(model: str = "minilm", cache: Path = CACHE) -> Path:
    """Export a local sentence-transformers model to ONNX in the layout taosmd loads.

    taosmd's ``embed_mode="onnx"`` reads ``model.onnx`` (token embeddings out) and the
    tokenizer from one directory and mean-pools them itself. The export is done once per
    model and checked: taosmd's pooling of the ONNX output must give sentence-transformers'
    own vectors (cosine 0.999 or more), or the export is refused.

    Args:
        model: ``minilm`` (the packaged all-MiniLM-L6-v2) or a sentence-transformers
            directory.
        cache: the directory that keeps the exports.

    Returns:
        The ONNX model directory.

    Raises:
        MnemometerError: the model is not a local sentence-transformers model, or taosmd's
            mean pooling of its export does not reproduce it.
    """
    src = Path(model_path(model))
    sizes = sorted((p.name, p.stat().st_size) for p in src.rglob("*") if p.is_file())
    key = hashlib.blake2b(repr((str(src), sizes)).encode(), digest_size=6).hexdigest()
    # taosmd picks pooling and prefixes from the directory's name (``arctic``: CLS pooling,
    # ``nomic``: task prefixes), so the name keeps the model's own.
    stem = "minilm" if str(model) == "minilm" else src.name
    out = Path(cache).expanduser() / f"{stem}-onnx-{key}"
    if (out / "model.onnx").is_file():
        return out
    import numpy as np
    import onnxruntime as ort
    import torch

    embedder = load_embedder(model)
    st = embedder.model
    bert = st[0].auto_model.eval()
    tok = st.tokenizer

    class _Tokens(torch.nn.Module):
        # Keyword call: transformers 5's forward() takes more positional arguments.
        def __init__(self, m: Any) -> None:
            super().__init__()
            self.m = m

        def forward(self, ids: Any, mask: Any, types: Any) -> Any:
            return self.m(input_ids=ids, attention_mask=mask, token_type_ids=types)[0]

    names = ["input_ids", "attention_mask", "token_type_ids"]
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=out.name + ".", dir=out.parent))
    try:
        enc = tok(list(_PROBES), return_tensors="pt", padding=True)
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the tracer's notes on shapes it fixes
            torch.onnx.export(
                _Tokens(bert),
                tuple(enc[n] for n in names),
                str(tmp / "model.onnx"),
                input_names=names,
                output_names=["last_hidden_state"],
                dynamic_axes={n: {0: "batch", 1: "seq"} for n in [*names, "last_hidden_state"]},
                opset_version=17,
                dynamo=False,  # the TorchScript exporter: no onnxscript needed
            )
        tok.save_pretrained(str(tmp))
        sess = ort.InferenceSession(str(tmp / "model.onnx"), providers=["CPUExecutionProvider"])
        for text in _PROBES:
            i = tok(text, return_tensors="np")
            feed = {n: i[n].astype(np.int64) for n in names}
            tokens = sess.run(None, feed)[0][0]
            vec = tokens.mean(axis=0)
            cos = float(vec @ embedder.encode_one(text) / np.linalg.norm(vec))
            if cos < 0.999:
                raise MnemometerError(
                    f"taosmd: the ONNX export of {src} does not reproduce the model under "
                    f"taosmd's mean pooling (cosine {cos:.4f}); export it yourself and pass "
                    "-S onnx_path=DIR"
                )
        shutil.rmtree(out, ignore_errors=True)
        tmp.rename(out)  # atomic: a half-written export is never loaded
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


class TaosmdStore:
    """taosmd's VectorMemory (ONNX MiniLM, hybrid keyword-boosted cosine), offline.

    One memory is one ``VectorMemory.add`` (taosmd embeds it at once); a search is one
    ``VectorMemory.search``, whose ranking is returned as it comes (taosmd breaks equal
    scores by ``numpy.argsort``, so ``check_store`` warns about tie order). taosmd's
    SQLite connection belongs to the thread that made it, so every call runs on one
    thread of the store's own.

    Options (``mnemometer run ... --store taosmd -S key=value``):

    Args:
        model: ``minilm`` (the packaged all-MiniLM-L6-v2, exported to ONNX once into
            ``~/.cache/mnemometer/taosmd``) or a local sentence-transformers directory
            (exported likewise).
        onnx_path: an ONNX model directory taosmd loads as it is (``model.onnx`` or
            ``onnx/model.onnx`` beside a tokenizer); wins over ``model``.
        expand: extend the query as the published "97.0%" recipe does (``query_expand``
            in taosmd's ``benchmarks/longmemeval_enhanced.py``): up to 3 entities from
            ``expand_query_fast`` and 2 preference signals from ``extract_preferences``.
            ``false``: the plain question (its ``hybrid_baseline``).
        hybrid: ``VectorMemory.search``'s ``hybrid`` (keywords fused with the cosine).
        fusion: ``VectorMemory.search``'s ``fusion``: one of :data:`FUSIONS`
            (``boost``, taosmd's default, is what the recipe used).
        workdir: where the SQLite file lives (the run gives one); a temporary directory
            otherwise.
    """

    #: taosmd ranks every stored memory; an empty result never means "nothing relevant".
    abstains = False

    def __init__(
        self,
        model: str = "minilm",
        onnx_path: str | None = None,
        expand: bool = True,
        hybrid: bool = True,
        fusion: str = "boost",
        workdir: str | Path | None = None,
    ) -> None:
        if fusion not in FUSIONS:
            raise MnemometerError(
                f"taosmd: fusion {fusion!r} is not one of {', '.join(FUSIONS)} (-S fusion=boost)"
            )
        for name, value in (("expand", expand), ("hybrid", hybrid)):
            if not isinstance(value, bool):
                raise MnemometerError(f"taosmd: {name} must be true or false, got {value!r}")
        quiet_libraries()  # before transformers is imported: no hub, no telemetry
        try:
            import taosmd  # noqa: F401
        except ImportError:
            raise MissingExtraError("the taosmd store", "taosmd", "taosmd") from None
        if onnx_path:
            path = Path(onnx_path).expanduser()
            if not ((path / "model.onnx").is_file() or (path / "onnx" / "model.onnx").is_file()):
                raise MnemometerError(
                    f"taosmd: onnx_path {str(path)!r} holds no model.onnx (nor onnx/model.onnx); "
                    "give an ONNX model directory, or drop the option to export the packaged MiniLM"
                )
            self.onnx_path = str(path.resolve())
        else:
            self.onnx_path = str(export_onnx(model))
        self.model = model
        self.expand = expand
        self.hybrid = hybrid
        self.fusion = fusion
        self._own_dir = workdir is None
        self._dir = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="taosmd-"))
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._vmem: Any = None
        self._gen = 0
        self.reset()

    def resolved_options(self) -> dict[str, Any]:
        """Options as resolved (the ONNX directory taosmd loaded), for the run log."""
        return {
            "model": self.model,
            "onnx_path": self.onnx_path,
            "expand": self.expand,
            "hybrid": self.hybrid,
            "fusion": self.fusion,
        }

    def _run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def reset(self) -> None:
        """Forget everything: a new, empty taosmd database."""
        from taosmd import VectorMemory

        if self._vmem is not None:
            self._run(self._vmem.close())
        self._gen += 1
        db = self._dir / f"taosmd-{self._gen}" / "vector.db"
        shutil.rmtree(db.parent, ignore_errors=True)
        vmem = VectorMemory(db_path=str(db), embed_mode="onnx", onnx_path=self.onnx_path)
        self._run(vmem.init())
        # taosmd falls back to a remote embedding server (with a warning) when the ONNX
        # model does not load; here that would be a store that embeds nothing.
        if vmem._embed_mode != "onnx" or vmem._onnx_session is None:
            raise MnemometerError(
                f"taosmd could not load the ONNX model in {self.onnx_path}; check that it "
                "holds model.onnx and a tokenizer (or drop -S onnx_path)"
            )
        self._vmem = vmem

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        """Remember ``text`` (embedded by taosmd now) under ``metadata['memory_id']``."""
        meta = {"memory_id": str(metadata["memory_id"])}
        if metadata.get("timestamp"):
            meta["timestamp"] = str(metadata["timestamp"])
        row = self._run(self._vmem.add(text, metadata=meta))
        if row <= 0:  # taosmd returns -1 when its embedder gave no vector
            raise MnemometerError(f"taosmd did not store memory {meta['memory_id']!r}")

    def store_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Store every ``(text, metadata)`` pair (taosmd has no batch add: one at a time)."""
        for text, metadata in items:
            self.store(text, metadata)

    def query_text(self, query: str) -> str:
        """The query taosmd is asked: the question, extended as the recipe does when ``expand``."""
        if not self.expand:
            return query
        from taosmd.preference_extractor import extract_preferences
        from taosmd.query_expansion import expand_query_fast

        out = query
        entities = expand_query_fast(query)["entities"][:3]
        if entities:
            out = f"{query} {' '.join(entities)}"
        prefs = extract_preferences(query)
        if prefs:
            out = f"{out} {' '.join(p['signal'][:30] for p in prefs[:2])}"
        return out

    def search(self, query: str, top_k: int) -> list[Hit]:
        """The top ``top_k`` taosmd gives for ``query``, in its order, with its scores."""
        if top_k <= 0:
            return []
        results = self._run(
            self._vmem.search(
                self.query_text(query), limit=top_k, hybrid=self.hybrid, fusion=self.fusion
            )
        )
        return [
            Hit(
                str(r["metadata"]["memory_id"]),
                float(r.get("rrf_score", r["similarity"])),
                r.get("text", ""),
            )
            for r in results
        ]

    def close(self) -> None:
        """Close the database and stop the store's thread."""
        if self._vmem is not None:
            self._run(self._vmem.close())
            self._vmem = None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        if self._own_dir:
            shutil.rmtree(self._dir, ignore_errors=True)
