"""One question of a conversation: search (or a baseline context), answer, score, judge."""

from __future__ import annotations

import time
from typing import Any

from mnemometer import deadline
from mnemometer.datasets._models import Conversation, Query
from mnemometer.errors import MnemometerError
from mnemometer.log._schema import ItemResult
from mnemometer.scoring import judges as J
from mnemometer.scoring import qa
from mnemometer.scoring.retrieval import dedupe
from mnemometer.suites._base import Item
from mnemometer.suites.benchmarks import _pipeline as P


def connect_judges(
    judges: list[J.JudgeSpec], reader: Any, judge_model: str | None, endpoints: dict[str, str]
) -> dict[str, Any]:
    """An LLM client per judge name, one per distinct (endpoint, model), each checked.

    A judge without its own model asks ``judge_model`` (default: the reader's) at the
    reader's endpoint; ``NAME@MODEL`` asks MODEL where ``endpoints`` says (default: the
    reader's endpoint). Clients share the reader's settings otherwise (cache, timeout).

    Raises:
        MnemometerError: an endpoint is named for a model no judge uses.
    """
    from dataclasses import replace

    from mnemometer.llm import LLMClient

    unused = set(endpoints) - {j.model for j in judges}
    if unused:
        raise MnemometerError(
            f"--judge-endpoint names {', '.join(sorted(unused))}, which no --judge NAME@MODEL uses"
        )
    base = reader.settings
    clients: dict[tuple[str, str], Any] = {(base.base_url, base.model): reader}
    out: dict[str, Any] = {}
    for j in judges:
        model = j.model or judge_model or base.model
        url = endpoints.get(model, base.base_url) if j.model else base.base_url
        if (url, model) not in clients:
            client = LLMClient.from_settings(replace(base, base_url=url, model=model))
            client.check()
            clients[url, model] = client
        out[j.name] = clients[url, model]
    return out


class Questions:
    """The question phases of :class:`~mnemometer.suites.benchmarks.BenchmarkSuite`."""

    baseline: str | None
    top_k: int
    reader_budget: int
    turn_ks: tuple[int, ...]
    session_ks: tuple[int, ...]
    judges: list[J.JudgeSpec]
    _reader: Any
    _judge_llms: dict[str, Any]

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
        }
        metrics: list[dict[str, Any]] = []
        retrieved: list[dict[str, Any]] = []
        tokens: dict[str, int] = {}
        latency: float | None = None
        today = q.asked_at
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
                    if q.relevant_ids:
                        metrics += P.retrieval_values(
                            [i for i, _ in ranking],
                            q.relevant_ids,
                            turns,
                            self.turn_ks,
                            self.session_ks,
                        )
                shown = {r.turn.id for r in context}
                if q.relevant_ids:
                    metrics.append(
                        {
                            "name": "evidence_recall",
                            "value": sum(e in shown for e in q.relevant_ids) / len(q.relevant_ids),
                        }
                    )
                prompt = P.reader_prompt(q.text, context, today)
                extra["context_tokens"] = sum(P.estimate_tokens(r.line()) + 1 for r in context)
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
                    [{"role": "user", "content": prompt}],
                    temperature=0.0,
                    max_tokens=P.READER_MAX_TOKENS,
                )
                extra["answer_ms"] = (time.perf_counter() - t0) * 1000.0
                extra["reader_cached"] = reply.cached
                hypothesis = reply.text.strip()
                paid = J.paid_tokens(reply)
                tokens.update(
                    {"reader_prompt": paid["prompt"], "reader_completion": paid["completion"]}
                )
        except deadline.Cancelled:
            raise  # the item was abandoned: the runner has recorded its timeout
        except Exception as e:  # a reader or search failure fails this question, recorded
            status = (
                "timeout"
                if "timed out" in str(e).lower() or "timeout" in type(e).__name__.lower()
                else "error"
            )
            return self._failed_question(item, q, f"{type(e).__name__}: {e}", status, extra)
        metrics += self._scores(q, hypothesis)
        verdicts = self._judge(q, hypothesis)
        t_judge = sum(v.ms for v in verdicts)
        extra["judge_ms"] = t_judge if verdicts else None
        extra["judges"] = {v.judge: v.as_dict() for v in verdicts}
        for v in verdicts:
            metrics.append(
                {
                    "name": f"judge:{v.judge}",
                    "value": None if v.correct is None else float(v.correct),
                }
            )
            for k, n in v.tokens.items():
                tokens[f"judge_{k}"] = tokens.get(f"judge_{k}", 0) + n
        # Plain data: the log writer serialises it as is and the run's summary reads it
        # back validated, so building a model here would validate every question twice.
        return {
            "item_id": item.id,
            "index": item.index,
            "step": q.id,
            "success": self._success(q, hypothesis, verdicts, metrics),
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
                [turns[e] for e in q.relevant_ids if e in turns], self.reader_budget
            )
            extra["dropped_for_budget"] = dropped
            return chosen, None
        if self.baseline == "full-context":
            chosen, dropped = P.select_context(
                list(turns.values()), self.reader_budget, newest_first=True
            )
            extra["dropped_for_budget"] = dropped
            return chosen, None
        depth = max((self.top_k, *self.turn_ks))
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
        top = [turns[i] for i in dedupe(i for i, _ in ranking[: self.top_k])]
        chosen, dropped = P.select_context(top, self.reader_budget)
        extra["dropped_for_budget"] = dropped
        return chosen, ranking

    def _scores(self, q: Query, hypothesis: str) -> list[dict[str, Any]]:
        """Token F1 and BLEU-1 (LoCoMo's definitions; subclasses add their own)."""
        gold = q.answer
        f1 = qa.locomo_f1(hypothesis, gold, None) if gold is not None else None
        b = qa.bleu1(hypothesis, gold) if gold is not None else None
        return [{"name": "f1", "value": f1}, {"name": "bleu1", "value": b}]

    def judge_gold(self, q: Query) -> str | None:
        """The gold a judge compares with (``None``: this question is not judged)."""
        return q.answer

    def _judge(self, q: Query, hypothesis: str) -> list[J.Verdict]:
        gold = self.judge_gold(q)
        if gold is None or not self.judges:
            return []
        abstention = bool(q.metadata.get("abstention"))
        return [
            J.judge_once(
                self._judge_llms[spec.name],
                spec,
                question=q.text,
                gold=gold,
                response=hypothesis,
                question_type=q.type,
                abstention=abstention,
            )
            for spec in self.judges
        ]

    def _success(
        self, q: Query, hypothesis: str, verdicts: list[J.Verdict], metrics: list[dict[str, Any]]
    ) -> bool:
        if verdicts:
            return verdicts[0].correct is True
        f1 = next((m["value"] for m in metrics if m["name"] == "f1"), None)
        return f1 is not None and f1 >= 0.5
