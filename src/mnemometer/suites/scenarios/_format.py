"""Scenario files: JSON Lines, one header line then one line per turn.

::

    {"scenario": "cross_session_recall", "title": "...", "origin": "seed"}
    {"role": "user", "content": "My name is Darrin Smith and I live in Phoenix."}
    {"session": "new"}
    {"role": "user", "content": "What is my name and city?",
     "grade": {"expected": "Darrin Phoenix", "required": ["darrin", "phoenix"], "max_words": 6}}

A ``system`` turn (``{"role": "system", "content": "..."}``) sets a persona instruction for
the current and later sessions. ``{"session": "new"}`` is a real session break: the agent's
chat history is dropped and recall must come from memory. Every error names the file and
line.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field, ValidationError, field_validator

from mnemometer._jsonl import decode, json_objects, read_file
from mnemometer.config import StrictModel
from mnemometer.errors import MnemometerError

DATA_DIR = Path(__file__).parent / "data"


class ScenarioError(MnemometerError):
    """A scenario file is missing or malformed."""


class _Frozen(StrictModel):
    model_config = ConfigDict(frozen=True)


class Grade(_Frozen):
    """How one reply is graded (docs/scenarios.md, "Grading")."""

    expected: str = Field(min_length=1)
    """This turn's own reference answer (for similarity; never shown to the agent)."""
    required: list[str] = Field(default_factory=list)
    """Keywords the reply must assert, as whole words. ``a|b`` lists accepted
    alternatives: synonyms and right paraphrases ("no|nope", "choice|choice-branded")."""
    forbidden: list[str] = Field(default_factory=list)
    """Keywords whose assertion fails the turn (a mention marked former or denied does not
    count)."""
    competitors: list[str] = Field(default_factory=list)
    """The other candidate values the scenario itself offers for this answer (the old
    employer, the other hotel chain, the other tier); asserting one fails the turn, as a
    forbidden keyword does. Another e-mail, time, weekday, month or number than a required
    one competes without being listed."""
    allowed: list[str] = Field(default_factory=list)
    """Words a right answer may list beside the answer without hedging ("Arizona" after
    "Phoenix"). Words of the conversation so far are always allowed."""
    negative: bool = False
    """The question asks what to exclude ("what must my dinner not contain?"): a keyword
    counts when the reply denies it ("no meat") or names it alone in a list ("meat,
    peanuts"), not when it asserts it in a clause ("you can eat meat")."""
    ordered: bool = False
    """Required keywords must appear in the order listed."""
    max_words: int | None = Field(default=None, ge=1)
    """Word limit for the full score (longer correct replies score 0.5)."""
    grader: Literal["keywords", "persona"] = "keywords"
    """``keywords`` (the seed's generic grade) or ``persona`` (fact plus a formal marker)."""
    markers: list[str] | None = None
    """Persona markers (whole words); default: sir, ma'am, madam, mister, mr, mrs, ms, miss."""
    rescue: bool = True
    """Whether the similarity rescue may lift a 0.0 to 0.5 (never for ``persona``, and
    never for an exact answer: an e-mail, time, weekday, month, number or yes/no)."""

    @field_validator("required", "forbidden", "competitors", "allowed")
    @classmethod
    def _no_blank(cls, v: list[str]) -> list[str]:
        if any(not k.strip() or not all(a.strip() for a in k.split("|")) for k in v):
            raise ValueError("keywords must not be blank")
        return v


class Header(_Frozen):
    """The first line of a scenario file."""

    scenario: str = Field(min_length=1, pattern=r"^[a-z0-9_]+$")
    """Stable id (lower-case, digits, underscores)."""
    title: str = ""
    """One line for people."""
    origin: str = "custom"
    """``seed`` (as the seed benchmark's code runs it), ``seed-docs`` (its documents'
    alternative version) or ``custom``."""
    notes: str = ""
    """What differs from the origin, and why."""


class Turn(_Frozen):
    """A message turn."""

    role: Literal["user", "system"]
    """``user`` messages go to the agent; ``system`` sets a persona instruction."""
    content: str = Field(min_length=1)
    """The text."""
    grade: Grade | None = None
    """Present on graded user turns."""


