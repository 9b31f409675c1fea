"""Reading a corpus: Markdown and text files, front matter stripped, split at paragraphs."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from mnemometer.errors import MnemometerError

SUFFIXES = (".md", ".markdown", ".txt")
"""File suffixes read from a corpus directory (case-insensitive)."""
_FRONT_MATTER = re.compile(
    r"\A(?:\ufeff)?---[ \t]*\r?\n.*?\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL
)
_PARAGRAPH = re.compile(r"\n[ \t]*\n+")
_SENTENCE = re.compile(r"(?<=[.!?。！？；;])\s*")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One piece of a corpus file, sent to the LLM on its own."""

    file: str
    """Path relative to the corpus root, with ``/`` separators."""
    index: int
    """Position of the chunk in its file (0-based)."""
    count: int
    """Chunks in the file."""
    text: str
    """The chunk's text (whole paragraphs)."""
    file_hash: str
    """SHA-256 of the file's bytes: the checkpoint key, with ``file`` and ``index``."""
    category: str
    """Directory of the file relative to the root ("" at the root): the category label."""

    @property
    def key(self) -> str:
        """Checkpoint key: relative path, content hash and position (never the basename)."""
        return f"{self.file}#{self.file_hash[:16]}#{self.index}/{self.count}"


@dataclass(frozen=True, slots=True)
class Corpus:
    """The readable chunks of a corpus and the files that were skipped."""

    root: Path
    chunks: list[Chunk]
    files: int
    skipped: list[tuple[str, str]]
    """``(relative path, reason)`` of every file that could not be used."""


def read_corpus(root: Path, max_chars: int = 3000) -> Corpus:
    """Read every Markdown/text file under ``root`` (recursively) and split it into chunks.

    Raises:
        MnemometerError: ``root`` is not a directory, or it holds no readable text.
    """
    if not root.is_dir():
        raise MnemometerError(f"{root}: not a directory; pass the folder holding the corpus")
    chunks: list[Chunk] = []
    skipped: list[tuple[str, str]] = []
    files = 0
    paths = sorted(p for p in root.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file())
    for path in paths:
        rel = path.relative_to(root).as_posix()
        try:
            raw = path.read_bytes()
        except OSError as e:
            skipped.append((rel, f"cannot read: {e.strerror}"))
            continue
        if b"\x00" in raw[:8192]:
            skipped.append((rel, "binary file"))
            continue
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            skipped.append((rel, f"not UTF-8 text ({e.reason} at byte {e.start})"))
            continue
        body = strip_front_matter(text).strip()
        if not body:
            skipped.append((rel, "no text"))
            continue
        files += 1
        digest = hashlib.sha256(raw).hexdigest()
        category = path.parent.relative_to(root).as_posix()
        pieces = split_paragraphs(body, max_chars)
        chunks.extend(
            Chunk(rel, i, len(pieces), piece, digest, "" if category == "." else category)
            for i, piece in enumerate(pieces)
        )
    if not chunks:
        found = f"{len(paths)} candidate files, all skipped" if paths else "no .md/.txt files"
        detail = "; ".join(f"{f}: {why}" for f, why in skipped[:3])
        raise MnemometerError(
            f"{root}: empty corpus ({found}){': ' + detail if detail else ''}; "
            f"build reads {', '.join(SUFFIXES)} files recursively"
        )
    return Corpus(root, chunks, files, skipped)


def strip_front_matter(text: str) -> str:
    """Remove a leading YAML front-matter block (``---`` ... ``---``)."""
    return _FRONT_MATTER.sub("", text, count=1)


def split_paragraphs(text: str, max_chars: int) -> list[str]:
    """Split ``text`` into chunks of whole paragraphs of at most ``max_chars`` each.

    Nothing is dropped: a paragraph longer than ``max_chars`` is split at sentence ends, and
    a sentence longer still at the last space before ``max_chars`` (or at ``max_chars``).
    """
    if max_chars < 200:
        raise MnemometerError(f"chunk size must be at least 200 characters, got {max_chars}")
    units: list[str] = []
    for para in _PARAGRAPH.split(text):
        para = para.strip()
        if not para:
            continue
        if len(para) <= max_chars:
            units.append(para)
            continue
        for sentence in _SENTENCE.split(para):
            while len(sentence) > max_chars:
                cut = sentence.rfind(" ", max_chars // 2, max_chars)  # a word boundary if any
                cut = cut if cut > 0 else max_chars
                units.append(sentence[:cut].strip())
                sentence = sentence[cut:]
            if sentence.strip():
                units.append(sentence.strip())
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for unit in units:
        if current and size + 2 + len(unit) > max_chars:
            chunks.append("\n\n".join(current))
            current, size = [], 0
        current.append(unit)
        size += len(unit) + (2 if size else 0)
    if current:
        chunks.append("\n\n".join(current))
    return chunks
