"""A protocol: everything a published benchmark number depends on, pinned and hashed.

A :class:`ProtocolSpec` fixes how retrieved memories are written for the reader (the
layout and the date style), how many are retrieved (``top_k``) and how many tokens they may
take, the reader's prompt and decoding (role, temperature, token cap), the judges and the
model they were published with, and which categories the headline counts. Each is read
from a TOML file under ``protocols/data/`` (shipped in the package); its prompts are quoted
there where their licence allows, else the file names where they live upstream
(:class:`Text`) and they are read from your copy (:mod:`mnemometer.protocols._upstream`).

:attr:`ProtocolSpec.sha256` hashes every field but the prose (title, notes, what each
source is): the sources (repository, path, commit, licence), the layout and its version,
the settings, and each prompt through the SHA-256 of its text. A protocol whose prompts are
read from your copy therefore has a known hash before they are read, and the same hash
after exactly when your copy is the pinned upstream text.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from mnemometer.errors import MnemometerError, UnknownNameError, did_you_mean
from mnemometer.protocols._upstream import Place, extract, find_file, sha256_text

DATA = Path(__file__).parent / "data"

LAYOUTS: dict[str, int] = {
    "mnemometer": 1,
    "locomo-rag": 1,
    "mem0": 1,
    "zep": 1,
    "longmemeval": 1,
}
"""How a layout writes the reader's prompt, and its version (bumped when its code changes;
part of every hash): see :mod:`mnemometer.suites.benchmarks._layouts`."""

DATE_STYLES = ("mnemometer", "locomo", "longmemeval", "iso")
"""How a session date is written: ``8 May 2023``, LoCoMo's ``1:56 pm on 8 May, 2023``,
LongMemEval's ``2023/05/08 (Mon) 13:56``, ISO 8601 in UTC (``2023-05-08T13:56:00+00:00``)."""


@dataclass(frozen=True)
class Source:
    """Where a protocol comes from: a file of a public repository at a commit.

    Attributes:
        id: the name the protocol's texts refer to it by.
        repository: ``owner/name`` on GitHub.
        path: the file in the repository.
        commit: the commit it was read at (40 hex digits).
        licence: its licence (SPDX where there is one).
        quoted: whether the texts taken from it ship in this package (the licence allows
            it); otherwise they are read from your copy.
        what: what the protocol takes from it, in words.
    """

    id: str
    repository: str
    path: str
    commit: str
    licence: str
    quoted: bool
    what: str = ""

    def pinned(self) -> dict[str, str]:
        """What the hash covers."""
        return {
            "repository": self.repository,
            "path": self.path,
            "commit": self.commit,
            "licence": self.licence,
        }


@dataclass(frozen=True)
class Text:
    """One prompt (or piece of one) a protocol needs.

    Attributes:
        source: the :class:`Source` id it comes from (``None``: mnemometer's own).
        place: where in that file (:class:`~mnemometer.protocols._upstream.Place`).
        sha256: SHA-256 of the text at the pinned commit.
        text: the text, when it ships (or once read from your copy).
        rename: template fields renamed after reading (``gold_answer`` -> ``gold``).
    """

    source: str | None
    place: str | None
    sha256: str
    text: str | None = None
    rename: dict[str, str] = field(default_factory=dict)

    @property
    def verbatim(self) -> bool | None:
        """Whether the text is the pinned one (``None`` until it is read)."""
        return None if self.text is None else sha256_text(self.text) == self.sha256

    def used(self) -> str:
        """The text as a layout uses it (fields renamed)."""
        if self.text is None:
            raise MnemometerError("a protocol text was used before it was read")
        out = self.text
        for old, new in self.rename.items():
            out = out.replace("{" + old + "}", "{" + new + "}")
        return out


