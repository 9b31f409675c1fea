"""Fixtures, workspaces and the trust boundary of shell items.

A fixture is copied into a fresh workspace for every (item, condition, repeat); the copy
refuses symlinks and anything that is not a regular file or directory, so a suite cannot
point a workspace at the caller's files. A fixture may be shared between suites (Memory
Layer's ``../../fixtures/...``), but once resolved (``..`` and symlinks followed) it must lie
inside the suite's evals root (:func:`evals_root`). Paths inside a workspace (required
files, content checks) must be relative without ``..``, and a check reads a file only
through :func:`workspace_file`: a link the agent left never takes the harness out of the
workspace, to read a host file the sandbox kept from the agent.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path, PurePosixPath

from mnemometer._jsonl import open_regular
from mnemometer.errors import MnemometerError

EVALS_DIR = "evals"
"""Name of the directory that holds suites and the fixtures they share (Memory Layer's)."""


class FixtureError(MnemometerError):
    """A fixture is missing, has a symlink or a special file, or leaves the suite."""


def evals_root(suite_root: Path) -> Path:
    """The directory a suite's fixtures must resolve inside.

    The nearest enclosing directory named ``evals`` (Memory Layer's ``evals/suites/<name>``
    beside ``evals/fixtures/``), else the suite directory itself. Resolved, so a symlinked
    suite directory does not widen it.
    """
    root = suite_root.resolve()
    for d in (root, *root.parents):
        if d.name == EVALS_DIR:
            return d
    return root


def bad_relative(rel: str) -> str | None:
    """Why ``rel`` is not a safe relative path (``None`` when it is)."""
    if not rel or not rel.strip():
        return "is empty"
    if "\\" in rel or "\0" in rel:
        return "holds a backslash or NUL"
    p = PurePosixPath(rel)
    if p.is_absolute() or rel.startswith("~"):
        return "is absolute (paths are relative to the workspace)"
    if ".." in p.parts:
        return "contains '..' (paths may not leave the workspace)"
    return None


def check_fixture(root: Path, rel: str) -> Path:
    """The fixture directory ``root/rel``, resolved and checked.

    It must resolve inside the evals root of the suite at ``root`` and hold no symlinks.

    Raises:
        FixtureError: naming the offending path.
    """
    why = bad_relative(rel)
    if why and (".." not in PurePosixPath(rel).parts or "\0" in rel):  # NUL: no file's name
        raise FixtureError(f"fixture {rel!r} {why}")
    path = root / rel
    if path.is_symlink():
        raise FixtureError(f"fixture {path} is a symlink (fixtures may not contain symlinks)")
    boundary = evals_root(root)
    path = path.resolve()
    if not path.is_relative_to(boundary):
        raise FixtureError(
            f"fixture {rel!r} resolves to {path}, outside the evals root {boundary} "
            f"(fixtures may be shared inside the nearest '{EVALS_DIR}' directory, "
            "else inside the suite)"
        )
    if not path.is_dir():
        raise FixtureError(f"fixture {path} does not exist (or is not a directory)")
    for dirpath, dirnames, filenames in os.walk(path, followlinks=False):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            mode = p.lstat().st_mode
            if stat.S_ISLNK(mode):
                raise FixtureError(
                    f"fixture {path}: {p.relative_to(path)} is a symlink "
                    "(fixtures may not contain symlinks)"
                )
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise FixtureError(
                    f"fixture {path}: {p.relative_to(path)} is not a regular file or directory"
                )
    return path


def copy_fixture(src: Path, dest: Path) -> None:
    """Copy a checked fixture into a new ``dest`` (which must not exist)."""
    shutil.copytree(src, dest, symlinks=True)  # symlinks=True: a link is never followed
    # The copy is the agent's to edit, even from a read-only source (the sandbox drops the
    # capability that lets root ignore modes); a symlink now means the fixture changed
    # since it was checked (a race).
    for dirpath, dirnames, filenames in os.walk(dest):
        os.chmod(dirpath, os.stat(dirpath).st_mode | stat.S_IWUSR)
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if path.is_symlink():
                raise FixtureError(f"fixture {src} changed while copied: {name} is a symlink")
            if name in filenames:
                os.chmod(path, path.stat().st_mode | stat.S_IWUSR)


def workspace_file(root: Path, rel: str) -> Path | None:
    """``root/rel`` resolved, when it is a regular file inside ``root``; else ``None``.

    The agent owns its workspace: a symlink it leaves (``leak.txt`` -> a file in the
    host's home) is followed only while it stays inside ``root``, so no check (a required
    file, required content, memory evidence, token usage) reads or counts a file outside
    it. A FIFO or a device is never a file here either (reading one would block or never
    end).
    """
    if root.is_symlink() or not root.is_dir():
        return None
    try:
        target = (root / rel).resolve()
        regular = stat.S_ISREG(target.stat().st_mode)
    except (OSError, ValueError, RuntimeError):  # missing, a NUL byte, a symlink loop
        return None
    return target if regular and target.is_relative_to(root.resolve()) else None


def read_workspace_file(root: Path, rel: str) -> bytes | None:
    """The bytes of :func:`workspace_file` ``(root, rel)``; ``None`` when it is none."""
    path = workspace_file(root, rel)
    if path is None:
        return None
    try:
        with open_regular(path, MnemometerError, "workspace file") as f:
            return f.read()
    except (MnemometerError, OSError):
        return None


def fresh_dir(path: Path, within: Path) -> Path:
    """Empty ``path`` (deleting a previous copy) after checking it lies inside ``within``."""
    if not path.resolve().is_relative_to(within.resolve()):
        raise MnemometerError(f"{path} is outside {within}; refusing to delete it")
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path
