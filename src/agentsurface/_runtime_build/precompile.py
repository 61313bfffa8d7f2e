"""Bytecode for the browser runtime: every wheel we serve gets its modules compiled by Pyodide's
own CPython at build time, so a page imports them without compiling their source first.

Pyodide runs with ``sys.dont_write_bytecode`` and a fresh file system on every load: without
these files every import in every page view compiles its source again (most of the library's and
pydantic's import time in the page). The compiled files are unchecked hash-based ``.pyc`` (PEP
552), added next to the sources (``pkg/__pycache__/mod.cpython-314.pyc``, listed in RECORD):
unpacked wheels get fresh mtimes, so only a pyc that is never checked against its source is
used. A wheel that already holds them is left alone. Needs node (the vendored Pyodide runs in it).
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from .._compat import DATACLASS_CODE, RECORD_CODE_ENV
from .._core.errors import AgentSurfaceError

CACHE_TAG = "cpython-314"
DATACLASS_CODE_MEMBER = f"agentsurface/{DATACLASS_CODE}"  # where our wheel carries it

# Node: boot the vendored Pyodide (with the lock given as argv[2]: a first build has not written
# its own yet; and the stdlib zip as argv[3], if given), compile every {name, filename, source,
# checked} read from stdin as a hash-based pyc (``filename`` is the one compiled into the code;
# ``checked``: checked against its source by the import), answer [{name, pyc (base64)}] on stdout;
# a source that does not compile gets no pyc (its import compiles it in the page and reports the
# error there, as without this step).
_NODE_COMPILER = """
const { loadPyodide } = await import(process.argv[1] + "/pyodide.mjs");
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const stdlib = process.argv[3] ? { stdLibURL: process.argv[3] } : {};
const pyodide = await loadPyodide({ indexURL: process.argv[1] + "/", lockFileURL: process.argv[2], ...stdlib });
pyodide.globals.set("sources_json", Buffer.concat(chunks).toString());
process.stdout.write(pyodide.runPython(`
import base64, json
from importlib._bootstrap_external import _code_to_hash_pyc
from importlib.util import source_hash
compiled = []
for item in json.loads(sources_json):
    source = item["source"].encode()
    try:
        code = compile(source, item["filename"], "exec", dont_inherit=True)
    except SyntaxError:
        continue
    pyc = _code_to_hash_pyc(code, source_hash(source), checked=item["checked"])
    compiled.append({"name": item["name"], "pyc": base64.b64encode(bytes(pyc)).decode()})
json.dumps(compiled)
`));
"""


# Python, in the two Node runs below: import every module of agentsurface a page can import
# without other packages (a module that needs one, or a browser, is skipped: its classes compile
# in the page, its imports are not recorded).
_IMPORT_PAGE_MODULES = """import agentsurface
for info in pkgutil.walk_packages(agentsurface.__path__, "agentsurface."):
    if info.name.split(".")[1] in ("cli", "server", "compiler", "testing"):
        continue
    try:
        importlib.import_module(info.name)
    except Exception:
        pass"""


# Node: boot the vendored Pyodide, import agentsurface from the wheel given as argv[3] (every
# module a page can import without other packages) with the records keeping the code they
# generate (RECORD_CODE_ENV: nothing else is recorded, and dataclasses is left as it was), and
# answer base64(MAGIC_NUMBER + marshal({text: code})) on stdout.
_NODE_DATACLASS_CODE = """
const { loadPyodide } = await import(process.argv[1] + "/pyodide.mjs");
const { readFileSync } = await import("node:fs");
const pyodide = await loadPyodide({ indexURL: process.argv[1] + "/", lockFileURL: process.argv[2] });
pyodide.FS.writeFile("/tmp/agentsurface.whl", readFileSync(process.argv[3]));
process.stdout.write(pyodide.runPython(`
import base64, importlib, importlib.util, marshal, os, pkgutil, sys
sys.path.insert(0, "/tmp/agentsurface.whl")
os.environ["%RECORD_CODE_ENV%"] = "1"
%IMPORT_PAGE_MODULES%
from agentsurface._compat import recorded_code
base64.b64encode(importlib.util.MAGIC_NUMBER + marshal.dumps(recorded_code())).decode()
`));
""".replace("%IMPORT_PAGE_MODULES%", _IMPORT_PAGE_MODULES).replace("%RECORD_CODE_ENV%", RECORD_CODE_ENV)


# Node: boot the vendored Pyodide, install the wheels given as argv[3] (a JSON list of paths), import
# agentsurface (every module a page can import), pydantic, jsonschema and micropip, and answer
# the stdlib files imported by then (relative to the stdlib zip), as a JSON list, on stdout.
_NODE_STDLIB_IMPORTS = """
const { loadPyodide } = await import(process.argv[1] + "/pyodide.mjs");
const pyodide = await loadPyodide({ indexURL: process.argv[1] + "/", lockFileURL: process.argv[2] });
await pyodide.loadPackage(JSON.parse(process.argv[3]), { messageCallback: () => {} });
process.stdout.write(pyodide.runPython(`
import importlib, json, pkgutil, sys
from agentsurface._compat import import_jsonschema
%IMPORT_PAGE_MODULES%
import pydantic, micropip
import_jsonschema()
prefix = "/lib/python314.zip/"
files = {getattr(module, "__file__", None) or "" for module in list(sys.modules.values())}
sources = {name[: -1] if name.endswith(".pyc") else name for name in files}  # a module read from its pyc
json.dumps(sorted(name.removeprefix(prefix) for name in sources if name.startswith(prefix)))
`));
""".replace("%IMPORT_PAGE_MODULES%", _IMPORT_PAGE_MODULES)


class PrecompileError(AgentSurfaceError):
    pass


def pyc_name(source: str) -> str:
    """``pkg/mod.py`` -> ``pkg/__pycache__/mod.cpython-314.pyc``."""
    path = PurePosixPath(source)
    return str(path.parent / "__pycache__" / f"{path.stem}.{CACHE_TAG}.pyc").removeprefix("./")


def _sources(wheel: Path) -> dict[str, str] | None:
    """The wheel's Python sources by archive name, or None when it already has bytecode."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        if any(name.endswith(f".{CACHE_TAG}.pyc") for name in names):
            return None
        return {
            name: archive.read(name).decode("utf-8")
            for name in names
            if name.endswith(".py") and ".dist-info/" not in name and ".data/" not in name
        }