@dataclass(frozen=True)
class ProtocolSpec:
    """A pinned evaluation protocol (see the module docstring).

    Attributes:
        name: its name (``--protocol NAME``).
        title: one line: whose evaluation it is.
        benchmarks: the suites it applies to (empty: every benchmark suite).
        layout: how the reader's prompt is written (:data:`LAYOUTS`).
        dates: how session dates are written (:data:`DATE_STYLES`).
        top_k: memories retrieved for the reader.
        reader_budget: the context's token budget (``None``: no cut, as upstream).
        role: the reader prompt's chat role (``user`` or ``system``).
        temperature: the reader's temperature.
        max_tokens: the reader's token cap (``None``: none sent, the answer not cut).
        judges: the judges it publishes with (``--judge`` replaces them).
        judge_model: the model they were published with (``None``: the reader's).
        exclude: group key -> values the headline leaves out (``None``: the suite's own).
        texts: the prompts by slot (the layout's names).
        sources: where it comes from.
        score: the answer score the headline reads without a judge (``locomo_score``:
            LoCoMo's own, every category); ``None``: the suite's.
        notes: where this transcription departs from upstream, and why.
    """

    name: str
    title: str
    benchmarks: tuple[str, ...]
    layout: str
    dates: str
    top_k: int
    reader_budget: int | None
    role: str
    temperature: float
    max_tokens: int | None
    judges: tuple[str, ...]
    judge_model: str | None
    exclude: dict[str, list[str]] | None
    texts: dict[str, Text]
    sources: tuple[Source, ...]
    score: str | None = None
    notes: tuple[str, ...] = ()

    # ---- hashing ------------------------------------------------------------------------

    def _texts(self) -> dict[str, str]:
        """Slot -> the SHA-256 of its text (as read, else as pinned), with any renaming."""
        return {
            k: (sha256_text(t.text) if t.text is not None else t.sha256)
            + (json.dumps(t.rename, sort_keys=True) if t.rename else "")
            for k, t in sorted(self.texts.items())
        }

    def reader_doc(self) -> dict[str, Any]:
        """Everything the reader's prompt and decoding depend on."""
        return {
            "layout": self.layout,
            "layout_version": LAYOUTS[self.layout],
            "dates": self.dates,
            "role": self.role,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "texts": self._texts(),
        }

    @property
    def sha256(self) -> str:
        """SHA-256 of every field but the prose (see the module docstring)."""
        doc = {
            "name": self.name,
            "benchmarks": list(self.benchmarks),
            "reader": self.reader_doc(),
            "top_k": self.top_k,
            "reader_budget": self.reader_budget,
            "judges": list(self.judges),
            "judge_model": self.judge_model,
            "exclude": self.exclude,
            "score": self.score,
            "sources": [s.pinned() for s in self.sources],
        }
        return _sha(doc)

    @property
    def reader_sha256(self) -> str:
        """Pins the reader: its prompts, layout, dates and decoding.

        mnemometer's own layout keeps the reader hash it had before protocols (its prompt,
        cap and temperature), so runs recorded then resume and compare as before.
        """
        if self.layout == "mnemometer" and self.role == "user" and self.dates == "mnemometer":
            legacy = f"{self.text('prompt')}\nmax_tokens={self.max_tokens}\ntemperature=0"
            if self.temperature == 0:
                return hashlib.sha256(legacy.encode()).hexdigest()
        return _sha(self.reader_doc())

    @property
    def verbatim(self) -> bool | None:
        """Whether every prompt is the pinned upstream text (``None``: some not read yet)."""
        marks = [t.verbatim for t in self.texts.values()]
        return None if None in marks else all(marks)

    # ---- texts --------------------------------------------------------------------------

    def text(self, slot: str) -> str:
        """A prompt, as the layout uses it."""
        return self.texts[slot].used()

    def shipped(self, slot: str) -> bool:
        """Whether a prompt ships in the package (mnemometer's own, or its licence allows)."""
        src = self.source(self.texts[slot].source)
        return src is None or src.quoted

    @property
    def quoted(self) -> bool:
        """Whether every prompt ships in the package."""
        return all(self.shipped(k) for k in self.texts)

    def source(self, sid: str | None) -> Source | None:
        """The source with this id."""
        return next((s for s in self.sources if s.id == sid), None)

    def needs(self) -> list[Source]:
        """The sources whose texts must still be read from your copy."""
        ids = {t.source for t in self.texts.values() if t.text is None}
        return [s for s in self.sources if s.id in ids]

    def resolve(self, roots: list[Path]) -> ProtocolSpec:
        """This protocol with every prompt read: the unshipped ones from your copy.

        ``roots`` are where to look: a checkout of the peer's repository, a folder holding
        its files, or the file itself (``--protocol-source``), tried in order.

        Raises:
            MnemometerError: a file is not found (the message names the repository, the
                path and the commit), or has no string where the protocol says.
        """
        texts = dict(self.texts)
        for slot, t in self.texts.items():
            if t.text is not None:
                continue
            src = self.source(t.source)
            assert src is not None and t.place is not None
            path = find_file(src.path, roots)
            if path is None:
                where = ", ".join(str(r) for r in roots) or "nowhere"
                raise MnemometerError(
                    f"protocol {self.name!r} reads its prompts from your copy of "
                    f"{src.repository} ({src.licence}: they are not shipped): {src.path} at "
                    f"commit {src.commit[:7]} was not found (looked in {where}); pass "
                    "--protocol-source with the checkout or the file"
                )
            texts[slot] = replace(t, text=extract(path, Place(t.place)))
        return replace(self, texts=texts)

    # ---- records ------------------------------------------------------------------------

    def option(self) -> dict[str, Any]:
        """What a run's header records among the suite options."""
        return {"name": self.name, "sha256": self.sha256, "verbatim": self.verbatim}

    def record(self) -> dict[str, Any]:
        """The protocol in full (``pins.json``): every field, every prompt's text."""
        return {
            "name": self.name,
            "title": self.title,
            "sha256": self.sha256,
            "reader_sha256": self.reader_sha256,
            "verbatim": self.verbatim,
            "benchmarks": list(self.benchmarks),
            "layout": {"name": self.layout, "version": LAYOUTS[self.layout]},
            "dates": self.dates,
            "top_k": self.top_k,
            "reader_budget": self.reader_budget,
            "reader": {
                "role": self.role,
                "temperature": self.temperature,
                "max_tokens": self.max_tokens,
            },
            "judges": list(self.judges),
            "judge_model": self.judge_model,
            "exclude": self.exclude,
            "score": self.score,
            "texts": {
                k: {
                    "source": t.source,
                    "place": t.place,
                    "sha256": t.sha256,
                    "shipped": self.shipped(k),
                    "verbatim": t.verbatim,
                    "text": t.text,
                }
                for k, t in self.texts.items()
            },
            "sources": [{**s.pinned(), "quoted": s.quoted, "what": s.what} for s in self.sources],
            "notes": list(self.notes),
        }

    def applies_to(self, suite: str) -> bool:
        """Whether this protocol can run ``suite``."""
        return not self.benchmarks or suite in self.benchmarks


