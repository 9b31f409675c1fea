"""Per-question scorers of the long-conversation benchmarks: answer scores and LLM judges.

Both read a question's record only: the question (``input``), the answer (``output``), the
gold (``extra.gold``), the question's kind (``groups``, ``extra.category``,
``extra.abstention``) and, for MemoryAgentBench, every accepted answer (``extra.answers``)
and the source (``extra.source``). Records written before those fields existed are read by
the rule their benchmark used (LoCoMo's category from its word, LongMemEval's abstention
from the ``_abs`` id suffix), so an old run re-scores to the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from mnemometer.errors import MnemometerError
from mnemometer.scoring import judges as J
from mnemometer.scoring import memoryagentbench as mab
from mnemometer.scoring import qa
from mnemometer.scoring._scorer import BaseScorer, Scores

LOCOMO_CODES = {
    "multi-hop": 1,
    "temporal": 2,
    "open-domain": 3,
    "single-hop": 4,
    "adversarial": 5,
}
"""LoCoMo's category words (as the run log groups them) and their codes."""

BENCHMARKS = ("qa", "locomo", "letta-core-memory", "memoryagentbench")
"""The answer rules: LoCoMo's F1 and BLEU-1 (``qa``) and each benchmark's own."""


def category(record: dict[str, Any]) -> int | None:
    """A LoCoMo question's category code (``extra.category``, else from its word)."""
    extra = record.get("extra") or {}
    if extra.get("category") is not None:
        return int(extra["category"])
    return LOCOMO_CODES.get((record.get("groups") or {}).get("category", ""))


class Answer(BaseScorer):
    """A question's answer against its gold, by its benchmark's own rule (``answer``).

    * ``qa``: LoCoMo's official token F1 and BLEU-1 (every benchmark reports them);
    * ``locomo``: the same, per category (category 1 splits gold on commas; category 3 drops
      the part after ';'), and category 5 by the "not mentioned" rule (``adversarial``);
    * ``letta-core-memory``: F1, BLEU-1 and Letta's read-set check, the answer contains the
      truth (``contains``);
    * ``memoryagentbench``: substring exact match, exact match and F1 against every accepted
      answer, and ``score``, the benchmark's metric for the question's source.

    Args:
        benchmark: one of :data:`BENCHMARKS`.
        official: LoCoMo only: also write ``locomo_score``, LoCoMo's own score of every
            question (its category's F1 rule; category 5's "not mentioned" rule), which its
            evaluation averages over all five categories (the ``locomo-official`` protocol).
    """

    name: ClassVar[str] = "answer"
    version: ClassVar[str] = "1"

    def __init__(self, benchmark: str = "qa", official: bool = False) -> None:
        if benchmark not in BENCHMARKS:
            raise MnemometerError(
                f"answer: unknown benchmark {benchmark!r}; one of {', '.join(BENCHMARKS)}"
            )
        if official and benchmark != "locomo":
            raise MnemometerError("answer: official=True is LoCoMo's score (benchmark locomo)")
        self.benchmark = benchmark
        self.official = official

    def args(self) -> dict[str, Any]:
        """The benchmark whose rule applies (and ``official`` when set)."""
        return {"benchmark": self.benchmark, **({"official": True} if self.official else {})}

    def outputs(self) -> list[str]:
        """The metric names this scorer writes."""
        return {
            "qa": ["f1", "bleu1"],
            "locomo": ["f1", "bleu1", "adversarial"],
            "letta-core-memory": ["f1", "bleu1", "contains"],
            "memoryagentbench": ["score", "substring_exact_match", "exact_match", "f1"],
        }[self.benchmark] + (["locomo_score"] if self.official else [])

    def score(self, record: dict[str, Any]) -> list[dict[str, Any]]:
        """The answer's scores (a question whose reader call failed gets none)."""
        if record.get("status", "ok") != "ok":
            return []
        hypothesis = record.get("output") or ""
        gold = (record.get("extra") or {}).get("gold")
        if self.benchmark == "memoryagentbench":
            return _mab_scores(record, hypothesis, gold)
        if self.benchmark == "locomo":
            cat = category(record)
            if cat == 5:
                adv = qa.adversarial_score(hypothesis)
                return [{"name": "adversarial", "value": adv}, *self._official(adv)]
            f1 = qa.locomo_f1(hypothesis, gold, cat)
            gold_text = qa.locomo_gold(gold, cat) if gold is not None else None
            b = qa.bleu1(hypothesis, gold_text) if gold_text is not None else None
            return [{"name": "f1", "value": f1}, {"name": "bleu1", "value": b}, *self._official(f1)]
        f1 = qa.locomo_f1(hypothesis, gold, None) if gold is not None else None
        b = qa.bleu1(hypothesis, gold) if gold is not None else None
        out = [{"name": "f1", "value": f1}, {"name": "bleu1", "value": b}]
        if self.benchmark == "letta-core-memory":
            contains = qa.contains_answer(hypothesis, gold) if gold is not None else None
            out.append({"name": "contains", "value": float(contains)})
        return out

    def _official(self, value: float | None) -> list[dict[str, Any]]:
        return [{"name": "locomo_score", "value": value}] if self.official else []


