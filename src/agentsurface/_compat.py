"""Small shims for running the same code in CPython and in Pyodide.

Internal: the library imports jsonschema through ``import_jsonschema`` wherever it needs it
(``agentsurface.page.preload_validators`` does so early, off the path to a page's first tool).
"""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any


def import_jsonschema() -> ModuleType:
    """Import ``jsonschema``; in the browser alias the pure ``rpds`` stand-in first.

    No wasm wheel of ``rpds-py`` exists, and ``pyrsistent-as-rpds-py`` provides the subset
    jsonschema needs under another module name.
    """
    if "rpds" not in sys.modules:
        try:
            importlib.import_module("rpds")
        except ImportError:
            for candidate in ("pyrsistent_as_rpds", "rpds_pyrsistent", "pyrsistent_rpds"):
                try:
                    sys.modules["rpds"] = importlib.import_module(candidate)
                    break
                except ImportError:
                    continue
    return importlib.import_module("jsonschema")


def package_data(package: str, resource: str) -> bytes | None:
    """``pkgutil.get_data(package, resource)``: a file beside ``package``'s modules, read by its
    loader (a directory, a wheel, the page's zip); None when that loader cannot read files.
    Written out because the page compiles pkgutil (16 kB of stdlib source) to import it."""
    module = sys.modules.get(package) or importlib.import_module(package)
    loader = getattr(getattr(module, "__spec__", None), "loader", None)
    origin = getattr(module, "__file__", None)
    if loader is None or origin is None or not hasattr(loader, "get_data"):
        return None
    data: bytes = loader.get_data(os.path.join(os.path.dirname(origin), *resource.split("/")))
    return data


# The code dataclasses generates for each class (``__init__``, ``__eq__``, ``__setattr__``...) is
# source text it compiles on every import: in the page that is ~40 ms of importing the library
# (~56 dataclasses). The build compiles those texts once, with the page's own Python, into this
# file of the served wheel (_runtime_build/precompile.py); in the page, dataclasses' ``exec`` takes the
# compiled code for a text it holds and compiles any other text as before.
DATACLASS_CODE = "dataclass_code.bin"


def use_compiled_dataclass_code() -> bool:
    """In the browser, serve dataclasses' generated methods from the build's compiled code.
    False (nothing changed) outside Pyodide, without the file, or for another Python."""
    if sys.platform != "emscripten":
        return False
    import builtins
    import dataclasses
    import importlib.util
    import marshal

    try:
        data = package_data(__package__ or "agentsurface", DATACLASS_CODE)
    except OSError:
        return False
    magic = importlib.util.MAGIC_NUMBER
    if data is None or not data.startswith(magic):
        return False
    compiled: dict[str, Any] = marshal.loads(data[len(magic) :])

    def exec_compiled(source: Any, globals: Any = None, locals: Any = None, /) -> None:
        code = compiled.get(source) if type(source) is str else None
        builtins.exec(source if code is None else code, globals, locals)

    dataclasses.exec = exec_compiled
    return True


# ---------------------------------------------------------------------------- asyncio's private calls


def _running_loop_or_none() -> Any:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


# The running event loop, or None outside one, without raising: asyncio's own private
# ``_get_running_loop`` (one C call: the registry asks on every mount), or the public call where a
# Python lacks it. Bound once, here, so the call path never looks it up.
running_loop_or_none: Callable[[], asyncio.AbstractEventLoop | None] = (
    getattr(asyncio, "_get_running_loop", None) or _running_loop_or_none
)


def set_running_loop(loop: asyncio.AbstractEventLoop | None) -> None:
    """Make ``loop`` the thread's running loop (None: none), as a test runner that drives a
    coroutine step by step must. asyncio has no public call for it; without the private one,
    this raises NotImplementedError rather than pretend."""
    setter = getattr(asyncio, "_set_running_loop", None)
    if setter is None:
        raise NotImplementedError("this Python's asyncio cannot set the running loop")
    setter(loop)
