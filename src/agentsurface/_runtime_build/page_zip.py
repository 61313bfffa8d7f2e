"""Our wheel as a zip a page imports from directly (zipimport), the way Python reads its stdlib.

web/agentsurface.js mounts this zip on ``sys.path`` instead of installing the wheel through
Pyodide's package loader whenever the page needs no other package at start: the first
``loadPackage`` of a page costs a fixed ~120 ms (the loader's own imports) before the wheel's
~65 ms of unpacking, all on the way to the first tool. zipimport reads a module's ``mod.pyc``
beside ``mod.py`` (never ``__pycache__/``), so each precompiled pyc is stored there as well; they
are unchecked hash-based pycs, used without reading the source, which stays for tracebacks.

    <dist>/wheels/agentsurface-<version>.zip      the wheel's files, pycs beside their sources
    <dist>/pyodide/agentsurface-zip.json          {file, sha256, wheel_sha256[, stdlib]}: the
                                                   loader uses the zip only when wheel_sha256 is
                                                   the locked wheel's (built from the same
                                                   wheel); ``stdlib``, when present, is the
                                                   stdlib zip with bytecode it boots Pyodide
                                                   with (stdlib_zip.py), beside this file
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path, PurePosixPath

from .precompile import CACHE_TAG

ZIP_INFO = "agentsurface-zip.json"


def legacy_pyc_name(cached: str) -> str | None:
    """``pkg/__pycache__/mod.cpython-314.pyc`` -> ``pkg/mod.pyc``; None for any other file."""
    path = PurePosixPath(cached)
    suffix = f".{CACHE_TAG}.pyc"
    if path.parent.name != "__pycache__" or not path.name.endswith(suffix):
        return None
    return str(path.parent.parent / (path.name.removesuffix(suffix) + ".pyc")).removeprefix("./")


def page_zip_bytes(wheel: Path) -> bytes:
    """The zip's bytes: every file of ``wheel`` in order, each ``__pycache__`` pyc moved beside
    its source (deterministic: the wheel's dates and modes are kept)."""
    target = io.BytesIO()
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for info in source.infolist():
            name = legacy_pyc_name(info.filename) or info.filename
            entry = zipfile.ZipInfo(name, date_time=info.date_time)
            entry.external_attr = info.external_attr or 0o644 << 16
            out.writestr(entry, source.read(info.filename))
    return target.getvalue()


def page_zip_name(wheel: Path) -> str:
    """``agentsurface-<version>-py3-none-any.whl`` -> ``agentsurface-<version>.zip``."""
    return f"agentsurface-{wheel.name.split('-')[1]}.zip"


def write_page_zip(wheel: Path, dist: Path, stdlib: str | None = None) -> bool:
    """Write the zip for ``wheel`` (in ``dist/wheels``) and its info file, naming ``stdlib`` (a
    file in ``dist/pyodide``) when given; False when up to date."""
    data = page_zip_bytes(wheel)
    zip_path = dist / "wheels" / page_zip_name(wheel)
    info = {
        "file": f"../wheels/{zip_path.name}",  # resolved against the info file's URL, like the lock
        "sha256": hashlib.sha256(data).hexdigest(),
        "wheel_sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
    }
    if stdlib is not None and (dist / "pyodide" / stdlib).is_file():
        info["stdlib"] = stdlib
    info_path = dist / "pyodide" / ZIP_INFO
    text = json.dumps(info, indent=1) + "\n"
    if zip_path.exists() and info_path.exists() and info_path.read_text() == text:
        return False
    for stale in (dist / "wheels").glob("agentsurface-*.zip"):
        stale.unlink()
    zip_path.write_bytes(data)
    info_path.write_text(text)
    return True