def _mab_scores(record: dict[str, Any], hypothesis: str, gold: str | None) -> list[dict]:
    extra = record.get("extra") or {}
    golds = list(extra.get("answers") or [gold or ""])
    source = str(extra.get("source") or (record.get("groups") or {}).get("type", ""))
    official = mab.official_metric(source)
    values = {name: fn(hypothesis, golds) for name, fn in mab.METRICS.items()}
    return [
        {"name": "score", "value": values[official]},
        {"name": "substring_exact_match", "value": values["substring_exact_match"]},
        {"name": "exact_match", "value": values["exact_match"]},
        {"name": "f1", "value": values["f1"]},
    ]


class Judge(BaseScorer):
    """One pinned LLM judge's verdict on a question's answer (``judge``).

    The metric is ``judge:<name>`` (1 correct, 0 wrong, ``None`` when the reply could not be
    read); the verdict with the judge's raw reply goes to ``extra.judges``, its tokens to
    ``tokens`` and its time to ``extra.judge_ms``. A question whose record carries probe
    answers (``extra.probe_answers``: answers known to be wrong,
    :mod:`mnemometer.scoring.benchmark.probes`) has each of them judged the same way too;
    their verdicts go to the verdict's ``probes`` (never into the metric).

    Args:
        judge: the judge's name as a run names it (``lenient``, ``strict@MODEL``, ...).
        rubric: the file a judge's text is read from: Letta's rubric (``letta-rubric``),
            your copy of Zep's grader (``zep``).
        exclude: group key -> values of questions this judge does not judge (LoCoMo's
            category 5, as mem0's J).
        model: the model it asks (recorded; the client comes from ``llm``).
        base_url: the endpoint it asks (recorded).
        llm: the LLM client to ask (context: the run's, or one ``mnemometer score`` builds).
    """

    name: ClassVar[str] = "judge"
    version: ClassVar[str] = "2"

    def __init__(
        self,
        judge: str,
        rubric: str | None = None,
        exclude: dict[str, list[str]] | None = None,
        model: str | None = None,
        base_url: str | None = None,
        llm: Any = None,
        prompt_sha256: str | None = None,
    ) -> None:
        self.spec_ = J.resolve_judges([judge], rubric)[0]
        if prompt_sha256 is not None and prompt_sha256 != self.spec_.prompt_hash:
            raise MnemometerError(
                f"judge {judge!r}: its prompt changed since this run was scored (SHA-256 "
                "differs); score the run again with `mnemometer score`"
            )
        self.judge = judge
        self.rubric = rubric
        self.exclude = {k: list(v) for k, v in (exclude or {}).items()}
        self.llm = llm
        self.model = model if model is not None else getattr(llm, "model", None)
        settings = getattr(llm, "settings", None)
        self.base_url = base_url if base_url is not None else getattr(settings, "base_url", None)

    def args(self) -> dict[str, Any]:
        """The judge, where it is asked, its prompts' hash and what it skips."""
        return {
            "judge": self.judge,
            "rubric": self.rubric,
            "exclude": self.exclude,
            "model": self.model,
            "base_url": self.base_url,
            "prompt_sha256": self.spec_.prompt_hash,
        }

    def texts(self) -> Sequence[str]:
        """Every prompt, the schema and the call settings (through the prompt hash)."""
        return (self.spec_.prompt_hash,)

    def outputs(self) -> list[str]:
        """The metric this scorer writes."""
        return [f"judge:{self.judge}"]

    def strip(self, record: dict[str, Any]) -> dict[str, Any]:
        """``record`` without this judge's verdict, tokens and time."""
        extra = dict(record.get("extra") or {})
        judges = dict(extra.get("judges") or {})
        verdict = judges.pop(self.judge, None)
        mine = f"judge:{self.judge}"
        metrics = [m for m in record.get("metrics") or [] if m["name"] != mine]
        tokens = dict(record.get("tokens") or {})
        if verdict is not None:
            # What the judge's verdict and its probes cost (a record whose judges are all
            # stripped loses every judge token).
            paid = _summed([verdict.get("tokens") or {}, verdict.get("probe_tokens") or {}])
            for k, n in paid.items():
                left = tokens.get(f"judge_{k}", 0) - int(n)
                tokens.pop(f"judge_{k}", None)
                if left > 0:
                    tokens[f"judge_{k}"] = left
        extra["judges"] = judges
        if not judges:
            extra["judges"] = {}
            extra["judge_ms"] = None
            tokens = {k: n for k, n in tokens.items() if not k.startswith("judge_")}
        unscored = [u for u in record.get("unscored") or [] if u != mine]
        return record | {"metrics": metrics, "extra": extra, "tokens": tokens, "unscored": unscored}

    def score(self, record: dict[str, Any]) -> Scores | list[dict[str, Any]]:
        """Ask the judge (a question it skips, or whose answer failed, gets no verdict)."""
        if record.get("status", "ok") != "ok" or not self.judges(record):
            return []
        if self.llm is None:
            raise MnemometerError(f"judge {self.judge!r} has no LLM client to ask")
        extra = record.get("extra") or {}
        groups = record.get("groups") or {}
        qid = str(record.get("step") or record.get("item_id") or "")
        before = (extra.get("judges") or {}).get(self.judge) or {}
        attempt = int(before.get("attempt", 0)) + 1 if before.get("correct") is None else 0
        if not before:
            attempt = 0

        def ask(response: str) -> J.Verdict:
            return J.judge_once(
                self.llm,
                self.spec_,
                question=record.get("input") or "",
                gold=extra["gold"],
                response=response,
                question_type=extra.get("question_type")
                or groups.get("type")
                or groups.get("category"),
                abstention=bool(extra.get("abstention", qid.endswith("_abs"))),
                attempt=attempt,
            )

        v = ask(record.get("output") or "")
        probes = {k: ask(text) for k, text in (extra.get("probe_answers") or {}).items()}
        verdict = v.as_dict()
        if attempt:
            verdict["attempt"] = attempt
        if probes:
            verdict["probes"] = {k: p.correct for k, p in probes.items()}
            verdict["probe_tokens"] = _summed(p.tokens for p in probes.values())
            verdict["probe_counted"] = _summed(p.counted for p in probes.values())
        judges = dict(extra.get("judges") or {})
        judges[v.judge] = verdict
        tokens = dict(record.get("tokens") or {})
        for call in (v, *probes.values()):
            for k, n in call.tokens.items():
                tokens[f"judge_{k}"] = tokens.get(f"judge_{k}", 0) + n
        ms = (extra.get("judge_ms") or 0.0) + v.ms + sum(p.ms for p in probes.values())
        return Scores(
            metrics=[
                {
                    "name": f"judge:{v.judge}",
                    "value": None if v.correct is None else float(v.correct),
                }
            ],
            extra={"judges": judges, "judge_ms": ms},
            tokens=tokens,
            unscored=[f"judge:{v.judge}"] if v.correct is None else [],
        )

    def judges(self, record: dict[str, Any]) -> bool:
        """Whether this judge judges the question (it has a gold and is not excluded)."""
        if (record.get("extra") or {}).get("gold") is None:
            return False
        groups = record.get("groups") or {}
        return not any(groups.get(k) in vs for k, vs in self.exclude.items())


