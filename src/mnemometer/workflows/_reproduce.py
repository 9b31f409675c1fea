"""``reproduce`` (seed, run two conditions offline, compare, gate) and ``archive``."""

from __future__ import annotations

import hashlib
import io
import tarfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from mnemometer import _env
from mnemometer.comparison import Comparison, GateResult, compare, gate
from mnemometer.config import StrictModel
from mnemometer.errors import MnemometerError
from mnemometer.report._leaderboard import find_runs
from mnemometer.runner._experiment import ExperimentResult
from mnemometer.runner._run import RunSettings
from mnemometer.suites._index_file import INDEX_DIR
from mnemometer.suites.items._manifest import load_suite
from mnemometer.workflows._suite_dir import run_suite


@dataclass(frozen=True)
class Reproduction:
    """What :func:`reproduce` did."""

    runs: ExperimentResult
    comparison: Comparison
    comparison_path: Path
    policy: Path | None
    verdict: GateResult | None


def default_policy(suite_dir: str | Path) -> Path | None:
    """The suite's gate: ``SUITE/gate.toml``, else Memory Layer's ``gates/<dir>.toml``."""
    root = load_suite(suite_dir).root
    for p in (root / "gate.toml", root.parent.parent / "gates" / f"{root.name}.toml"):
        if p.is_file():
            return p
    return None


def reproduce(
    suite_dir: str | Path,
    *,
    out: str | Path | None = None,
    policy: str | Path | None = None,
    baseline: str = "no-memory",
    candidate: str = "full-memory",
    memories: str | Path | None = None,
    resamples: int = 10_000,
    settings: RunSettings | None = None,
) -> Reproduction:
    """Seed the suite's memories, run two conditions offline, compare them and gate.

    Args:
        suite_dir: suite directory.
        out: where the runs, ``comparison.json`` and ``gate.json`` go.
        policy: gate policy (default: :func:`default_policy`; none means no gate).
        baseline: baseline condition.
        candidate: candidate condition.
        memories: seed memories overriding the manifest's.
        resamples: bootstrap resamples.
        settings: run settings (concurrency, timeouts, a progress callback).
    """
    loaded = load_suite(suite_dir, memories)
    if out is None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        out = Path("runs") / f"reproduce-{loaded.slug}-{stamp}"
    out = Path(out)
    runs = run_suite(
        suite_dir,
        conditions=[baseline, candidate],
        repeat=1,
        profile="offline",
        out=out,
        memories=memories,
        settings=settings,
    )
    comparison = compare(
        [r.path for r in runs.runs[::2]], [r.path for r in runs.runs[1::2]], resamples=resamples
    )
    cpath = out / "comparison.json"
    cpath.write_text(comparison.model_dump_json(indent=1) + "\n", "utf-8")
    pol = Path(policy) if policy is not None else default_policy(suite_dir)
    verdict = gate(comparison, pol) if pol is not None else None
    if verdict is not None:
        (out / "gate.json").write_text(verdict.model_dump_json(indent=1) + "\n", "utf-8")
    return Reproduction(runs, comparison, cpath, pol, verdict)


class ArchiveFile(StrictModel):
    """One file in an archive."""

    path: str
    """Path inside the archive."""
    sha256: str
    """SHA-256 of the bytes."""
    bytes: int
    """Size."""


class ArchiveManifest(StrictModel):
    """``manifest.json`` of an experiment archive."""

    schema_version: int = 1
    """Archive manifest version (always first)."""
    kind: Literal["mnemometer-experiment"] = "mnemometer-experiment"
    """File kind."""
    suite_name: str
    """Suite name."""
    suite_checksum: str
    """Suite checksum (manifest + items)."""
    item_count: int
    """Items in the suite."""
    runs: int
    """Run directories included."""
    package_version: str
    """mnemometer version that wrote the archive."""
    git_revision: str | None
    """Git revision of the working directory, if any."""
    created_at: datetime
    """When (UTC)."""
    reproduce_with: str
    """The command that reproduces the runs."""
    files: list[ArchiveFile] = Field(default_factory=list)
    """Every other file, with its checksum."""