def _run_in_pyodide(script: str, args: list[str], what: str, stdin: str | None = None) -> str:
    """Run a Node ``script`` (it boots the vendored Pyodide itself) with ``args``; its stdout.
    ``what`` names the step in the error raised when node is missing or the script fails."""
    node = shutil.which("node")
    if node is None:
        raise PrecompileError("node is not installed (it runs Pyodide to compile the wheels)")
    result = subprocess.run(
        [node, "--input-type=module", "-e", script, *args], input=stdin, capture_output=True, text=True
    )
    if result.returncode != 0:
        raise PrecompileError(f"{what} with Pyodide failed:\n{result.stderr.strip()[-2000:]}")
    return result.stdout


def _compile(
    pyodide_dir: Path, lock_file: Path, sources: dict[str, tuple[str, str]], checked: bool = False
) -> dict[str, bytes]:
    """{name: (file name, source)} -> {name: pyc}, in one Pyodide run; a syntax error gets none.
    ``checked``: pycs the import checks against their source's hash (else never checked)."""
    request = json.dumps(
        [
            {"name": name, "filename": filename, "source": text, "checked": checked}
            for name, (filename, text) in sources.items()
        ]
    )
    args = [str(pyodide_dir.resolve()), str(lock_file.resolve())]
    if not (pyodide_dir / "python_stdlib.zip").exists():
        # A bundle keeps only the compiled stdlib (npm's plus bytecode): the same Python.
        args.append(str((pyodide_dir / "python_stdlib_compiled.zip").resolve()))
    answer = _run_in_pyodide(_NODE_COMPILER, args, "compiling", stdin=request)
    return {item["name"]: base64.b64decode(item["pyc"]) for item in json.loads(answer)}


