"""Small shims for running the same code in CPython and in Pyodide.

Internal: ``import_jsonschema`` is public as ``agent_surface.import_jsonschema`` (a page may call
it early, off the path to its first tool, so the first raw-schema validation does not pay for
the import).
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType


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