def archive(suite_dir: str | Path, runs: list[str | Path], out: str | Path) -> ArchiveManifest:
    """Write the suite plus run directories as a tar.gz with a SHA-256 manifest.

    Layout: ``suite/...``, ``runs/<run>/...`` (plus ``runs/<parent>/comparison.json``
    and ``gate.json`` when they sit beside the runs), and ``manifest.json``.

    Raises:
        MnemometerError: missing suite or runs, or an output that exists.
    """
    loaded = load_suite(suite_dir)
    target = Path(out)
    if target.exists():
        raise MnemometerError(f"{target}: already exists; choose another --out")
    members: list[tuple[str, Path]] = []
    for f in sorted(p for p in loaded.root.rglob("*") if p.is_file()):
        members.append((f"suite/{f.relative_to(loaded.root).as_posix()}", f))
    dirs = find_runs(runs)
    for d in dirs:
        for f in sorted(p for p in d.rglob("*") if p.is_file()):
            if f.relative_to(d).parts[0].startswith(INDEX_DIR):
                continue  # a saved store index is a resume's shortcut, not a result
            members.append((f"runs/{d.parent.name}/{d.name}/{f.relative_to(d).as_posix()}", f))
    for parent in dict.fromkeys(d.parent for d in dirs):
        for name in ("comparison.json", "gate.json"):
            if (parent / name).is_file():
                members.append((f"runs/{parent.name}/{name}", parent / name))
    files = []
    for arc, f in members:
        data = f.read_bytes()
        files.append(
            ArchiveFile(path=arc, sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))
        )
    manifest = ArchiveManifest(
        suite_name=loaded.manifest.name,
        suite_checksum=loaded.checksum,
        item_count=len(loaded.items),
        runs=len(dirs),
        package_version=_env.package_version(),
        git_revision=_env.git_revision(),
        created_at=datetime.now(UTC),
        reproduce_with="mnemometer reproduce suite/  (inside the unpacked archive)",
        files=files,
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(target, "w:gz") as tar:
        blob = manifest.model_dump_json(indent=1).encode() + b"\n"
        info = tarfile.TarInfo("manifest.json")
        info.size = len(blob)
        tar.addfile(info, io.BytesIO(blob))
        for arc, f in members:
            tar.add(f, arcname=arc, recursive=False)
    return manifest


def verify_archive(path: str | Path) -> ArchiveManifest:
    """Check every file of an archive against its manifest.

    Raises:
        MnemometerError: unreadable archive, bad manifest, or a file that does not match.
    """
    p = Path(path)
    try:
        with tarfile.open(p, "r:gz") as tar:
            names = {m.name: m for m in tar.getmembers() if m.isfile()}
            if "manifest.json" not in names:
                raise MnemometerError(f"{p}: no manifest.json (not a mnemometer archive)")
            raw = tar.extractfile(names["manifest.json"]).read()  # type: ignore[union-attr]
            try:
                manifest = ArchiveManifest.model_validate_json(raw)
            except ValidationError as e:
                raise MnemometerError(
                    f"{p}: malformed manifest.json: {e.errors()[0]['msg']}"
                ) from None
            listed = {f.path for f in manifest.files}
            extra = sorted(set(names) - listed - {"manifest.json"})
            if extra:
                raise MnemometerError(f"{p}: {extra[0]} is not in the manifest")
            for f in manifest.files:
                if f.path not in names:
                    raise MnemometerError(f"{p}: {f.path} is listed but missing")
                data = tar.extractfile(names[f.path]).read()  # type: ignore[union-attr]
                if hashlib.sha256(data).hexdigest() != f.sha256 or len(data) != f.bytes:
                    raise MnemometerError(f"{p}: {f.path} does not match its SHA-256")
    except (tarfile.TarError, OSError) as e:
        raise MnemometerError(f"{p}: not a readable tar.gz: {e}") from None
    return manifest
