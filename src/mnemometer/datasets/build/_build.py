"""``build_dataset``: corpus directory -> dataset, resumable, with cost accounting."""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mnemometer.datasets._io import load_dataset, save_dataset
from mnemometer.datasets._models import Dataset, DatasetInfo, Memory, Query
from mnemometer.datasets.build._ask import StructuredMode, ask
from mnemometer.datasets.build._assemble import apply_labels, build_memories, link_chains, rows_from
from mnemometer.datasets.build._corpus import Chunk, read_corpus
from mnemometer.datasets.build._prompts import classification_messages, extraction_messages
from mnemometer.datasets.build._queries import make_queries, relevant_ids
from mnemometer.datasets.build._schema import ChunkRecord, Classification, Extraction
from mnemometer.errors import MnemometerError
from mnemometer.llm import LLMClient, LLMError
from mnemometer.text import detect_language

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class BuildConfig:
    """How to build; the defaults suit a chat model with an 8k context."""

    lang: str = "auto"
    """``auto`` (detected from the corpus), ``en`` or ``zh``: prompts, templates, tokens."""
    max_chars: int = 3000
    """Largest chunk in characters; files are split at paragraph ends, never truncated."""
    classify: bool = True
    """Ask the model whether each location string is a place, an era or a concept."""
    classify_batch: int = 30
    """Location strings per classification call."""
    retries: int = 2
    """Follow-up requests when a reply does not validate."""
    max_tokens: int = 1024
    """Completion tokens allowed per call: a reply cut there is repaired after its last whole
    fact. 1024 fits the local model's 2048-token context beside a chunk and finishes in
    seconds there; 4096 asked a 135M model for replies it spent minutes on."""
    queries_per_type: int = 30
    """Most queries of each type."""
    seed: int = 42
    """Seed of query selection."""
    concurrency: int = 1
    """Chunks in flight at once."""
    price_prompt: float = 0.0
    """Price per million prompt tokens (for the cost figure)."""
    price_completion: float = 0.0
    """Price per million completion tokens."""
    name: str | None = None
    """Dataset name (default: the corpus directory's name)."""


@dataclass(slots=True)
class BuildReport:
    """What a build did and spent."""

    files: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    chunks: int = 0
    chunks_resumed: int = 0
    chunks_failed: int = 0
    repaired: int = 0
    facts: int = 0
    repeated_facts: int = 0
    memories: int = 0
    chains: int = 0
    queries: Counter[str] = field(default_factory=Counter)
    relabelled: dict[str, int] = field(default_factory=dict)
    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """Human-readable summary."""
        out = [
            f"files {self.files} ({len(self.skipped)} skipped), chunks {self.chunks} "
            f"({self.chunks_resumed} from the checkpoint, {self.chunks_failed} failed, "
            f"{self.repaired} replies repaired)",
            f"facts {self.facts} -> memories {self.memories} "
            f"({self.repeated_facts} repeated facts skipped), chains {self.chains}",
            "queries " + ", ".join(f"{k} {v}" for k, v in sorted(self.queries.items())),
            f"LLM calls {self.calls} ({self.cached_calls} from the cache), tokens "
            f"{self.prompt_tokens} prompt + {self.completion_tokens} completion, "
            f"cost {self.cost:.4f}",
        ]
        out += [f"skipped {f}: {why}" for f, why in self.skipped]
        out += [f"failed {x}" for x in self.failures]
        return out


def checkpoint_path(out: Path) -> Path:
    """The checkpoint file next to the output."""
    return out.with_name(out.name + ".build.jsonl")


