"""What the library imports on a page's way to its first tool, it imports from a stdlib that
Pyodide ships as sources: every module is compiled in the page, on every load. These modules
cost tens to hundreds of milliseconds there (urllib.parse with ipaddress ~0.3 s, importlib.resources
~0.1 s, uuid ~60 ms, secrets with hmac ~60 ms) and none of them is needed before the first tool.
The page itself is checked in e2e/test_console_lean_boot.py; this is the CPython side of it."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

AVOIDED = [
    "urllib.parse", "ipaddress", "importlib.resources", "uuid", "decimal", "numbers", "secrets", "hmac", "pkgutil",
]

# pathlib imports urllib.parse under CPython before 3.13 (not the page's 3.14): the modules the
# interpreter imported on its own are dropped first, so only what the library imports brings one back.
IMPORTED = """
import json, sys, pathlib
avoided = json.loads(sys.argv[1])
for name in avoided:
    sys.modules.pop(name, None)
import agentsurface, agentsurface.adapters.webmcp, agentsurface.bridge, agentsurface.compiler.load
import agentsurface.page
print(json.dumps(sorted(set(avoided) & set(sys.modules))))
"""


def test_the_way_to_a_first_tool_imports_none_of_the_costly_stdlib_modules() -> None:
    done = subprocess.run(
        [sys.executable, "-c", IMPORTED, json.dumps(AVOIDED)], capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout) == []


def test_package_data_reads_what_pkgutil_reads(tmp_path: Path) -> None:
    import pkgutil

    from agentsurface._compat import package_data

    assert package_data("agentsurface.page", "dialog.css") == pkgutil.get_data("agentsurface.page", "dialog.css")
    # From a zip on sys.path, as the page imports the library (zipimport's loader reads it).
    archive = tmp_path / "lib.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("zipped_pkg/__init__.py", "")
        zipped.writestr("zipped_pkg/data/style.css", "p { color: red }")
    sys.path.insert(0, str(archive))
    try:
        assert package_data("zipped_pkg", "data/style.css") == b"p { color: red }"
        assert pkgutil.get_data("zipped_pkg", "data/style.css") == b"p { color: red }"
        with pytest.raises(OSError):
            package_data("zipped_pkg", "missing.css")
    finally:
        sys.path.remove(str(archive))
        sys.modules.pop("zipped_pkg", None)
