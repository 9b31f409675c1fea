"""Runners of the question-answering item types (retrieval_qa, grounded_answer, ...)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from mnemometer.log._schema import ItemResult, Metric, RetrievedHit
from mnemometer.scoring import text as sc
from mnemometer.scoring.retrieval import rank_values
from mnemometer.stores._protocol import Hit
from mnemometer.suites.items._types import (
    AdversarialStale,
    BaseItem,
    GroundedAnswer,
    ItemType,
    ResumeQuality,
    RetrievalQA,
)

if TYPE_CHECKING:
    from mnemometer.suites.items._suite import Answer, _Ctx


def _metric(name: str, value: float | None, higher: bool = True) -> Metric:
    return Metric(name=name, value=value, higher_is_better=higher)


def _rank(ids: list[str], expected: list[str], k: int) -> list[Metric]:
    """recall, MRR and nDCG at the item's own ``k`` (``None`` with no expected ids)."""
    if not expected:
        return [Metric(name=n, k=k, value=None) for n in ("recall", "mrr", "ndcg")]
    return [
        Metric.model_validate(v)
        for v in rank_values(ids, expected, [k])
        if v["name"] in ("recall", "mrr", "ndcg")
    ]


def _hits_log(hits: list[Hit]) -> list[RetrievedHit]:
    return [RetrievedHit(id=h.memory_id, score=h.score) for h in hits]


