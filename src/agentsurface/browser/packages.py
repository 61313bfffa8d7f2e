"""agentsurface's own dependencies loaded on first import, for a page booted without them.

web/agentsurface.js boots a page with the agentsurface wheel alone (plus whatever the page's
scripts import): a page whose schemas are raw JSON Schema never needs pydantic, and jsonschema is
needed only for the first value the compiled check cannot prove valid. The loader loads them in
the background once the first tools are registered; until then, the first import of one of their
modules loads its lock package right there (``run_sync``: async code, or a page script run by the
loader; both are entered through JSPI in Chromium). Where Python cannot wait (a synchronous JS
callback), the import fails with a ModuleNotFoundError saying how to load the package at start;
so while the background load runs, browser calls start as ordinary tasks that wait for it
(``dependencies_ready``) before they run, instead of eagerly inside the browser's synchronous call.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.abc
import importlib.machinery
import json
import sys
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

import pyodide_js
from pyodide.ffi import can_run_sync, run_sync

_pending = False  # between load_on_import and the loader's dependencies_loaded
_waiters: list[asyncio.Future[None]] = []


def dependencies_pending() -> bool:
    """True while the loader is still loading agentsurface's deferred dependencies."""
    return _pending


async def dependencies_ready() -> None:
    """Wait until the loader's background load has settled (at once when nothing is pending)."""
    if _pending:
        waiter = asyncio.get_running_loop().create_future()
        _waiters.append(waiter)
        await waiter


def dependencies_loaded() -> None:
    """Called by the loader once its background load has settled (loaded or failed)."""
    global _pending
    _pending = False
    for waiter in _waiters:
        if not waiter.done():
            waiter.set_result(None)
    _waiters.clear()


class LoadOnImport(importlib.abc.MetaPathFinder):
    """Loads a lock package the first time one of its top-level modules is imported."""

    def __init__(self, packages: Mapping[str, str]) -> None:
        self._packages = dict(packages)  # top-level import name -> lock package name
        self._loading: dict[str, Any] = {}  # lock package -> its loadPackage promise, while pending

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        package = self._packages.get(fullname) if path is None else None
        if package is None:
            return None
        if not can_run_sync():
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: its package {package!r} is loaded on first import only "
                "where Python can wait (async code, page scripts); to load it at start, list it in "
                f'data-packages: <script type="module" src=".../agentsurface.js" data-packages="{package}">',
                name=fullname,
            )
        # Another stack suspended in the same load (two tasks importing at once) waits for the
        # same promise rather than failing; one attempt: a failed load is not retried.
        try:
            loading = self._loading.get(package)
            if loading is None:
                loading = self._loading[package] = pyodide_js.loadPackage(package)
            run_sync(loading)
        except Exception as exc:
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: loading its package {package!r} failed: {exc}", name=fullname
            ) from exc
        finally:
            self._packages.pop(fullname, None)
            self._loading.pop(package, None)
        importlib.invalidate_caches()
        return importlib.machinery.PathFinder.find_spec(fullname)


def unpack_wheels(paths_json: str) -> None:
    """Unpack pure-Python wheels (JSON list of their paths, written by the loader) into
    site-packages and delete them: the loader's way to install a page's data-packages at start
    without Pyodide's package loader, whose own imports (tarfile, importlib.metadata...) the page
    would compile from source first. zipfile is imported by Pyodide's boot already; the names are
    read as UTF-8 (what Python's zipfile writes for non-ASCII names), so its cp437 codec is not
    imported either. The wheels' ``__pycache__`` pycs (the build's) are used as installed."""
    import os
    import site
    import zipfile

    paths = json.loads(paths_json)
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise TypeError("unpack_wheels expects a JSON list of wheel paths")
    target = site.getsitepackages()[0]
    for path in paths:
        with zipfile.ZipFile(path, metadata_encoding="utf-8") as wheel:
            wheel.extractall(target)
        os.remove(path)
    # Only site-packages' finder forgets its listing: importlib.invalidate_caches() would import
    # importlib.metadata (and email) to reset its caches too.
    invalidate = getattr(sys.path_importer_cache.get(target), "invalidate_caches", None)
    if invalidate is not None:
        invalidate()


def load_on_import(packages_json: str) -> None:
    """Install the finder for ``{import name: lock package}`` (JSON text, from the loader); until
    ``dependencies_loaded()``, the dependencies count as pending."""
    global _pending
    packages = json.loads(packages_json)
    if not isinstance(packages, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in packages.items()
    ):
        raise TypeError("load_on_import expects a JSON object of import name -> package name")
    for finder in sys.meta_path:
        if isinstance(finder, LoadOnImport):
            sys.meta_path.remove(finder)
            break
    # After the path finders: only a module that is not installed (yet) reaches it.
    sys.meta_path.append(LoadOnImport(packages))
    _pending = bool(packages)