def build_dataset(
    corpus_dir: str | Path,
    out: str | Path,
    client: LLMClient,
    config: BuildConfig | None = None,
    *,
    merge: bool = False,
    resume: bool = False,
    progress: Progress | None = None,
) -> tuple[Dataset, BuildReport]:
    """Turn a folder of Markdown/text files into a dataset written to ``out``.

    Finished chunks are appended to a checkpoint next to ``out`` as they complete, so a
    crash or an unreachable endpoint loses nothing: ``resume=True`` skips them. The
    checkpoint is removed after a build in which every chunk succeeded.

    Raises:
        MnemometerError: empty corpus, a checkpoint without ``resume``, ``merge`` without an
            existing dataset, or an endpoint that fails (progress is kept).
    """
    cfg = config or BuildConfig()
    t0 = time.perf_counter()
    root, out = Path(corpus_dir), Path(out)
    corpus = read_corpus(root, cfg.max_chars)
    lang = cfg.lang if cfg.lang != "auto" else detect_language(c.text for c in corpus.chunks)
    base = _base_dataset(out) if merge else None
    ckpt = checkpoint_path(out)
    done = _load_checkpoint(ckpt, resume)
    report = BuildReport(files=corpus.files, skipped=corpus.skipped, chunks=len(corpus.chunks))
    usage0 = client.usage

    todo = [c for c in corpus.chunks if c.key not in done]
    report.chunks_resumed = len(corpus.chunks) - len(todo)
    records = {k: r for k, r in done.items() if k in {c.key for c in corpus.chunks}}
    mode = StructuredMode()
    lock = threading.Lock()
    finished = report.chunks_resumed
    if progress:
        progress(finished, len(corpus.chunks))

    def work(chunk: Chunk) -> ChunkRecord:
        answer = ask(
            client,
            extraction_messages(chunk.text, chunk.category, lang),
            Extraction,
            lang=lang,
            retries=cfg.retries,
            max_tokens=cfg.max_tokens,
            structured=mode,
        )
        ok = answer.value is not None
        return ChunkRecord(
            key=chunk.key,
            file=chunk.file,
            index=chunk.index,
            category=chunk.category,
            facts=answer.value.facts if ok else [],  # type: ignore[union-attr]
            status="ok" if ok else "failed",
            error=answer.note,
            attempts=answer.attempts,
            prompt_tokens=answer.prompt_tokens,
            completion_tokens=answer.completion_tokens,
        )

    ckpt.parent.mkdir(parents=True, exist_ok=True)
    failure: LLMError | None = None
    with (
        open(_end_torn_line(ckpt), "a", encoding="utf-8") as log,
        ThreadPoolExecutor(max(1, cfg.concurrency)) as pool,
    ):
        futures = [pool.submit(work, c) for c in todo]
        for fut in as_completed(futures):  # record each chunk the moment it is done
            if fut.cancelled():
                continue
            try:
                rec = fut.result()
            except LLMError as e:
                if failure is None:
                    failure = e
                    for other in futures:
                        other.cancel()  # chunks not started yet stay for --resume
                continue
            with lock:
                records[rec.key] = rec
                if rec.status == "ok":  # failed chunks are asked again on resume
                    log.write(rec.model_dump_json() + "\n")
                    log.flush()
                finished += 1
            if progress:
                progress(finished, len(corpus.chunks))
    if failure is not None:
        saved = sum(1 for r in records.values() if r.status == "ok")
        raise MnemometerError(
            f"{failure}\n{saved} of {len(corpus.chunks)} chunks are saved in {ckpt}; "
            "fix the endpoint and rerun with --resume (finished chunks are not asked again)"
        )

    for rec in records.values():
        if rec.status == "failed":
            report.chunks_failed += 1
            report.failures.append(f"{rec.file} chunk {rec.index}: {rec.error}")
        elif rec.error:
            report.repaired += 1
    rows = rows_from(records.values())
    report.facts = len(rows)
    if cfg.classify:
        labels = _classify(
            client,
            sorted({r.fact.location for r in rows if r.fact.location}),
            lang,
            cfg,
            mode,
            report,
        )
        rows, report.relabelled = apply_labels(rows, labels)

    dataset = _assemble(rows, lang, cfg, base, root, report)
    usage = client.usage
    report.calls = usage.calls - usage0.calls
    report.cached_calls = usage.cached_calls - usage0.cached_calls
    report.prompt_tokens = usage.prompt_tokens - usage0.prompt_tokens
    report.completion_tokens = usage.completion_tokens - usage0.completion_tokens
    report.cost = (
        report.prompt_tokens * cfg.price_prompt + report.completion_tokens * cfg.price_completion
    ) / 1e6
    report.seconds = time.perf_counter() - t0
    dataset.info.notes.append(_provenance(report, client, lang, cfg, root))
    save_dataset(dataset.with_hash(), out)
    if report.chunks_failed == 0:
        ckpt.unlink(missing_ok=True)
    return dataset, report


def _base_dataset(out: Path) -> Dataset:
    if not out.exists():
        raise MnemometerError(f"--merge: {out} does not exist yet; build it once without --merge")
    return load_dataset(out)


def _end_torn_line(path: Path) -> Path:
    """End a line a kill cut short, so the next record starts a line of its own."""
    with open(path, "a+b") as f:
        if f.tell() and (f.seek(-1, os.SEEK_END), f.read(1))[1] != b"\n":
            f.write(b"\n")
    return path


