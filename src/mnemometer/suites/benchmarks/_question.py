"""One question of a conversation: search (or a baseline context), answer, then score.

The question's record (what was asked, the context's ranking, the answer, its cost) is
scored by the run's scorers (:mod:`mnemometer.scoring.benchmark`: the answer rule and each
judge) and given its success by the summary scorer's rule; the same scorers re-score it
later from the log alone (``mnemometer score``).
"""

from __future__ import annotations

import random
import time
from typing import Any

from mnemometer import deadline
from mnemometer.datasets._models import Conversation, Query
from mnemometer.log._schema import ItemResult
from mnemometer.protocols import ProtocolSpec
from mnemometer.scoring import judges as J
from mnemometer.scoring._scorer import apply
from mnemometer.scoring.retrieval import dedupe
from mnemometer.scoring.rules import RANDOM_SEED, RULE_DEPTH
from mnemometer.suites._base import Item
from mnemometer.suites.benchmarks import _layouts as L
from mnemometer.suites.benchmarks import _pipeline as P


class Questions:
    """The question phases of :class:`~mnemometer.suites.benchmarks.BenchmarkSuite`."""

    baseline: str | None
    top_k: int
    reader_budget: int | None
    protocol: ProtocolSpec
    turn_ks: tuple[int, ...]
    session_ks: tuple[int, ...]
    judges: list[J.JudgeSpec]
    retrieval_rules: bool
    _reader: Any
    _scorers: list[Any]
    _summary: Any
    _probes: dict[str, dict[str, str]]

    def groups(self, q: Query) -> dict[str, str]:
        """Breakdown keys (the suite's)."""
        raise NotImplementedError

    def _failed_question(
        self,
        item: Item,
        q: Query,
        error: str,
        status: str,
        extra: dict[str, Any] | None = None,
    ) -> ItemResult:
        raise NotImplementedError

    def _ask(
        self,
        item: Item,
        conv: Conversation,
        turns: dict[str, P.TurnRef],
        q: Query,
        live: Any,
        kind: str,
        ingest_ms: float | None,
    ) -> ItemResult | dict[str, Any]:
        extra: dict[str, Any] = {
            "ingest_ms": ingest_ms,
            "gold": q.answer,
            "baseline": self.baseline,
            **self.facts(q),
        }
        if self.retrieval_rules and kind != "agent" and self.baseline is None:
            extra.update(evidence_sessions(q, turns))  # also marks the record as ranked
        metrics: list[dict[str, Any]] = []
        retrieved: list[dict[str, Any]] = []
        tokens: dict[str, int] = {}
        latency: float | None = None
        proto = self.protocol
        try:
            if kind == "agent" and self.baseline is None:
                t0 = time.perf_counter()
                live.start_session(None)
                reply = live.send(q.text)
                latency = (time.perf_counter() - t0) * 1000.0
                hypothesis = reply.text
                extra["answer_ms"] = latency
                tokens.update({f"reader_{k}": v for k, v in reply.tokens.items()})
            else:
                context, ranking = self._context(conv, turns, q, live, extra)
                if ranking is not None:
                    latency = extra["search_ms"]
                    retrieved = [{"id": i, "score": s} for i, s in ranking]
                    if self.retrieval_rules:
                        extra.update(rule_inputs([i for i, _ in ranking], turns, q.id))
                    if q.relevant_ids:
                        metrics += P.retrieval_values(
                            [i for i, _ in ranking],
                            q.relevant_ids,
                            turns,
                            self.turn_ks,
                            self.session_ks,
                        )
                call = L.render(proto, q, context, conv, self._reader.counter.count)
                shown = {r.turn.id for r in call.shown}
                if q.relevant_ids:
                    metrics.append(
                        {
                            "name": "evidence_recall",
                            "value": sum(e in shown for e in q.relevant_ids) / len(q.relevant_ids),
                        }
                    )
                extra["context_tokens"] = call.context_tokens
                metrics.append(
                    {
                        "name": "context_tokens",
                        "unit": "tokens",
                        "value": float(extra["context_tokens"]),
                        "higher_is_better": False,
                    }
                )
                t0 = time.perf_counter()
                reply = self._reader.chat(
                    call.messages, temperature=proto.temperature, max_tokens=proto.max_tokens
                )
                extra["answer_ms"] = (time.perf_counter() - t0) * 1000.0
                extra["reader_cached"] = reply.cached
                hypothesis = L.finish(call, reply.text)
                if call.choices:
                    extra["reader_reply"] = reply.text
                paid, counted = J.paid_tokens(reply), J.counted_tokens(reply)
                tokens.update(
                    {"reader_prompt": paid["prompt"], "reader_completion": paid["completion"]}
                )
                extra["counted_tokens"] = {f"reader_{k}": n for k, n in counted.items()}
        except deadline.Cancelled:
            raise  # the item was abandoned: the runner has recorded its timeout
        except Exception as e:  # a reader or search failure fails this question, recorded
            status = (
                "timeout"
                if "timed out" in str(e).lower() or "timeout" in type(e).__name__.lower()
                else "error"
            )
            return self._failed_question(item, q, f"{type(e).__name__}: {e}", status, extra)
        if q.id in self._probes:  # answers known to be wrong: each judge's false positives
            extra["probe_answers"] = self._probes[q.id]
        # The reader's cap holds whatever answered: a longer answer is cut to it before it
        # is scored (a reader listing every phrase of its context scores F1 on the list).
        # A protocol without a cap (mem0's, Zep's) sends none and cuts nothing.
        if proto.max_tokens is None:
            extra["answer_tokens"] = self._reader.counter.count(hypothesis)
        else:
            hypothesis, extra["answer_tokens"], cut = self._reader.counter.cut(
                hypothesis, proto.max_tokens
            )
            if cut:
                extra["answer_cut"] = True
        extra["judges"] = {}
        extra["judge_ms"] = None
        # Plain data: the log writer serialises it as is and the run's summary reads it
        # back validated, so building a model here would validate every question twice.
        record = {
            "item_id": item.id,
            "index": item.index,
            "step": q.id,
            "input": q.text,
            "groups": self.groups(q),
            "expected": q.relevant_ids,
            "retrieved": retrieved,
            "output": hypothesis,
            "metrics": metrics,
            "latency_ms": latency,
            "tokens": tokens,
            "extra": extra,
        }
        return apply(record, self._scorers, self._summary)

    def facts(self, q: Query) -> dict[str, Any]:
        """What the scorers need to know about the question beyond its text and gold."""
        out: dict[str, Any] = {"question_type": q.type}
        if q.metadata.get("abstention"):
            out["abstention"] = True
        return out

    def _context(
        self,
        conv: Conversation,
        turns: dict[str, P.TurnRef],
        q: Query,
        store: Any,
        extra: dict[str, Any],
    ) -> tuple[list[P.TurnRef], list[tuple[str, float]] | None]:
        if self.baseline == "no-memory":
            return [], None
        if self.baseline == "oracle":
            chosen, dropped = P.select_context(
                [turns[e] for e in q.relevant_ids if e in turns],
                self.reader_budget,
                self._reader.counter,
            )
            extra["dropped_for_budget"] = dropped
            return chosen, None
        if self.baseline == "full-context":
            chosen, dropped = P.select_context(
                list(turns.values()), self.reader_budget, self._reader.counter, newest_first=True
            )
            extra["dropped_for_budget"] = dropped
            return chosen, None
        depth = max((L.depth(self.protocol, self.top_k), *self.turn_ks))
        hits, ms = P.search(store, q.text, depth)
        extra["search_ms"] = ms
        ranking: list[tuple[str, float]] = []
        seen: set[str] = set()
        unknown = 0
        for h in hits:
            if h.memory_id in seen:
                continue
            seen.add(h.memory_id)
            if h.memory_id in turns:
                ranking.append((h.memory_id, h.score))
            else:
                unknown += 1
        if unknown:
            extra["unknown_hits"] = unknown
        ranked = [turns[i] for i in dedupe(i for i, _ in ranking)]
        chosen, dropped = L.choose(
            self.protocol, ranked, self.top_k, self.reader_budget, self._reader.counter
        )
        extra["dropped_for_budget"] = dropped
        return chosen, ranking


