"""Read a committed file at a git ref (``git show REF:path``), for ``--base``."""

from __future__ import annotations

import subprocess
from pathlib import Path

from .._core.errors import AgentSurfaceError


class GitError(AgentSurfaceError):
    """git is missing, the directory is not a repository, or the ref does not exist."""


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except FileNotFoundError:
        raise GitError("git is not installed") from None


def read_at_ref(path: Path, ref: str) -> bytes | None:
    """The bytes of ``path`` at ``ref``, or None when the file does not exist there."""
    if ref.startswith("-"):
        raise GitError(f"invalid ref {ref!r}")
    cwd = path.parent if path.parent.is_dir() else Path.cwd()
    top = _git(cwd, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        raise GitError(f"not a git repository: {top.stderr.decode(errors='replace').strip()}")
    root = Path(top.stdout.decode().strip()).resolve()
    if _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").returncode != 0:
        raise GitError(f"unknown git ref {ref!r}")
    relative = path.resolve().relative_to(root).as_posix()
    shown = _git(root, "show", f"{ref}:{relative}")
    if shown.returncode != 0:
        if _git(root, "cat-file", "-e", f"{ref}:{relative}").returncode != 0:
            return None
        raise GitError(shown.stderr.decode(errors="replace").strip())
    return shown.stdout
