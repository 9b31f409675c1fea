"""LLM judges, pinned: model, full prompt text and its hash, temperature, tokens, schema.

A judge is a :class:`JudgeSpec`: a family of prompts (one per question type where the
family has several), a response schema that constrains the verdict to a label (so a small
local model can serve as a plumbing judge), the temperature and the token cap. Its
:attr:`JudgeSpec.prompt_hash` covers every prompt, the schema and the settings: a run log
records it beside the model, so a number can always be traced to the exact judge.

Families (``JUDGES``):

* ``lenient``: mem0's evaluation prompt (the field's "J"), verbatim (mem0ai/mem0
  ``evaluation/metrics/llm_judge.py``, Apache-2.0). Generous by design: "as long as it
  touches on the same topic".
* ``strict``: ours. Correct only when the response states the gold answer, with no
  contradiction, no hedging between candidates and no unrequested alternatives.
* ``longmemeval``: LongMemEval's per-type prompts, verbatim (xiaowu0162/LongMemEval
  ``src/evaluation/evaluate_qa.py``, MIT): default types, temporal reasoning (off-by-one
  day counts forgiven), knowledge update (stale information tolerated beside the update),
  preference (a rubric), abstention (must identify the question as unanswerable).
* ``letta-rubric``: Letta's SimpleQA-style rubric for the core-memory update set. Its text
  is not shipped: it is read from ``core_memory_update_rubric.txt`` beside the dataset
  (or a file you name) and pinned by its hash like the others.
* ``zep``: Zep's LoCoMo grader (getzep/zep-papers ``locomo_eval/zep_locomo_eval.py``: mem0's
  prompt re-indented behind a system prompt). The repository is CC BY-NC-SA 4.0, so its text
  is not shipped either: it is read from your copy (``--protocol-source``), as the ``zep``
  protocol says (:mod:`mnemometer.protocols`).

The verdict is asked for as JSON (``{"label": ...}`` with an enum), and both the verdict
and the raw reply are returned, so a reply that is not valid JSON is a recorded failure,
never a silent "wrong".

The answer being judged reaches the judge as a JSON string literal (quotes and newlines
escaped): the prompt text stays verbatim, and an answer cannot close its own field to write
the judge's protocol (a line "Gold answer: yes" after its answer) into the prompt.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mnemometer.errors import MnemometerError

LENIENT_PROMPT = """
Your task is to label an answer to a question as ’CORRECT’ or ’WRONG’. You will be given the following data:
    (1) a question (posed by one user to another user), 
    (2) a ’gold’ (ground truth) answer, 
    (3) a generated answer
which you will score as CORRECT/WRONG.

The point of the question is to ask about something one user should know about the other user based on their prior conversations.
The gold answer will usually be a concise and short answer that includes the referenced topic, for example:
Question: Do you remember what I got the last time I went to Hawaii?
Gold answer: A shell necklace
The generated answer might be much longer, but you should be generous with your grading - as long as it touches on the same topic as the gold answer, it should be counted as CORRECT. 

For time related questions, the gold answer will be a specific date, month, year, etc. The generated answer might be much longer or use relative time references (like "last Tuesday" or "next month"), but you should be generous with your grading - as long as it refers to the same date or time period as the gold answer, it should be counted as CORRECT. Even if the format differs (e.g., "May 7th" vs "7 May"), consider it CORRECT if it's the same date.

Now it's time for the real question:
Question: {question}
Gold answer: {gold}
Generated answer: {response}

First, provide a short (one sentence) explanation of your reasoning, then finish with CORRECT or WRONG. 
Do NOT include both CORRECT and WRONG in your response, or it will break the evaluation script.

Just return the label CORRECT or WRONG in a json format with the key as "label".
"""

STRICT_PROMPT = """You are a strict grader. Label a response to a question as CORRECT or WRONG.

