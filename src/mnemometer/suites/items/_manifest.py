"""Suite directories: ``suite.toml`` (the manifest) plus ``items.jsonl``, with checksums."""

from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from mnemometer._jsonl import decode, json_document, json_objects, read_file
from mnemometer.config import StrictModel, explain, read_document, validate
from mnemometer.datasets._models import Memory
from mnemometer.errors import MnemometerError, did_you_mean
from mnemometer.sandbox import (
    AGENT_HOMES,
    Sandbox,
    SandboxError,
    bwrap_problem,
    evals_root,
    resolve_isolation,
)
from mnemometer.suites.items._types import ITEM_TYPES, BaseItem, item_type

MANIFEST = "suite.toml"


class SuiteError(MnemometerError):
    """A suite directory is missing or malformed (the message names the file and line)."""


class SandboxSpec(StrictModel):
    """``[sandbox]`` in ``suite.toml``: what the suite's commands may reach."""

    network: bool = False
    """Ask for the host network inside the sandbox (a real agent calling its provider); the
    user grants it with ``--sandbox-network`` (or ``--sandbox none``)."""
    agent_home: Literal["none", "codex", "claude"] = "none"
    """Whose bootstrap files (an allow-list, never config, but credentials) the private HOME
    asks for; the user grants them with ``--agent-home`` naming the same."""
    database: Literal["none", "pgvector"] = "none"
    """``pgvector``: a fresh PostgreSQL + pgvector per run, its URL in
    ``MEMORY_EVAL_DATABASE_URL``."""


class SuiteManifest(StrictModel):
    """``suite.toml``. Memory Layer's manifests load as they are."""

    name: str = Field(min_length=1, max_length=200)
    """Suite name (at most 200 characters: it names directories and report titles)."""
    description: str = ""
    """Free text."""
    suite_version: str = "1"
    """Maintainer-managed version label."""
    label_status: Literal["draft", "reviewed"] = "draft"
    """``reviewed`` claims the labels were checked by a person."""
    held_out: bool = False
    """``true`` claims the suite was not used while tuning the systems it measures (Memory
    Layer's rule for external claims; ``doctor`` and ``gate`` warn without it)."""
    fixture: str | None = None
    """Fixture directory (or file) relative to the suite; its tree is hashed into runs."""
    default_profile: Literal["offline", "llm"] = "offline"
    """Profile used when ``--profile`` is not given."""
    default_repeats: int = Field(1, ge=1)
    """Repeats used when ``--repeat`` is not given."""
    min_items: int | None = Field(None, ge=0)
    """``doctor`` fails when the suite has fewer items."""
    project: str | None = None
    """Default project slug (Memory Layer); recorded only."""
    items: str = "items.jsonl"
    """Items file, relative to the suite."""
    memories: str | None = None
    """Memories to seed before the items run (JSONL of memories, or a Memory Layer seed
    capture JSON), relative to the suite."""
    conditions: list[str] = Field(default_factory=list)
    """Conditions run when ``--condition`` is not given."""
    pass_env: list[str] = Field(default_factory=list)
    """Environment variables (names or ``*`` patterns) the suite's commands ask to receive
    on top of the minimal environment, e.g. an agent's credentials: a request, which the
    user grants with ``--pass-env`` (the run stops otherwise)."""
    sandbox: SandboxSpec = Field(default_factory=SandboxSpec)
    """How shell and agent commands are isolated (see docs/sandbox.md)."""


@dataclass(frozen=True)
class SeedMemory:
    """A memory to seed, with the tags and files the scorer may look at (never the store)."""

    memory: Memory
    tags: tuple[str, ...]
    files: tuple[str, ...]


