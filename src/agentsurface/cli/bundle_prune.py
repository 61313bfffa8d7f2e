"""What ``agentsurface bundle`` leaves out: files a bundled page never loads.

- PyScript (``dist/pyscript/``, ~4.7 MB) unless a bundled file mentions it;
- wheels outside the lock's closure of what the pages load (agentsurface, the app, every
  ``data-packages`` name, and micropip for PyScript), e.g. micropip for a page without PyScript;
- Pyodide's source maps and its UMD build (``pyodide.js``): the loader imports ``pyodide.mjs``;
- npm's ``python_stdlib.zip`` when the runtime has the compiled one the loader boots with
  (_runtime_build/stdlib_zip.py), unless PyScript, which boots with npm's, is bundled;
- the memory snapshot (_runtime_build/memory_snapshot.py, 6-7 MB) unless a page's loader script
  asks for it with ``data-memory-snapshot``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from .._core.records import record
from .._runtime_build.lock import canonical
from .._runtime_build.memory_snapshot import MEMORY_INFO, MEMORY_SNAPSHOT
from .._runtime_build.stdlib_zip import STDLIB

_DATA_PACKAGES = re.compile(r"""data-packages\s*=\s*["']([^"']*)["']""", re.IGNORECASE)
_EMBED = re.compile(r"""<script[^>]*agentsurface\.js""", re.IGNORECASE)
_SCRIPT_TAG = re.compile(r"<script\b[^>]*>", re.IGNORECASE)
_MEMORY_SNAPSHOT = re.compile(r"\sdata-memory-snapshot(?=[\s=>/])", re.IGNORECASE)
_PYODIDE_UNUSED = ("pyodide.js",)
_PYODIDE_UNUSED_SUFFIXES = (".map",)


@record
class PageNeeds:
    """What the bundled files load: PyScript or not, the packages named, a page without any,
    and whether a page boots from the memory snapshot."""

    pyscript: bool
    packages: frozenset[str]
    agentsurface_alone: bool
    memory_snapshot: bool = False


def page_needs(files: Mapping[str, bytes]) -> PageNeeds:
    """Scan the app's static files (name -> bytes) for what their pages load."""
    pyscript, alone, snapshot = False, False, False
    packages: set[str] = set()
    for name, data in files.items():
        text = data.decode("utf-8", errors="replace")
        if "pyscript" in text.lower():
            pyscript = True
        if Path(name).suffix.lower() not in (".html", ".htm") or not _EMBED.search(text):
            continue
        named = [
            token for match in _DATA_PACKAGES.findall(text) for token in re.split(r"[\s,]+", match) if token
        ]
        packages.update(canonical(token) for token in named)
        alone = alone or not named
        snapshot = snapshot or any(
            "agentsurface.js" in tag.lower() and _MEMORY_SNAPSHOT.search(tag) for tag in _SCRIPT_TAG.findall(text)
        )
    return PageNeeds(pyscript, frozenset(packages), alone, snapshot)


def closure(lock_packages: Mapping[str, Any], roots: Iterable[str]) -> set[str]:
    """The lock's packages ``roots`` load, with their dependencies (canonical names)."""
    by_name = {canonical(name): entry for name, entry in lock_packages.items()}
    seen: set[str] = set()
    stack = [canonical(root) for root in roots]
    while stack:
        name = stack.pop()
        if name in seen or name not in by_name:
            continue
        seen.add(name)
        stack.extend(canonical(dep) for dep in by_name[name].get("depends", ()))
    return seen


def runtime_filter(
    part: str,
    needs: PageNeeds,
    lock_packages: Mapping[str, Any],
    app: str,
    zip_file: str | None,
    stdlib: str | None = None,
) -> Callable[[Path], bool] | None:
    """A file filter for one runtime part (``pyodide``, ``pyscript``, ``wheels``), or None to
    leave the part out entirely. ``stdlib``: the compiled stdlib zip the runtime's loader boots
    with, if it has one."""
    if part == "pyscript":
        return (lambda path: True) if needs.pyscript else None
    if part == "pyodide":
        unused = {
            *_PYODIDE_UNUSED,
            *((STDLIB,) if stdlib and not needs.pyscript else ()),
            *(() if needs.memory_snapshot else (MEMORY_SNAPSHOT, MEMORY_INFO)),
        }
        return lambda path: (
            path.name != "pyodide-lock.json"
            and not (path.name in unused or path.name.endswith(_PYODIDE_UNUSED_SUFFIXES))
        )
    roots = {"agentsurface", canonical(app), *needs.packages} | ({"micropip"} if needs.pyscript else set())
    loaded = closure(lock_packages, roots)
    files = {
        str(entry.get("file_name", "")).rsplit("/", 1)[-1]
        for name, entry in lock_packages.items()
        if canonical(name) in loaded
    }
    if zip_file is not None:
        # The loader decides at boot whether the zip fits (no app wheel, pydantic or jsonschema
        # at start needing the wheel); a page whose data-packages need neither still imports it.
        files.add(zip_file)
    return lambda path: path.name in files


__all__ = ["PageNeeds", "closure", "page_needs", "runtime_filter"]