The response is CORRECT only if all of these hold:
- it states the information in the gold answer (wording, word order and date formats may differ);
- it contradicts nothing in the gold answer;
- it commits to one answer: listing several candidates, hedging between alternatives or adding unrequested guesses is WRONG;
- it does not deny or negate the gold answer.
Being on the same topic is not enough. A response that says it does not know is WRONG.

Question: {question}
Gold answer: {gold}
Response: {response}

Return the label CORRECT or WRONG in a json format with the key as "label".
"""

_LME_HEAD = "I will give you a question, a correct answer, and a response from a model. Please answer yes if the response contains the correct answer. Otherwise, answer no. "
_LME_STEPS = "If the response is equivalent to the correct answer or contains all the intermediate steps to get the correct answer, you should also answer yes. If the response only contains a subset of the information required by the answer, answer no. "
_LME_TAIL = "\n\nQuestion: {question}\n\nCorrect Answer: {gold}\n\nModel Response: {response}\n\nIs the model response correct? Answer yes or no only."
LONGMEMEVAL_PROMPTS: dict[str, str] = {
    "default": _LME_HEAD + _LME_STEPS + _LME_TAIL,
    "temporal-reasoning": _LME_HEAD
    + _LME_STEPS
    + "In addition, do not penalize off-by-one errors for the number of days. If the question asks for the number of days/weeks/months, etc., and the model makes off-by-one errors (e.g., predicting 19 days when the answer is 18), the model's response is still correct. "
    + _LME_TAIL,
    "knowledge-update": _LME_HEAD
    + "If the response contains some previous information along with an updated answer, the response should be considered as correct as long as the updated answer is the required answer."
    + _LME_TAIL,
    "single-session-preference": "I will give you a question, a rubric for desired personalized response, and a response from a model. Please answer yes if the response satisfies the desired response. Otherwise, answer no. The model does not need to reflect all the points in the rubric. The response is correct as long as it recalls and utilizes the user's personal information correctly.\n\nQuestion: {question}\n\nRubric: {gold}\n\nModel Response: {response}\n\nIs the model response correct? Answer yes or no only.",
    "abstention": "I will give you an unanswerable question, an explanation, and a response from a model. Please answer yes if the model correctly identifies the question as unanswerable. The model could say that the information is incomplete, or some other information is given but the asked information is not.\n\nQuestion: {question}\n\nExplanation: {gold}\n\nModel Response: {response}\n\nDoes the model correctly identify the question as unanswerable? Answer yes or no only.",
}
"""LongMemEval's judge prompts by question type (``default`` for the other types)."""

LETTA_RUBRIC_FILE = "core_memory_update_rubric.txt"
"""Where Letta's rubric lives beside the update set (never shipped in this package)."""

_LETTA_TAIL = '\n\nQuestion: {question}\nGold target: {gold}\nPredicted answer: {response}\n\nReturn the score (1 or 0) in a json format with the key as "label".'


RESPONSE_ENCODING = "json-string"
"""How the judged answer is inserted into a prompt (part of every judge's hash)."""


def quote_response(response: str) -> str:
    """The answer as a JSON string literal: one line, its own quotes escaped."""
    return json.dumps(response, ensure_ascii=False)


