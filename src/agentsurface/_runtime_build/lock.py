"""Our ``pyodide-lock.json``: Pyodide's shipped lock with an entry (real sha256, imports, depends
evaluated for Pyodide's marker environment) for every wheel we serve."""

from __future__ import annotations

import hashlib
import re
import zipfile
from email.message import Message
from email.parser import Parser
from pathlib import Path
from typing import Any

from .._core.errors import AgentSurfaceError

PYTHON_VERSION = "3.14"

# Lock entries have no extras: these extras are folded into the package's `depends`.
EXTRAS = {
    "pyrsistent-as-rpds-py": {"pyrsistent"},
}

# Marker environment of Pyodide 314 (CPython 3.14 on Emscripten).
MARKER_ENV = {
    "python_version": PYTHON_VERSION,
    "python_full_version": "3.14.2",
    "sys_platform": "emscripten",
    "platform_system": "Emscripten",
    "platform_machine": "wasm32",
    "os_name": "posix",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "platform_release": "",
    "platform_version": "",
    "implementation_version": "3.14.2",
}


class LockError(AgentSurfaceError, ValueError):
    """The served wheels do not make a consistent lock (a duplicate, a missing dependency)."""


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# --------------------------------------------------------------------------- npm


def evaluate_marker(marker: str, extras: set[str]) -> bool:
    """Evaluate a PEP 508 marker of a dependency for Pyodide, with the package's folded extras."""
    from packaging.markers import Marker

    parsed = Marker(marker)
    return any(parsed.evaluate({**MARKER_ENV, "extra": extra}) for extra in (sorted(extras) or [""]))


def read_metadata(wheel: Path) -> tuple[Message, list[str]]:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        meta_name = next(n for n in names if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
        metadata = Parser().parsestr(archive.read(meta_name).decode())
    return metadata, names


def top_level_imports(names: list[str]) -> list[str]:
    found = set()
    for name in names:
        head, _, rest = name.partition("/")
        if head.endswith((".dist-info", ".data")) or head == "__pycache__":
            continue
        if rest:
            if rest == "__init__.py":
                found.add(head)
        elif head.endswith(".py"):
            found.add(head[:-3])
        elif head.endswith(".so"):
            found.add(head.split(".")[0])
    return sorted(found)


def lock_entry(wheel: Path) -> dict[str, Any]:
    metadata, names = read_metadata(wheel)
    name = metadata["Name"]
    extras = EXTRAS.get(canonical(name), set())
    depends = []
    for requirement in metadata.get_all("Requires-Dist") or []:
        spec, _, marker = requirement.partition(";")
        if marker.strip() and not evaluate_marker(marker.strip(), extras):
            continue
        named = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
        if named is None:
            raise LockError(f"{wheel.name}: unreadable requirement {requirement!r}")
        dep = canonical(named.group(1))
        if dep not in depends:
            depends.append(dep)
    return {
        "name": name,
        "version": metadata["Version"],
        "file_name": f"../wheels/{wheel.name}",  # resolved against the lock's own URL
        "install_dir": "site",
        "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
        "package_type": "package",
        "imports": top_level_imports(names),
        "depends": depends,
        "unvendored_tests": False,
    }


def pyodide_lock(shipped: dict[str, Any], wheels: list[Path]) -> tuple[dict[str, Any], list[str]]:
    """The lock to serve, and the names of Pyodide's entries our wheels replace."""
    ours: dict[str, dict[str, Any]] = {}
    for wheel in wheels:
        entry = lock_entry(wheel)
        key = canonical(entry["name"])
        if key in ours:
            raise LockError(f"two wheels provide {key}: {ours[key]['file_name']} and {wheel.name}")
        ours[key] = entry
    for key, entry in ours.items():
        for dep in entry["depends"]:
            if dep not in ours:
                raise LockError(f"{key} depends on {dep}, which has no wheel")
    replaced = sorted(k for k in ours if k in shipped["packages"])
    packages = dict(shipped["packages"])
    packages.update(ours)
    return {"info": shipped["info"], "packages": dict(sorted(packages.items()))}, replaced