def judge_target(
    judge: J.JudgeSpec, judge_model: str | None, endpoints: dict[str, str], reader: Any
) -> tuple[str, str]:
    """``(model, base_url)`` a judge asks, given the reader's LLM settings.

    A judge without its own model asks ``judge_model`` (default: the reader's) at the
    reader's endpoint; ``NAME@MODEL`` asks MODEL where ``endpoints`` says (default: the
    reader's endpoint). A judge's model of another provider than the reader's
    (``lenient@anthropic/claude-haiku-4-5`` beside a local reader) defaults to that
    provider's own endpoint instead.
    """
    from mnemometer.llm._providers import provider_of

    model = judge.model or judge_model or reader.model
    default = reader.base_url
    if provider_of(model) not in (None, provider_of(reader.model)):
        default = ""  # LiteLLM's endpoint for that provider
    url = endpoints.get(model, default) if judge.model else default
    return model, url


def connect_judges(
    judges: list[J.JudgeSpec], reader: Any, judge_model: str | None, endpoints: dict[str, str]
) -> dict[str, Any]:
    """An LLM client per judge name, one per distinct (endpoint, model), each checked.

    ``reader`` is the reader's client: judges share its settings otherwise (cache,
    timeout), and a judge asking the reader's model at its endpoint shares the client.

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
        model, url = judge_target(j, judge_model, endpoints, base)
        if (url, model) not in clients:
            client = LLMClient.from_settings(replace(base, base_url=url, model=model))
            client.check()
            clients[url, model] = client
        out[j.name] = clients[url, model]
    return out


def _summed(counts: Any) -> dict[str, int]:
    """Token counts added up key by key."""
    out: dict[str, int] = {}
    for c in counts:
        for k, n in c.items():
            out[k] = out.get(k, 0) + int(n)
    return out


__all__ = [
    "BENCHMARKS",
    "LOCOMO_CODES",
    "Answer",
    "Judge",
    "category",
    "connect_judges",
    "judge_target",
]