def compile_sources(pyodide_dir: Path, lock_file: Path, sources: dict[str, str]) -> dict[str, bytes]:
    """{file name: source} -> {file name: unchecked hash-based pyc}, compiled by Pyodide's CPython
    in one run; the file name is the one compiled into the code. A source with a syntax error is
    left out."""
    return _compile(pyodide_dir, lock_file, {name: (name, text) for name, text in sources.items()})


def compile_checked(pyodide_dir: Path, lock_file: Path, sources: dict[str, str]) -> dict[str, bytes]:
    """As :func:`compile_sources`, but checked hash-based pycs: the import uses one only while
    its source is the one it was compiled from (an edited file is compiled again, never stale)."""
    return _compile(pyodide_dir, lock_file, {name: (name, text) for name, text in sources.items()}, checked=True)


def stdlib_imports(pyodide_dir: Path, lock_file: Path, wheels: list[Path]) -> list[str]:
    """The stdlib files (``asyncio/events.py``...) a page imports once Pyodide has booted and
    agentsurface, its dependencies and micropip are imported: what is worth compiling ahead."""
    paths = json.dumps([str(wheel.resolve()) for wheel in wheels])
    args = [str(pyodide_dir.resolve()), str(lock_file.resolve()), paths]
    names: list[str] = json.loads(
        _run_in_pyodide(_NODE_STDLIB_IMPORTS, args, "importing the runtime's packages")
    )
    return names


def record_line(name: str, data: bytes) -> str:
    """The wheel RECORD line for ``name`` holding ``data``: path, urlsafe-base64 sha256, size."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _rewrite(wheel: Path, compiled: dict[str, bytes], extra: dict[str, bytes] | None = None) -> None:
    """The wheel with the pycs (and ``extra`` files by archive name) added and listed in its
    RECORD, replaced atomically."""
    staged = wheel.with_suffix(".whl.tmp")
    with zipfile.ZipFile(wheel) as old, zipfile.ZipFile(staged, "w", zipfile.ZIP_DEFLATED) as new:
        record_name = next(n for n in old.namelist() if n.endswith(".dist-info/RECORD"))
        for info in old.infolist():
            if info.filename != record_name:
                new.writestr(info, old.read(info.filename))
        added = []
        files = {pyc_name(source): data for source, data in compiled.items()} | (extra or {})
        for name, data in sorted(files.items()):
            new.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), data)
            added.append(record_line(name, data))
        record = old.read(record_name).decode().rstrip("\n").split("\n")
        new.writestr(old.getinfo(record_name), "\n".join([*record, *added]) + "\n")
    staged.replace(wheel)


def add_dataclass_code(pyodide_dir: Path, lock_file: Path, wheel: Path) -> bool:
    """Add DATACLASS_CODE_MEMBER (see agentsurface._compat.DATACLASS_CODE) to our ``wheel``,
    compiled by Pyodide's CPython; False when the wheel has it already."""
    name = DATACLASS_CODE_MEMBER
    with zipfile.ZipFile(wheel) as archive:
        if name in archive.namelist():
            return False
    args = [str(p.resolve()) for p in (pyodide_dir, lock_file, wheel)]
    code = _run_in_pyodide(_NODE_DATACLASS_CODE, args, "compiling the records' generated code")
    _rewrite(wheel, {}, extra={name: base64.b64decode(code)})
    return True


def precompile_wheels(
    pyodide_dir: Path, lock_file: Path, wheels: list[Path], say: Callable[[str], None]
) -> None:
    """Add bytecode to every wheel that lacks it, with one Pyodide run for all of them
    (``lock_file``: the pyodide-lock.json Pyodide boots with, e.g. the one npm shipped)."""
    pending = {wheel: sources for wheel in wheels if (sources := _sources(wheel))}
    if not pending:
        say("bytecode: every wheel is compiled already")
        return
    everything = {
        f"{wheel.name}!{name}": (name, text) for wheel, sources in pending.items() for name, text in sources.items()
    }
    compiled = _compile(pyodide_dir, lock_file, everything)
    for wheel, sources in pending.items():
        _rewrite(wheel, {name: compiled[key] for name in sources if (key := f"{wheel.name}!{name}") in compiled})
    say(f"bytecode: compiled {len(everything)} modules in {len(pending)} wheel(s) with Pyodide's CPython")