def _sha(doc: Any) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def _text(slot: str, raw: dict[str, Any], where: str) -> Text:
    try:
        return Text(
            source=raw.get("source"),
            place=raw.get("place"),
            sha256=raw["sha256"],
            text=raw.get("text"),
            rename=dict(raw.get("rename") or {}),
        )
    except KeyError as e:
        raise MnemometerError(f"{where}: texts.{slot} has no {e.args[0]!r}") from None


def parse(doc: dict[str, Any], where: str) -> ProtocolSpec:
    """A protocol from its TOML document.

    Raises:
        MnemometerError: a missing field, an unknown layout or date style, or a text whose
            source is not declared.
    """
    try:
        reader = doc.get("reader") or {}
        judging = doc.get("judging") or {}
        spec = ProtocolSpec(
            name=doc["name"],
            title=doc["title"],
            benchmarks=tuple(doc.get("benchmarks") or ()),
            layout=doc["layout"],
            dates=doc["dates"],
            top_k=int(doc["top_k"]),
            reader_budget=doc.get("reader_budget"),
            role=reader.get("role", "user"),
            temperature=float(reader.get("temperature", 0.0)),
            max_tokens=reader.get("max_tokens"),
            judges=tuple(judging.get("judges") or ()),
            judge_model=judging.get("judge_model"),
            exclude=judging.get("exclude"),
            texts={k: _text(k, v, where) for k, v in (doc.get("texts") or {}).items()},
            sources=tuple(Source(**s) for s in doc.get("sources") or ()),
            score=judging.get("score"),
            notes=tuple(doc.get("notes") or ()),
        )
    except (KeyError, TypeError) as e:
        raise MnemometerError(f"{where}: not a protocol ({e})") from None
    if spec.layout not in LAYOUTS:
        raise MnemometerError(f"{where}: unknown layout {spec.layout!r}")
    if spec.dates not in DATE_STYLES:
        raise MnemometerError(f"{where}: unknown date style {spec.dates!r}")
    if spec.role not in ("user", "system"):
        raise MnemometerError(f"{where}: reader role must be user or system")
    for slot, t in spec.texts.items():
        if t.source is not None and spec.source(t.source) is None:
            raise MnemometerError(f"{where}: texts.{slot} names no declared source")
        if t.text is None and (t.source is None or t.place is None):
            raise MnemometerError(f"{where}: texts.{slot} ships no text and says not where")
    return spec


