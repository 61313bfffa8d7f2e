"""Pyodide's standard library with its bytecode: the zip our loader boots Pyodide with.

npm's ``python_stdlib.zip`` holds only sources, so every page load compiles each stdlib module it
imports: about 145 modules before ``loadPyodide`` resolves (asyncio, typing, dataclasses, ast,
re...), more than half of a bare boot in Chromium, on every visit (the browser caches the wasm's
compiled code, not Python's). This build step compiles, once and with Pyodide's own CPython, the
modules a page of ours imports (the boot's, agentsurface's, its dependencies', the package
loader's and micropip's: ``precompile.stdlib_imports``, about 200) into unchecked hash-based
pycs stored beside their sources (``mod.pyc`` next to ``mod.py``, where zipimport looks first),
and writes the result beside the original:

    <dist>/pyodide/python_stdlib.zip            npm's, untouched (PyScript and bare pages)
    <dist>/pyodide/python_stdlib_compiled.zip   all of its files, plus those ~200 pycs (+2 MB)

Any other module still compiles from its source in the page, as before.

``web/agentsurface.js`` passes it to ``loadPyodide`` as ``stdLibURL`` when the page zip's info
file names it (page_zip.py), so a runtime built without it boots as before. Sources stay, so
tracebacks and ``inspect`` still read them.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

from .precompile import compile_sources, stdlib_imports

STDLIB = "python_stdlib.zip"
COMPILED_STDLIB = "python_stdlib_compiled.zip"
# Where Pyodide mounts its stdlib zip: the file name compiled into each module's code, as
# zipimport would give it when compiling the source in the page.
MOUNTED_AT = "/lib/python314.zip"
# Recorded in the compiled zip's comment: rebuilt only when npm's zip or a served wheel changes
# (a wheel decides which stdlib modules are imported).
_TAG = b"agentsurface compiled stdlib, sha256 of its inputs: "


def build_tag(stdlib: bytes, wheels: Iterable[Path]) -> bytes:
    """What the compiled zip was made from: npm's stdlib zip and the wheels whose imports chose
    the modules compiled."""
    digest = hashlib.sha256(hashlib.sha256(stdlib).digest())
    for wheel in sorted(wheels, key=lambda path: path.name):
        digest.update(wheel.name.encode() + b"\0" + hashlib.sha256(wheel.read_bytes()).digest())
    return _TAG + digest.hexdigest().encode()


def is_current(compiled: Path, tag: bytes) -> bool:
    """Whether ``compiled`` was built from the inputs ``tag`` names (its zip comment says so)."""
    if not compiled.is_file():
        return False
    try:
        with zipfile.ZipFile(compiled) as archive:
            return archive.comment == tag
    except zipfile.BadZipFile:
        return False


def compiled_stdlib_bytes(
    stdlib: bytes, wanted: Iterable[str], compile_all: Callable[[dict[str, str]], dict[str, bytes]], tag: bytes
) -> bytes:
    """The zip's bytes: every entry of ``stdlib`` as it was, and after each ``mod.py`` named in
    ``wanted`` (paths inside the zip) a ``mod.pyc`` from ``compile_all`` ({file name: source} ->
    {file name: pyc}; one that did not compile is left out). Pycs are deflated, as the sources are."""
    with zipfile.ZipFile(io.BytesIO(stdlib)) as source:
        names = set(source.namelist())
        chosen = sorted(name for name in set(wanted) if name.endswith(".py") and name in names)
        compiled = compile_all({f"{MOUNTED_AT}/{name}": source.read(name).decode("utf-8") for name in chosen})
        target = io.BytesIO()
        with zipfile.ZipFile(target, "w") as out:
            for info in source.infolist():
                out.writestr(info, source.read(info))
                pyc = compiled.get(f"{MOUNTED_AT}/{info.filename}")
                if pyc is not None:
                    entry = zipfile.ZipInfo(info.filename[:-3] + ".pyc", date_time=info.date_time)
                    entry.compress_type = zipfile.ZIP_DEFLATED
                    entry.external_attr = info.external_attr
                    out.writestr(entry, pyc)
            out.comment = tag
    return target.getvalue()


def write_compiled_stdlib(
    pyodide_dir: Path, lock_file: Path, wheels: list[Path], say: Callable[[str], None]
) -> bool:
    """Write ``COMPILED_STDLIB`` beside Pyodide's stdlib zip, with the pycs of the modules a page
    importing ``wheels`` uses; False when it is up to date."""
    stdlib = (pyodide_dir / STDLIB).read_bytes()
    target = pyodide_dir / COMPILED_STDLIB
    tag = build_tag(stdlib, wheels)
    if is_current(target, tag):
        say(f"{COMPILED_STDLIB} up to date")
        return False

    def compile_all(sources: dict[str, str]) -> dict[str, bytes]:
        return compile_sources(pyodide_dir, lock_file, sources)

    wanted = stdlib_imports(pyodide_dir, lock_file, wheels)
    data = compiled_stdlib_bytes(stdlib, wanted, compile_all, tag)
    staged = target.with_suffix(".zip.tmp")
    staged.write_bytes(data)
    staged.replace(target)
    say(f"wrote {COMPILED_STDLIB}: {len(wanted)} stdlib modules compiled with Pyodide's CPython")
    return True
