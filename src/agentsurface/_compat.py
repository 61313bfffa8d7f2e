"""Small shims for running the same code in CPython and in Pyodide.

Internal: the library imports jsonschema through ``import_jsonschema`` wherever it needs it
(``agentsurface.page.preload_validators`` does so early, off the path to a page's first tool).
"""

from __future__ import annotations

import asyncio
import builtins
import dataclasses
import importlib
import os
import sys
from collections.abc import Callable, Mapping
from types import CodeType, ModuleType
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


# ------------------------------------------------------------------ the code records generate

# A record (agentsurface._core.records) is source text compiled as the class is made: the methods
# dataclasses writes for it (``__init__``, ``__eq__``, ``__setattr__``...) and a hot record's fast
# ``__init__``. In the page that was ~40 ms of importing the library. The build imports the
# library once with the page's own Python, recording every such text (RECORD_CODE_ENV), and
# ships them compiled in this file of the served wheel (_runtime_build/precompile.py); in the page
# a record's text is served from it, and any other text compiles as before.
DATACLASS_CODE = "dataclass_code.bin"

#: Set (to any value) before agentsurface is first imported, and every text the records generate
#: is kept, compiled, for ``recorded_code()``: how the build makes DATACLASS_CODE. An environment
#: variable because the records are made while the package imports: nothing set later sees them.
RECORD_CODE_ENV = "AGENTSURFACE_RECORD_GENERATED_CODE"

_compiled: dict[str, CodeType] | None = None  # the build's code, read on first use: {} outside the page
_recorded: dict[str, CodeType] | None = {} if os.environ.get(RECORD_CODE_ENV) else None


def _compiled_code() -> dict[str, CodeType]:
    """The build's compiled texts; {} outside Pyodide, without the file, or for another Python."""
    global _compiled
    if _compiled is None:
        _compiled = _read_compiled_code() if sys.platform == "emscripten" else {}
    return _compiled


def _read_compiled_code() -> dict[str, CodeType]:
    import importlib.util
    import marshal

    try:
        data = package_data(__package__ or "agentsurface", DATACLASS_CODE)
    except OSError:
        return {}
    magic = importlib.util.MAGIC_NUMBER
    if data is None or not data.startswith(magic):
        return {}
    compiled: dict[str, CodeType] = marshal.loads(data[len(magic) :])
    return compiled


def recorded_code() -> dict[str, CodeType]:
    """Every text the records generated since the package imported, compiled (see RECORD_CODE_ENV)."""
    if _recorded is None:
        raise RuntimeError(f"{RECORD_CODE_ENV} was not set when agentsurface was imported")
    return dict(_recorded)


def exec_generated(source: str, globals: dict[str, Any], locals: Mapping[str, Any] | None = None, /) -> None:
    """``exec`` for text a record generates: the build's compiled code for a text it holds (in the
    page), else the text compiled here, as dataclasses' own ``exec`` compiles it (no ``__future__``
    flags inherited from this module)."""
    code = _compiled_code().get(source) if type(source) is str else None
    if code is None:
        code = compile(source, "<string>", "exec", dont_inherit=True)
        if _recorded is not None:
            _recorded[source] = code
    builtins.exec(code, globals, locals)


_UNTOUCHED: Any = object()  # generated_code left dataclasses alone
_ABSENT: Any = object()  # dataclasses had no exec of its own (it uses the builtin)


class generated_code:  # lower case: read as a statement, ``with generated_code():``
    """While open, dataclasses compiles a class's methods through ``exec_generated``; on leaving,
    dataclasses is as it was. Open only around a record's ``dataclass()`` call: a user's own
    dataclasses, made any other time, never meet it (one made by another thread at that very
    moment would, and get the same code). Does nothing where there is no compiled code to serve
    and nothing to record (CPython, outside the build)."""

    __slots__ = ("_previous",)

    def __enter__(self) -> None:
        self._previous = _UNTOUCHED
        if _recorded is not None or _compiled_code():
            self._previous = vars(dataclasses).get("exec", _ABSENT)
            dataclasses.exec = exec_generated  # type: ignore[attr-defined]

    def __exit__(self, *_: object) -> None:
        if self._previous is _ABSENT:
            del dataclasses.exec  # type: ignore[attr-defined]
        elif self._previous is not _UNTOUCHED:
            dataclasses.exec = self._previous  # type: ignore[attr-defined]


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