def _load_checkpoint(path: Path, resume: bool) -> dict[str, ChunkRecord]:
    if not path.exists():
        return {}
    if not resume:
        raise MnemometerError(
            f"{path}: a checkpoint of an unfinished build exists; pass --resume to continue it "
            "or delete the file to start over"
        )
    done: dict[str, ChunkRecord] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            try:
                rec = ChunkRecord.model_validate_json(line)
            except ValidationError:
                continue  # a line torn by a crash mid-write: that chunk is asked again
            done[rec.key] = rec
    return done


def _classify(
    client: LLMClient,
    terms: list[str],
    lang: str,
    cfg: BuildConfig,
    mode: StructuredMode,
    report: BuildReport,
) -> dict[str, str]:
    labels: dict[str, str] = {}
    for i in range(0, len(terms), max(1, cfg.classify_batch)):
        batch = terms[i : i + cfg.classify_batch]
        answer = ask(
            client,
            classification_messages(batch, lang),
            Classification,
            lang=lang,
            retries=cfg.retries,
            max_tokens=cfg.max_tokens,
            structured=mode,
        )
        if answer.value is None:
            report.failures.append(f"classification of {len(batch)} locations: {answer.note}")
            continue  # unclassified strings stay locations
        wanted = set(batch)
        for label in answer.value.labels:  # type: ignore[attr-defined]
            if label.term in wanted:
                labels[label.term] = label.kind
    return labels


def _assemble(
    rows: list[Any],
    lang: str,
    cfg: BuildConfig,
    base: Dataset | None,
    root: Path,
    report: BuildReport,
) -> Dataset:
    old_memories: list[Memory] = list(base.memories) if base else []
    old_queries: list[Query] = list(base.queries) if base else []
    start = _next_number(m.id for m in old_memories)
    known = {" ".join(m.text.lower().split()) for m in old_memories}
    memories, report.repeated_facts = build_memories(rows, lang, start, known)
    report.chains = link_chains(memories, _next_chain(old_memories))
    report.memories = len(memories)
    everything = old_memories + memories
    # Merge keeps old queries and ids; built ones get their ground truth recomputed over
    # the union so it stays complete.
    kept: list[Query] = []
    for q in old_queries:
        structured = q.metadata.get("structured")
        if isinstance(structured, dict) and q.metadata.get("source") == "mnemometer build":
            ids = relevant_ids(everything, structured)
            if q.type != "negative" and not ids:
                continue
            if q.type == "negative" and ids:
                continue  # no longer a negative: its answer now exists
            q = q.model_copy(update={"relevant_ids": ids})
        kept.append(q)
    new = make_queries(
        everything,
        lang,
        per_type=cfg.queries_per_type,
        seed=cfg.seed,
        start=_next_number(q.id for q in old_queries),
        existing_texts={q.text for q in old_queries},
    )
    report.queries = Counter(q.type for q in new)
    if base is not None:
        info = base.info.model_copy(deep=True)
        info.content_hash = None
    else:
        info = DatasetInfo(
            name=cfg.name or root.resolve().name,
            language=lang,
            reference_time=datetime.now(UTC).replace(tzinfo=None, microsecond=0),
            source=f"mnemometer build {root.resolve().name}",
        )
    return Dataset(info=info, memories=everything, queries=kept + new)


def _next_number(ids: Any) -> int:
    best = 0
    for i in ids:
        digits = "".join(ch for ch in str(i) if ch.isdigit())
        if digits:
            best = max(best, int(digits))
    return best + 1


def _next_chain(memories: list[Memory]) -> int:
    return _next_number(m.metadata.get("chain", "") for m in memories if m.metadata.get("chain"))


def _provenance(r: BuildReport, client: LLMClient, lang: str, cfg: BuildConfig, root: Path) -> str:
    settings = {k: v for k, v in client.settings.redacted().items() if k in ("base_url", "model")}
    return "mnemometer build: " + json.dumps(
        {
            "corpus": root.resolve().name,
            "lang": lang,
            "llm": settings,
            "files": r.files,
            "skipped": [f for f, _ in r.skipped],
            "chunks": r.chunks,
            "chunks_resumed": r.chunks_resumed,
            "chunks_failed": r.chunks_failed,
            "replies_repaired": r.repaired,
            "facts": r.facts,
            "memories_added": r.memories,
            "repeated_facts": r.repeated_facts,
            "chains": r.chains,
            "queries_added": dict(r.queries),
            "relabelled_locations": r.relabelled,
            "calls": r.calls,
            "cached_calls": r.cached_calls,
            "prompt_tokens": r.prompt_tokens,
            "completion_tokens": r.completion_tokens,
            "cost": round(r.cost, 6),
            "max_chars": cfg.max_chars,
            "queries_per_type": cfg.queries_per_type,
            "seed": cfg.seed,
            "failures": r.failures[:20],
        },
        ensure_ascii=False,
    )