def _all_met(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return None if not known else float(all(v >= 1.0 for v in known))


def run_retrieval_qa(it: RetrievalQA, ctx: _Ctx) -> ItemResult:
    """recall/MRR/nDCG over expected ids; tag and file recall over the hits' labels."""
    if ctx.suite._agent is not None:
        return ItemResult(
            item_id=it.id,
            index=0,
            input=it.question,
            metrics=[_metric("success", None)],
            extra={"note": "an agent exposes no hits: not scorable"},
        )
    hits, ms = ctx.search(it.question, it.top_k)
    ids = [h.memory_id for h in hits]
    rank = _rank(ids, it.expected_memory_ids, it.top_k)
    tag = sc.label_recall(it.expected_tags, ctx.tags(ids))
    files = sc.label_recall(it.expected_files, ctx.files(ids))
    metrics = rank + [
        Metric(name="tag_recall", k=it.top_k, value=tag),
        Metric(name="file_recall", k=it.top_k, value=files),
    ]
    recall = next(m.value for m in rank if m.name == "recall")
    metrics.append(_metric("success", _all_met([recall, tag, files])))
    return ItemResult(
        item_id=it.id,
        index=0,
        input=it.question,
        expected=it.expected_memory_ids,
        retrieved=_hits_log(hits),
        metrics=metrics,
        latency_ms=ms,
        tokens={"input": 0, "output": 0, "total": 0},
    )


def run_grounded_answer(it: GroundedAnswer, ctx: _Ctx) -> ItemResult:
    """Required assertions all asserted, no forbidden one asserted (negation-aware)."""
    hits, ms = ctx.search(it.question, it.top_k)
    ans = ctx.suite.answer(ctx, it.question, hits)
    recall = sc.assertion_recall(ans.text, it.required_assertions)
    forbidden = sc.assertion_hits(ans.text, it.forbidden_assertions)
    metrics = [
        _metric("assertion_recall", recall),
        _metric("forbidden_hits", float(forbidden), higher=False),
        _metric("insufficient_evidence", float(ans.refused), higher=False),
    ]
    if it.expected_memory_ids:
        ids = [h.memory_id for h in hits]
        metrics += _rank(ids, it.expected_memory_ids, it.top_k)
        cited_ok = [c for c in ans.cited if c in set(it.expected_memory_ids)]
        metrics.append(
            _metric("citation_precision", len(cited_ok) / len(ans.cited) if ans.cited else None)
        )
    ok = (recall is None or recall >= 1.0) and forbidden == 0
    metrics.append(_metric("success", float(ok)))
    return _answered(it, hits, ans, metrics, ms)


def run_adversarial_stale(it: AdversarialStale, ctx: _Ctx) -> ItemResult:
    """``refuse``: refuse with no stale fact; ``prefer_fresh``: fresh facts, no stale ones."""
    hits, ms = ctx.search(it.question, it.top_k)
    ans = ctx.suite.answer(ctx, it.question, hits)
    stale_tags = {t.strip().lower() for t in it.stale_tags}
    fresh_tags = {t.strip().lower() for t in it.fresh_tags}
    stale_cites = sum(bool(stale_tags & {t.lower() for t in ctx.tags([c])}) for c in ans.cited)
    fresh_cites = sum(bool(fresh_tags & {t.lower() for t in ctx.tags([c])}) for c in ans.cited)
    stale_hits = sc.assertion_hits(ans.text, it.stale_assertions)
    fresh_recall = sc.assertion_recall(ans.text, it.fresh_assertions)
    if it.expect == "refuse":
        ok = ans.refused and stale_hits == 0
    else:
        ok = (
            not ans.refused
            and stale_cites == 0
            and stale_hits == 0
            and (fresh_recall is None or fresh_recall >= 1.0)
            and (not fresh_tags or fresh_cites > 0)
        )
    metrics = [
        _metric("stale_citations", float(stale_cites), higher=False),
        _metric("fresh_citations", float(fresh_cites)),
        _metric("stale_assertion_hits", float(stale_hits), higher=False),
        _metric("fresh_assertion_recall", fresh_recall),
        _metric("insufficient_evidence", float(ans.refused), higher=False),
        _metric("success", float(ok)),
    ]
    return _answered(it, hits, ans, metrics, ms, expect=it.expect)


def run_resume_quality(it: ResumeQuality, ctx: _Ctx) -> ItemResult:
    """A briefing from the memories most related to the prompt, scored on topics."""
    prompt = it.prompt or "recent work decisions status"
    hits, ms = ctx.search(prompt, ctx.suite.resume_hits)
    briefing = " ".join(ctx.memory_text(h) for h in hits)
    tokens = {"input": 0, "output": 0, "total": 0}
    if ctx.suite._agent is not None:
        t0 = time.perf_counter()
        briefing, tokens = ctx.suite.ask_agent(prompt)
        ms = (time.perf_counter() - t0) * 1000.0
    recall = sc.assertion_recall(briefing, it.required_topics)
    forbidden = sc.assertion_hits(briefing, it.forbidden_topics)
    ok = (recall is None or recall >= 1.0) and forbidden == 0
    metrics = [
        _metric("topic_recall", recall),
        _metric("forbidden_hits", float(forbidden), higher=False),
        _metric("success", float(ok)),
    ]
    return ItemResult(
        item_id=it.id,
        index=0,
        input=it.prompt,
        retrieved=_hits_log(hits),
        output=briefing,
        metrics=metrics,
        latency_ms=ms,
        tokens=tokens,
    )


def _answered(
    it: BaseItem, hits: list[Hit], ans: Answer, metrics: list[Metric], ms: float, **extra: Any
) -> ItemResult:
    return ItemResult(
        item_id=it.id,
        index=0,
        input=it.text(),
        retrieved=_hits_log(hits),
        output=ans.text,
        metrics=metrics,
        latency_ms=ms + ans.ms,
        tokens=ans.tokens,
        extra={
            "refused": ans.refused,
            "cited": ans.cited,
            **({"counted_tokens": ans.counted} if ans.counted else {}),
            **extra,
        },
    )


RETRIEVAL_QA = ItemType("retrieval_qa", RetrievalQA, run_retrieval_qa)
GROUNDED_ANSWER = ItemType("grounded_answer", GroundedAnswer, run_grounded_answer)
ADVERSARIAL_STALE = ItemType("adversarial_stale", AdversarialStale, run_adversarial_stale)
RESUME_QUALITY = ItemType("resume_quality", ResumeQuality, run_resume_quality)


__all__ = ["ADVERSARIAL_STALE", "GROUNDED_ANSWER", "RESUME_QUALITY", "RETRIEVAL_QA"]