@dataclass(frozen=True)
class LoadedSuite:
    """A parsed suite directory."""

    root: Path
    manifest: SuiteManifest
    items: list[BaseItem]
    lines: dict[str, int]
    """Item id → line number in the items file."""
    checksum: str
    """SHA-256 of manifest bytes, ``\\n--items--\\n``, items bytes."""
    fixture_checksum: str | None
    """SHA-256 over the fixture tree (relative paths and bytes), when there is a fixture."""
    memories: list[SeedMemory]
    memories_path: Path | None
    memories_checksum: str | None

    @property
    def slug(self) -> str:
        """The name as a file-name-safe slug."""
        return slugify(self.manifest.name)


def slugify(text: str) -> str:
    """Lowercase, with runs of anything but letters and digits turned into ``-``."""
    out = "".join(ch.lower() if ch.isalnum() else "-" for ch in text)
    return "-".join(p for p in out.split("-") if p) or "suite"


def find_manifest(path: str | Path) -> Path:
    """The ``suite.toml`` for a suite directory or a manifest path.

    Raises:
        SuiteError: neither exists.
    """
    p = Path(path)
    if p.is_dir():
        p = p / MANIFEST
    if not p.is_file():
        raise SuiteError(f"{path}: not a suite directory (no {MANIFEST})")
    return p


def is_suite_path(path: str | Path) -> bool:
    """True when ``path`` is a suite directory or a ``suite.toml``."""
    p = Path(path)
    return (p / MANIFEST).is_file() or (p.is_file() and p.name.endswith(".toml"))