class SessionBreak(_Frozen):
    """A real session boundary."""

    session: Literal["new"]
    """Always ``new``."""


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a loaded scenario."""

    kind: str
    """``user``, ``system`` or ``session``."""
    content: str = ""
    grade: Grade | None = None
    line: int = 0
    context: str = ""
    """For a graded turn: every user and system message up to and including it (the
    values the conversation has mentioned, for the hedge check)."""


@dataclass(frozen=True, slots=True)
class Scenario:
    """A loaded scenario."""

    id: str
    title: str
    origin: str
    steps: tuple[Step, ...]
    source: str
    sha256: str

    @property
    def graded(self) -> int:
        """How many turns are graded."""
        return sum(1 for s in self.steps if s.grade is not None)

    @property
    def graded_steps(self) -> list[Step]:
        """The graded turns, in order."""
        return [s for s in self.steps if s.grade is not None]


def _where(path: Path, line: int) -> str:
    return f"{path}:{line}"


def _explain(e: ValidationError) -> str:
    parts = []
    for err in e.errors():
        loc = ".".join(str(x) for x in err["loc"])
        parts.append(f"{loc}: {err['msg']}" if loc else err["msg"])
    return "; ".join(parts)


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate one scenario file.

    Raises:
        ScenarioError: naming the file and line of the first problem.
    """
    path = Path(path)
    raw = read_file(path, ScenarioError, "scenario file")
    text = decode(raw, path, ScenarioError)
    header: Header | None = None
    steps: list[Step] = []
    for n, obj in json_objects(text, path, ScenarioError, what="a scenario line"):
        try:
            if header is None:
                header = Header.model_validate(obj)
            elif "session" in obj:
                SessionBreak.model_validate(obj)
                steps.append(Step("session", line=n))
            else:
                turn = Turn.model_validate(obj)
                if turn.role == "system" and turn.grade is not None:
                    raise ScenarioError(f"{_where(path, n)}: a system turn cannot be graded")
                said = "\n".join(s.content for s in steps if s.content)
                context = f"{said}\n{turn.content}" if turn.grade is not None else ""
                steps.append(Step(turn.role, turn.content, turn.grade, n, context))
        except ValidationError as e:
            what = "header" if header is None else "turn"
            raise ScenarioError(f"{_where(path, n)}: invalid {what}: {_explain(e)}") from None
    if header is None:
        raise ScenarioError(f"{path}: empty scenario file (the first line is the header)")
    if not any(s.grade is not None for s in steps):
        raise ScenarioError(f"{path}: scenario {header.scenario!r} has no graded turn")
    return Scenario(
        header.scenario,
        header.title,
        header.origin,
        tuple(steps),
        str(path),
        hashlib.sha256(raw).hexdigest(),
    )


def load_scenarios(
    source: str | Path | None = None, only: Iterable[str] | None = None
) -> list[Scenario]:
    """Load every ``*.jsonl`` scenario of a directory (default: the packaged thirteen).

    The packaged ``order.json`` fixes the order; other files follow by name.

    Raises:
        ScenarioError: a missing directory, a malformed file, a duplicate or unknown id.
    """
    folder = Path(source) if source is not None else DATA_DIR
    if folder.is_file():
        files = [folder]
    elif folder.is_dir():
        files = sorted(folder.glob("*.jsonl"))
    else:
        raise ScenarioError(f"{folder}: no such scenario file or directory")
    if not files:
        raise ScenarioError(f"{folder}: no *.jsonl scenario files")
    loaded = [load_scenario(f) for f in files]
    seen: dict[str, str] = {}
    for s in loaded:
        if s.id in seen:
            raise ScenarioError(f"{s.source}: scenario id {s.id!r} also in {seen[s.id]}")
        seen[s.id] = s.source
    order_file = folder / "order.json" if folder.is_dir() else None
    if order_file is not None and order_file.is_file():
        order = json.loads(order_file.read_text(encoding="utf-8"))
        rank = {sid: i for i, sid in enumerate(order)}
        loaded.sort(key=lambda s: (rank.get(s.id, len(rank)), s.id))
    if only is not None:
        wanted = list(only)
        unknown = [w for w in wanted if w not in seen]
        if unknown:
            from mnemometer.errors import did_you_mean

            raise ScenarioError(
                f"unknown scenario {unknown[0]!r}{did_you_mean(unknown[0], list(seen))}; "
                f"known: {', '.join(seen)}"
            )
        loaded = [s for s in loaded if s.id in set(wanted)]
    return loaded