@dataclass(frozen=True)
class JudgeSpec:
    """A pinned judge: prompts, the verdict labels and schema, and the call settings.

    Attributes:
        name: the name a run uses (``lenient``, ``strict``, ``longmemeval``, ...).
        family: where the prompts come from, in words.
        prompts: prompt templates by question type; ``default`` serves the others. Each
            has ``{question}``, ``{gold}`` and ``{response}`` fields.
        labels: ``(correct, wrong)`` values of the verdict.
        temperature: sampling temperature (0).
        max_tokens: reply cap.
        model: the judge's own model (``--judge lenient@smollm2``); ``None`` means the
            run's judge model. Not in :attr:`prompt_hash`: the model is recorded beside it.
        system: a system message sent before the prompt (Zep's grader has one); hashed
            when set.
    """

    name: str
    family: str
    prompts: dict[str, str]
    labels: tuple[Any, Any] = ("CORRECT", "WRONG")
    temperature: float = 0.0
    max_tokens: int = 64
    key: str = "label"
    model: str | None = None
    system: str | None = None

    @property
    def schema(self) -> dict[str, Any]:
        """The JSON schema the verdict is constrained by."""
        return {
            "type": "object",
            "properties": {self.key: {"enum": list(self.labels)}},
            "required": [self.key],
        }

    @property
    def prompt_hash(self) -> str:
        """SHA-256 of every prompt, the schema and the call settings (canonical JSON)."""
        doc = {
            "prompts": self.prompts,
            "schema": self.schema,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "response": RESPONSE_ENCODING,
        }
        if self.system is not None:
            doc["system"] = self.system
        return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()

    def prompt_for(self, question_type: str | None, abstention: bool = False) -> str:
        """The template for a question of this type."""
        if abstention and "abstention" in self.prompts:
            return self.prompts["abstention"]
        return self.prompts.get(question_type or "default", self.prompts["default"])

    def record(self, model: str | None) -> dict[str, Any]:
        """What a run log records about this judge (full prompt text included)."""
        out = {
            "name": self.name,
            "family": self.family,
            "model": model,
            "prompt_sha256": self.prompt_hash,
            "prompts": self.prompts,
            "schema": self.schema,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.system is not None:
            out["system"] = self.system
        return out

    def messages(self, prompt: str) -> list[dict[str, str]]:
        """The chat messages of one verdict: the system message, if any, then the prompt."""
        head = [{"role": "system", "content": self.system}] if self.system is not None else []
        return [*head, {"role": "user", "content": prompt}]


def builtin_judges() -> dict[str, JudgeSpec]:
    """The judges that need no file: ``lenient``, ``strict``, ``longmemeval``."""
    return {
        "lenient": JudgeSpec(
            "lenient", "mem0 evaluation LLM judge (J), verbatim", {"default": LENIENT_PROMPT}
        ),
        "strict": JudgeSpec("strict", "mnemometer strict judge", {"default": STRICT_PROMPT}),
        "longmemeval": JudgeSpec(
            "longmemeval",
            "LongMemEval evaluate_qa.py per-type prompts, verbatim",
            dict(LONGMEMEVAL_PROMPTS),
            labels=("yes", "no"),
            max_tokens=10,
            key="answer",
        ),
    }


JUDGE_NAMES = ("lenient", "strict", "longmemeval", "letta-rubric", "zep")
"""Every judge name a run accepts."""

_ZEP_TEXTS = ("judge_system", "judge_prompt")
"""The ``zep`` protocol's texts that make Zep's grader."""


def _zep_protocol() -> Any:
    from dataclasses import replace as _replace

    from mnemometer.protocols import get_protocol

    p = get_protocol("zep")
    return _replace(p, texts={k: p.texts[k] for k in _ZEP_TEXTS})


def judge_source(names: Sequence[str], roots: Sequence[Path]) -> str | None:
    """The file a run's judges read unshipped prompts from (Zep's grader), else ``None``.

    Raises:
        MnemometerError: a ``zep`` judge whose file is not under ``roots``.
    """
    if not any(n.partition("@")[0] == "zep" for n in names):
        return None
    from mnemometer.protocols._upstream import find_file

    p = _zep_protocol()
    src = p.needs()[0]
    found = find_file(src.path, list(roots))
    if found is None:
        where = ", ".join(str(r) for r in roots)
        raise MnemometerError(
            f"--judge zep reads Zep's grader from your copy of {src.repository} ({src.licence}: "
            f"not shipped): {src.path} at commit {src.commit[:7]} was not found (looked in "
            f"{where}); pass --protocol-source with the checkout or the file"
        )
    return str(found)


def zep_judge(source: str | Path) -> JudgeSpec:
    """Zep's LoCoMo grader, its prompts read from ``source`` (your copy of the file).

    Raises:
        MnemometerError: the file has no grader where the ``zep`` protocol says.
    """
    p = _zep_protocol().resolve([Path(source)])
    return JudgeSpec(
        "zep",
        "Zep's LoCoMo grader (getzep/zep-papers zep_locomo_eval.py), read from your copy",
        {"default": p.text("judge_prompt")},
        max_tokens=64,
        key="is_correct",
        system=p.text("judge_system"),
    )


def letta_rubric_judge(rubric_file: str | Path) -> JudgeSpec:
    """Letta's rubric judge, its text read from ``rubric_file``.

    Raises:
        MnemometerError: the file cannot be read.
    """
    path = Path(rubric_file)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise MnemometerError(
            f"{path}: cannot read Letta's rubric ({e.strerror}); it ships beside the update "
            f"set as {LETTA_RUBRIC_FILE}"
        ) from None
    template = text.replace("{", "{{").replace("}", "}}") + _LETTA_TAIL
    return JudgeSpec(
        "letta-rubric",
        f"Letta core-memory update rubric ({path.name})",
        {"default": template},
        labels=(1, 0),
        max_tokens=64,
    )


def resolve_judges(
    names: Sequence[str],
    rubric_file: str | Path | None = None,
    source: str | Path | None = None,
) -> list[JudgeSpec]:
    """The judges named, in order, without repeats.

    ``source`` is the file Zep's grader is read from (:func:`judge_source`); without
    one, ``rubric_file`` serves (a ``zep`` judge records its file as its rubric).

    Raises:
        MnemometerError: an unknown name (with the known ones), ``letta-rubric`` without
            a readable rubric, or ``zep`` without its file.
    """
    from mnemometer.errors import did_you_mean

    known = builtin_judges()
    out: list[JudgeSpec] = []
    for full in dict.fromkeys(names):
        name, _, model = full.partition("@")
        if "@" in full and not model:
            raise MnemometerError(f"judge {full!r}: name a model after '@' (lenient@MODEL)")
        if name == "letta-rubric":
            if rubric_file is None:
                raise MnemometerError(
                    f"--judge letta-rubric needs Letta's rubric: {LETTA_RUBRIC_FILE} beside "
                    "the dataset, or --rubric FILE"
                )
            spec = letta_rubric_judge(rubric_file)
        elif name == "zep":
            source = source or rubric_file
            if source is None:
                raise MnemometerError(
                    "--judge zep needs your copy of Zep's grader (getzep/zep-papers, not "
                    "shipped): pass --protocol-source with the checkout or the file"
                )
            spec = zep_judge(source)
        elif name in known:
            spec = known[name]
        else:
            raise MnemometerError(
                f"unknown judge {name!r}{did_you_mean(name, list(JUDGE_NAMES))}; judges: "
                + ", ".join(JUDGE_NAMES)
            )
        out.append(replace(spec, name=full, model=model) if model else spec)
    return out


def judge_endpoints(entries: Sequence[str]) -> dict[str, str]:
    """``MODEL=URL`` entries (``--judge-endpoint``) as model -> endpoint root.

    Raises:
        MnemometerError: an entry without ``=``, an empty model or URL, or a model named
            twice with different URLs (the same pair twice is accepted).
    """
    out: dict[str, str] = {}
    for entry in entries:
        model, _, url = entry.partition("=")
        model, url = model.strip(), url.strip()
        if not model or not url:
            raise MnemometerError(
                f"--judge-endpoint {entry!r}: expected MODEL=URL, e.g. "
                "smollm2=http://127.0.0.1:8080/v1"
            )
        if out.get(model, url) != url:
            raise MnemometerError(f"--judge-endpoint: model {model!r} named twice")
        out[model] = url
    return out


@dataclass(frozen=True)
class Verdict:
    """One judge's verdict on one answer.

    Attributes:
        judge: the judge's name.
        correct: the verdict; ``None`` when the reply could not be read (see ``error``).
        raw: the judge's reply, exactly as received.
        error: why there is no verdict (invalid JSON, a label outside the schema, a call
            that failed).
        tokens: prompt and completion tokens of the call (as first paid, even when cached).
        counted: the same, counted by mnemometer (the judge model's tokenizer or the
            labelled estimate): what the cost summary checks ``tokens`` against.
        cached: the reply came from the LLM cache (a resumed run pays nothing).
        ms: wall time of the call.
    """

    judge: str
    correct: bool | None
    raw: str
    error: str | None = None
    tokens: dict[str, int] = field(default_factory=dict)
    cached: bool = False
    ms: float = 0.0
    counted: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """For a run log's ``extra``."""
        return {
            "correct": self.correct,
            "raw": self.raw,
            "error": self.error,
            "tokens": self.tokens,
            "counted": self.counted,
            "cached": self.cached,
        }


def parse_verdict(spec: JudgeSpec, raw: str) -> tuple[bool | None, str | None]:
    """``(verdict, error)`` from a judge's raw reply; the error names what was wrong."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        return None, f"judge reply is not valid JSON ({e.msg}): {raw[:120]!r}"
    value = data.get(spec.key) if isinstance(data, dict) else None
    for label, verdict in zip(spec.labels, (True, False), strict=True):
        if value == label or (
            isinstance(value, str) and value.strip().lower() == str(label).lower()
        ):
            return verdict, None
    return None, f"judge reply has no {spec.key!r} in {list(spec.labels)}: {raw[:120]!r}"


def judge_once(
    llm: Any,
    spec: JudgeSpec,
    *,
    question: str,
    gold: str,
    response: str,
    question_type: str | None = None,
    abstention: bool = False,
    attempt: int = 0,
) -> Verdict:
    """Ask ``spec``'s judge about one response with ``llm`` (an LLM client).

    ``attempt`` counts the times this verdict was asked for before and failed: it is sent
    as the request's seed, so a retry is a new request (never the failed reply cached).

    Never raises for a bad reply or a failed call: the verdict is ``None`` with the error.
    """
    prompt = spec.prompt_for(question_type, abstention).format(
        question=question, gold=gold, response=quote_response(response)
    )
    t0 = time.perf_counter()
    try:
        reply = llm.chat(
            spec.messages(prompt),
            temperature=spec.temperature,
            max_tokens=spec.max_tokens,
            response_format={"type": "json_object", "schema": spec.schema},
            seed=attempt,
        )
    except Exception as e:  # a failed call is a recorded failure of this verdict
        ms = (time.perf_counter() - t0) * 1000.0
        return Verdict(spec.name, None, "", f"{type(e).__name__}: {e}", ms=ms)
    ms = (time.perf_counter() - t0) * 1000.0
    correct, error = parse_verdict(spec, reply.text)
    return Verdict(
        spec.name,
        correct,
        reply.text,
        error,
        paid_tokens(reply),
        reply.cached,
        ms,
        counted_tokens(reply),
    )


def paid_tokens(reply: Any) -> dict[str, int]:
    """Prompt and completion tokens of a chat reply as first paid (also for a cache hit)."""
    usage = (getattr(reply, "raw", None) or {}).get("usage") or {}
    return {
        "prompt": int(usage.get("prompt_tokens") or 0),
        "completion": int(usage.get("completion_tokens") or 0),
    }


def counted_tokens(reply: Any) -> dict[str, int]:
    """Prompt and completion tokens of a chat reply as mnemometer counted them."""
    usage = getattr(reply, "usage", None)
    counted = getattr(usage, "counted", None)
    return counted() if callable(counted) else {}