def tree_checksum(path: Path) -> str:
    """SHA-256 over every file under ``path`` (sorted relative paths, then bytes)."""
    h = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for f in files:
        rel = f.name if f == path else f.relative_to(path).as_posix()
        h.update(rel.encode() + b"\0")
        h.update(hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()


def inside(root: Path, rel: str, boundary: Path | None = None) -> bool:
    """True when ``rel`` is relative and, resolved from ``root``, stays inside ``boundary``.

    ``boundary`` defaults to ``root``.
    """
    if "\0" in rel or Path(rel).is_absolute():  # a NUL byte names no file anywhere
        return False
    # realpath, not resolve(): a symlink loop is left for the reader to name, not raised here
    target = Path(os.path.realpath(root / rel))
    return target.is_relative_to(Path(os.path.realpath(boundary or root)))


def load_manifest(path: str | Path) -> tuple[Path, SuiteManifest, bytes]:
    """Read and validate a manifest; returns ``(suite root, manifest, raw bytes)``."""
    mpath = find_manifest(path)
    raw = mpath.read_bytes()
    try:
        manifest = validate(SuiteManifest, read_document(mpath, what="suite manifest"), str(mpath))
    except MnemometerError as e:
        raise SuiteError(str(e)) from None
    return mpath.parent, manifest, raw


def parse_items(path: Path) -> tuple[list[BaseItem], dict[str, int], bytes]:
    """Parse an items file: one JSON item per line; blank lines and ``#`` lines skipped.

    Raises:
        SuiteError: with ``file:line``, the field and the fix.
    """
    raw = read_file(path, SuiteError, "items file", missing="items file not found")
    items: list[BaseItem] = []
    lines: dict[str, int] = {}
    text = decode(raw, path, SuiteError)
    for n, data in json_objects(text, path, SuiteError, comments=True, what="an item"):
        kind = data.get("eval_type")
        if not isinstance(kind, str):
            raise SuiteError(
                f"{path}:{n}: missing key 'eval_type' (one of {', '.join(ITEM_TYPES.names())})"
            )
        try:
            model = item_type(kind).model
        except MnemometerError as e:
            raise SuiteError(f"{path}:{n}: {e}") from None
        try:
            item = model.model_validate(data)
        except ValidationError as e:
            where = f" (item {data.get('id')!r})" if isinstance(data.get("id"), str) else ""
            raise SuiteError(f"{path}:{n}{where}: {kind}: {explain(e, model)}") from None
        if item.id in lines:
            raise SuiteError(
                f"{path}:{n}: duplicate item id {item.id!r} (first on line {lines[item.id]})"
            )
        lines[item.id] = n
        items.append(item)
    return items, lines, raw


def load_memories(path: Path) -> list[SeedMemory]:
    """Read seed memories: our JSONL, or a Memory Layer seed (capture JSON, remember JSONL).

    Our JSONL: one memory per line, ``{"id", "text", "timestamp"?, "tags"?, "files"?}``.

    Raises:
        SuiteError: missing or malformed, with the line.
    """
    raw = read_file(path, SuiteError, "memories file", missing="memories file not found")
    text = decode(raw, path, SuiteError)
    if path.suffix == ".json":
        data = json_document(text, path, SuiteError)
        cands = data.get("structured_candidates") if isinstance(data, dict) else None
        if not isinstance(cands, list):
            raise SuiteError(
                f"{path}: expected a Memory Layer seed capture with 'structured_candidates'"
            )
        return [_capture_memory(c, i, path) for i, c in enumerate(cands)]
    out: list[SeedMemory] = []
    for n, d in json_objects(text, path, SuiteError, comments=True, what="a memory"):
        out.append(_line_memory(d, len(out), path, n))
    ids = [m.memory.id for m in out]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise SuiteError(f"{path}: duplicate memory id {dup!r}")
    return out


_MEMORY_KEYS = {"id", "text", "timestamp", "tags", "files", "metadata"}
_REMEMBER_KEYS = {"project", "type", "title", "summary", "note", "tags"}


def _line_memory(d: dict[str, Any], i: int, path: Path, n: int) -> SeedMemory:
    if "text" not in d and set(d) <= _REMEMBER_KEYS:  # Memory Layer `remember` lines
        text = ". ".join(str(d[k]).rstrip(". ") for k in ("title", "summary", "note") if d.get(k))
        tags = _strings(d, "tags", f"{path}:{n}")
        return SeedMemory(Memory(id=f"m{i + 1:03d}", text=text), tags, ())
    unknown = set(d) - _MEMORY_KEYS
    if unknown:
        key = sorted(unknown)[0]
        raise SuiteError(
            f"{path}:{n}: unknown field {key!r}{did_you_mean(key, sorted(_MEMORY_KEYS))}"
        )
    for field in ("id", "text"):
        if not isinstance(d.get(field), str) or not d[field].strip():
            raise SuiteError(f"{path}:{n}: field {field!r} must be a non-empty string")
    ts = d.get("timestamp")
    try:
        stamp = datetime.fromisoformat(ts) if ts else None
    except (TypeError, ValueError):
        raise SuiteError(f"{path}:{n}: field 'timestamp' must be ISO 8601, got {ts!r}") from None
    mem = Memory(id=d["id"], text=d["text"], timestamp=stamp, metadata=d.get("metadata") or {})
    where = f"{path}:{n}"
    return SeedMemory(mem, _strings(d, "tags", where), _strings(d, "files", where))


def _strings(d: dict[str, Any], field: str, where: str) -> tuple[str, ...]:
    """``d[field]`` (a list, default empty) as strings; anything else is refused."""
    value = d.get(field, [])
    if not isinstance(value, list):
        raise SuiteError(f"{where}: field {field!r} must be a list of strings")
    return tuple(map(str, value))


def _capture_memory(c: Any, i: int, path: Path) -> SeedMemory:
    if not isinstance(c, dict) or not isinstance(c.get("canonical_text"), str):
        raise SuiteError(f"{path}: structured_candidates[{i}] has no canonical_text")
    files = tuple(
        str(s["file_path"])
        for s in c.get("sources", [])
        if isinstance(s, dict) and s.get("file_path")
    )
    return SeedMemory(
        Memory(id=f"m{i + 1:03d}", text=c["canonical_text"]),
        _strings(c, "tags", f"{path}: structured_candidates[{i}]"),
        files,
    )


def fixture_paths(manifest: SuiteManifest, items: list[BaseItem]) -> list[str]:
    """Fixture paths named by the manifest and the items (relative to the suite root)."""
    paths = [manifest.fixture] if manifest.fixture else []
    paths += [str(fx) for it in items if isinstance(fx := getattr(it, "fixture", None), str)]
    return list(dict.fromkeys(paths))


def fixture_checksum(root: Path, manifest: SuiteManifest, items: list[BaseItem]) -> str | None:
    """SHA-256 over every existing fixture tree; ``None`` when no fixture path exists.

    Memory Layer's manifests use ``fixture`` as a label; a label that names no path inside
    the suite's evals root (:func:`~mnemometer.sandbox.evals_root`) contributes nothing
    (``doctor`` says so).
    """
    h = hashlib.sha256()
    found = False
    for rel in fixture_paths(manifest, items):
        p = root / rel
        if inside(root, rel, evals_root(root)) and p.exists():
            found = True
            h.update(rel.encode() + b"\0" + tree_checksum(p).encode() + b"\n")
    return h.hexdigest() if found else None


def load_suite(path: str | Path, memories: str | Path | None = None) -> LoadedSuite:
    """Load a suite directory (or its ``suite.toml``).

    Args:
        path: suite directory or manifest.
        memories: seed memories overriding the manifest's ``memories``.

    Raises:
        SuiteError: anything malformed, naming the file, line and field.
    """
    root, manifest, mraw = load_manifest(path)
    if not inside(root, manifest.items):
        raise SuiteError(f"{root / MANIFEST}: items path {manifest.items!r} leaves the suite")
    items, lines, iraw = parse_items(root / manifest.items)
    checksum = hashlib.sha256(mraw + b"\n--items--\n" + iraw).hexdigest()
    fixture_sum = fixture_checksum(root, manifest, items)
    mem_path: Path | None = None
    if memories is not None:
        mem_path = Path(memories)
    elif manifest.memories:
        if not inside(root, manifest.memories):
            raise SuiteError(
                f"{root / MANIFEST}: memories path {manifest.memories!r} leaves the suite"
            )
        mem_path = root / manifest.memories
    seeds = load_memories(mem_path) if mem_path is not None else []
    mem_sum = hashlib.sha256(mem_path.read_bytes()).hexdigest() if mem_path else None
    return LoadedSuite(
        root, manifest, items, lines, checksum, fixture_sum, seeds, mem_path, mem_sum
    )


def suite_sandbox(
    loaded: LoadedSuite,
    shell: bool,
    isolation: str,
    agent_home: str | None,
    ro: list[str],
    network: bool = False,
) -> Sandbox:
    """A suite's sandbox, from the run's flags: ``[sandbox]`` only asks for them.

    The network and the agent home are the user's (:func:`check_requests
    <mnemometer.suites.items._flags.check_requests>` refused the run when the manifest
    asked for more); the manifest's ``database`` is its own (a fresh one, reached by
    socket).

    Args:
        loaded: the suite (its directory and memories are shown read-only).
        shell: whether commands will run (only then is bubblewrap probed).
        isolation: ``auto``, ``bwrap`` or ``none``.
        agent_home: whose bootstrap files the private HOME gets (``None``: none).
        ro: more read-only paths.
        network: keep the network (``--sandbox-network``).
    """
    home = agent_home or "none"
    if home not in AGENT_HOMES:
        raise SandboxError(f"agent_home must be one of {', '.join(AGENT_HOMES)}, got {home!r}")
    extra = [loaded.root, *([loaded.memories_path] if loaded.memories_path else []), *ro]
    resolved = resolve_isolation(isolation) if shell else "none"
    if shell and isolation == "auto" and resolved == "none":
        logging.getLogger("mnemometer").warning(
            "%s: shell items run without isolation (recorded as isolation=none)", bwrap_problem()
        )
    return Sandbox(
        resolved,
        network,
        home,
        [Path(p) for p in extra],
    )