def evidence_sessions(q: Query, turns: dict[str, P.TurnRef]) -> dict[str, Any]:
    """``evidence_sessions``: the sessions that hold the question's evidence (maybe none).

    LongMemEval names them (``answer_session_ids``, also for abstention questions); for
    LoCoMo they are the evidence turns' sessions.
    """
    named = q.metadata.get("answer_session_ids")
    if named:
        return {"evidence_sessions": [str(s) for s in named]}
    return {"evidence_sessions": dedupe(turns[e].session.id for e in q.relevant_ids if e in turns)}


def rule_inputs(ids: list[str], turns: dict[str, P.TurnRef], qid: str) -> dict[str, Any]:
    """What the peers' retrieval rules read beside the ranking (:mod:`mnemometer.scoring.rules`).

    The session and text (the turn's words, without its speaker) of the first
    ``RULE_DEPTH`` hits, and as many turns of a random permutation of the conversation's
    turns, seeded by the question id (the same random ranking for every system), with their
    sessions.
    """
    top = ids[:RULE_DEPTH]
    drawn = random.Random(RANDOM_SEED + qid).sample(list(turns), min(RULE_DEPTH, len(turns)))
    return {
        "sessions": [turns[i].session.id for i in top],
        "texts": [turns[i].turn.text for i in top],
        "random": {"ids": drawn, "sessions": [turns[i].session.id for i in drawn]},
    }