PROTOCOL_NAMES = ("mnemometer", "locomo-official", "mem0", "zep", "longmemeval", "longmemeval-con")
"""The shipped protocols, in the order they are listed (``mnemometer`` is the default)."""

DEFAULT = "mnemometer"
"""The protocol a run follows unless it names one: mnemometer's neutral reader."""


@cache
def get_protocol(name: str) -> ProtocolSpec:
    """A shipped protocol by name (its prompts not yet read from your copy).

    Raises:
        UnknownNameError: no such protocol (with "did you mean").
    """
    if name not in PROTOCOL_NAMES:
        raise UnknownNameError(
            f"unknown protocol {name!r}{did_you_mean(name, list(PROTOCOL_NAMES))}; protocols: "
            + ", ".join(PROTOCOL_NAMES)
        )
    path = DATA / f"{name}.toml"
    return parse(tomllib.loads(path.read_text(encoding="utf-8")), path.name)


def for_suite(suite: str, given: str | dict[str, Any] | None, roots: list[Path]) -> ProtocolSpec:
    """The protocol a run of ``suite`` follows, its prompts read from ``roots``.

    ``given`` is a name (``None``: the default), or on resume the header's record, whose
    hash must still hold. A copy whose prompts differ from the pinned text is accepted
    with a warning: the run records the protocol's hash over the text it used.

    Raises:
        MnemometerError: a protocol of another benchmark, its prompts not found, or (on
            resume) a protocol that changed.
    """
    import warnings

    name = given.get("name", DEFAULT) if isinstance(given, dict) else (given or DEFAULT)
    spec = get_protocol(name)
    if not spec.applies_to(suite):
        fits = [n for n in PROTOCOL_NAMES if get_protocol(n).applies_to(suite)]
        raise MnemometerError(
            f"protocol {name!r} is {', '.join(spec.benchmarks)}'s; for {suite}: " + ", ".join(fits)
        )
    if spec.needs():
        spec = spec.resolve(roots)
    if isinstance(given, dict):
        if given.get("sha256") not in (None, spec.sha256):
            raise MnemometerError(
                f"protocol {name!r} changed since this run started (its SHA-256 differs: "
                "another version of mnemometer, or other prompt files); start a new run"
            )
    elif not spec.verbatim:
        differ = [k for k, t in spec.texts.items() if not t.verbatim]
        with warnings.catch_warnings():  # every run says so, not only a process's first
            warnings.simplefilter("always")
            warnings.warn(
                f"protocol {name!r}: {', '.join(differ)} differ from the text pinned at upstream's "
                f"commit (your copy is another version); the run records the protocol's hash as "
                f"{spec.sha256[:12]}, not {get_protocol(name).sha256[:12]}",
                stacklevel=3,
            )
    return spec


def protocols() -> list[ProtocolSpec]:
    """Every shipped protocol, in :data:`PROTOCOL_NAMES` order."""
    return [get_protocol(n) for n in PROTOCOL_NAMES]
