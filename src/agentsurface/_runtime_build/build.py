"""Build the offline browser runtime: vendored Pyodide, PyScript, the wheels and our own lock.

Used by ``scripts/build_web.py`` (the repository's ``web/dist``) and by ``agentsurface bundle``.
Idempotent: every step skips work that is already done and says so.

    <web>/dist/pyodide/     Pyodide runtime (from npm ``pyodide``), *our* pyodide-lock.json, and
                            its stdlib zip with bytecode added, which our loader boots with
                            (stdlib_zip.py)
    <web>/dist/pyscript/    PyScript (npm ``@pyscript/core`` dist/)
    <web>/dist/polyfill/    the WebMCP polyfill's IIFE bundles (npm ``@mcp-b/webmcp-polyfill`` 5.x, and
                            2.3.2 as webmcp-polyfill-2.3.2.iife.js)
    <web>/dist/wheels/      our wheel, the dependency wheels and the generated ``rpds`` shim wheel,
                            and our wheel as a zip pages import from in place (page_zip.py)
    <web>/dist/pyodide/agentsurface-memory.*
                            with ``memory_snapshot``: a memory snapshot with agentsurface imported,
                            for pages that opt in (memory_snapshot.py)
    <web>/dist/testing/     axe-core (npm ``axe-core``) for the accessibility tests; no page loads it

The lock is Pyodide's shipped lock with every package we provide replaced or added, pointing at
``../wheels/<file>`` with its real sha256, so ``pyodide.loadPackage(["agentsurface"])`` and
PyScript ``packages = ["agentsurface"]`` resolve the whole closure by name, integrity-checked,
without any CDN. Needs npm (once, for Pyodide/PyScript) and pip; stdlib only otherwise.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

from .._core.errors import AgentSurfaceError
from .._core.records import record
from .lock import PYTHON_VERSION, LockError, canonical, pyodide_lock
from .memory_snapshot import MemorySnapshotError, write_memory_snapshot
from .page_zip import page_zip_name, write_page_zip
from .precompile import PrecompileError, add_dataclass_code, precompile_wheels, record_line
from .stdlib_zip import COMPILED_STDLIB, write_compiled_stdlib


@record
class RuntimeLayout:
    """Where the runtime is built: ``web`` holds package.json, node_modules and dist; ``project``
    is the agentsurface source tree whose wheel goes into the runtime (commands run there)."""

    project: Path
    web: Path

    @property
    def node_modules(self) -> Path:
        return self.web / "node_modules"

    @property
    def dist(self) -> Path:
        return self.web / "dist"

    @property
    def wheels(self) -> Path:
        return self.dist / "wheels"

    @property
    def wheels_arg(self) -> str:
        """The wheels directory as commands see it (relative to the project when inside it)."""
        try:
            return self.wheels.relative_to(self.project).as_posix()
        except ValueError:
            return str(self.wheels)


WASM_PLATFORM = "pyemscripten_2026_0_wasm32"

# Pure wheels (any platform). Pinned so the lock is reproducible.
PURE_WHEELS = [
    "pydantic==2.14.3",
    "typing-extensions==4.16.0",
    "annotated-types==0.8.0",
    "typing-inspection==0.4.5",
    "jsonschema==4.26.0",
    "attrs==26.1.0",
    "referencing==0.37.0",
    "jsonschema-specifications==2025.9.1",
    "pyrsistent==0.20.0",  # the py3-none-any wheel; Pyodide's own is a wasm build we can't fetch
    "pyrsistent-as-rpds-py==2.1.0",
    "micropip==0.11.1",  # PyScript installs `packages` through micropip
]
# Binary wheels built for Pyodide's ABI.
WASM_WHEELS = [
    "pydantic-core==2.50.4",
]
# rpds-py has no wasm wheel on PyPI. pyrsistent-as-rpds-py implements the subset jsonschema and
# referencing need (module `pyrsistent_as_rpds.pure`); this generated wheel installs it as the
# `rpds` module under the distribution name `rpds-py`, the same trick as upstream's
# extra/fake_rpds, so dependency metadata and `import rpds` both resolve.
RPDS_SHIM_VERSION = "0.25.1+pyrsistent"
RPDS_SHIM_INIT = '''\
"""rpds stand-in for Pyodide: re-exports pyrsistent-as-rpds-py's pure-Python implementation."""

from pyrsistent_as_rpds.pure import *  # noqa: F403
from pyrsistent_as_rpds.pure import __all__  # noqa: F401
'''

PYODIDE_SKIP = {"package.json", "README.md", "pyodide-lock.json"}
PYODIDE_SKIP_SUFFIXES = (".d.ts", ".html")


class BuildError(AgentSurfaceError):
    pass


def say(message: str) -> None:
    print(f"[build_web] {message}", flush=True)


def run(cmd: list[str], cwd: Path) -> None:
    say("$ " + " ".join(cmd))
    try:
        result = subprocess.run(cmd, cwd=cwd, text=True, capture_output=True)
    except FileNotFoundError as exc:
        raise BuildError(f"command not found: {cmd[0]}") from exc
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip()
        raise BuildError(f"command failed ({result.returncode}): {' '.join(cmd)}\n{output}")


def npm_pins(layout: RuntimeLayout) -> dict[str, str]:
    pins: dict[str, str] = json.loads((layout.web / "package.json").read_text())["dependencies"]
    return pins


def npm_is_current(layout: RuntimeLayout) -> bool:
    for name, pin in npm_pins(layout).items():
        version = pin.rsplit("@", 1)[1] if pin.startswith("npm:") else pin  # an alias: npm:pkg@version
        manifest = layout.node_modules / name / "package.json"
        if not manifest.exists() or json.loads(manifest.read_text()).get("version") != version:
            return False
    return True


def ensure_node_modules(layout: RuntimeLayout) -> None:
    if npm_is_current(layout):
        say("node_modules up to date")
        return
    if shutil.which("npm") is None:
        raise BuildError("npm is not installed (needed once to fetch Pyodide, PyScript, polyfill)")
    has_lock = (layout.web / "package-lock.json").exists()
    run(["npm", "ci" if has_lock else "install", "--no-audit", "--no-fund"], cwd=layout.web)
    if not npm_is_current(layout):
        raise BuildError(f"npm finished but node_modules does not match {npm_pins(layout)}")


# --------------------------------------------------------------------------- copies


def sync_file(src: Path, dst: Path) -> bool:
    """Copy src to dst unless dst already has the same size and mtime."""
    if dst.exists():
        s, d = src.stat(), dst.stat()
        if s.st_size == d.st_size and int(s.st_mtime) == int(d.st_mtime):
            return False
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dst)
    return True


def sync_tree(src_dir: Path, dst_dir: Path, keep: Callable[[Path], bool] = lambda p: True) -> None:
    if not src_dir.is_dir():
        raise BuildError(f"missing {src_dir.name}/ in {src_dir.parent.name}/ (is the runtime complete?)")
    copied = 0
    for src in sorted(src_dir.rglob("*")):
        if src.is_file() and keep(src):
            copied += sync_file(src, dst_dir / src.relative_to(src_dir))
    rel = "/".join(dst_dir.parts[-3:])
    say(f"{rel}: copied {copied} file(s)" if copied else f"{rel}: up to date")


def copy_runtime(layout: RuntimeLayout) -> None:
    def pyodide_file(path: Path) -> bool:
        return path.name not in PYODIDE_SKIP and not path.name.endswith(PYODIDE_SKIP_SUFFIXES)

    sync_tree(layout.node_modules / "pyodide", layout.dist / "pyodide", pyodide_file)
    for required in ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip"):
        if not (layout.dist / "pyodide" / required).exists():
            raise BuildError(f"Pyodide runtime file missing after copy: {required}")

    sync_tree(layout.node_modules / "@pyscript" / "core" / "dist", layout.dist / "pyscript")

    # The IIFE builds have no imports. The current one (5.x) installs document.modelContext
    # (Chromium's shape) and its testing shim only when the page sets
    # window.__webMCPPolyfillOptions = {installTestingShim: true}; 2.3.2 (npm alias
    # webmcp-polyfill-2) installs the older navigator.modelContext and, by default,
    # navigator.modelContextTesting.
    for package, name in POLYFILLS:
        bundle = layout.node_modules / package / "dist" / "index.iife.js"
        if not bundle.exists():
            raise BuildError(f"polyfill bundle not found: {bundle}")
        changed = sync_file(bundle, layout.dist / "polyfill" / name)
        say(f"web/dist/polyfill: {'copied ' + name if changed else name + ' up to date'}")


POLYFILLS = (
    ("@mcp-b/webmcp-polyfill", "webmcp-polyfill.iife.js"),
    ("webmcp-polyfill-2", "webmcp-polyfill-2.3.2.iife.js"),
)


def copy_test_tools(layout: RuntimeLayout) -> None:
    """axe-core's ``axe.min.js`` into ``dist/testing/``: the e2e accessibility checks inject it
    into the page under test (``e2e/a11y.py``); no page loads it in normal use, and ``bundle``
    does not ship it (it copies only the runtime parts)."""
    axe = layout.node_modules / "axe-core" / "axe.min.js"
    if not axe.exists():
        raise BuildError(f"axe-core not found: {axe} (is it in {layout.web.name}/package.json?)")
    changed = sync_file(axe, layout.dist / "testing" / "axe.min.js")
    say("web/dist/testing: " + ("copied axe.min.js" if changed else "up to date"))


# --------------------------------------------------------------------------- wheels


def wheel_name_version(path: Path) -> tuple[str, str]:
    name, version = path.name.split("-")[:2]
    return canonical(name), version


def find_wheel(layout: RuntimeLayout, requirement: str) -> Path | None:
    name, version = requirement.split("==")
    for path in layout.wheels.glob("*.whl"):
        if wheel_name_version(path) == (canonical(name), version):
            return path
    return None


def pip_download(layout: RuntimeLayout, requirement: str, extra: list[str], offline: bool) -> None:
    if find_wheel(layout, requirement):
        say(f"cached {requirement}")
        return
    if offline:
        raise BuildError(f"{requirement} is not in {layout.wheels_arg} and --offline was given")
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--disable-pip-version-check",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            PYTHON_VERSION,
            *extra,
            "-d",
            layout.wheels_arg,
            requirement,
        ],
        layout.project,
    )
    if not find_wheel(layout, requirement):
        raise BuildError(f"pip download did not produce a wheel for {requirement}")


def download_wheels(layout: RuntimeLayout, offline: bool) -> None:
    layout.wheels.mkdir(parents=True, exist_ok=True)
    for requirement in PURE_WHEELS:
        pip_download(layout, requirement, [], offline)
    wasm = ["--platform", WASM_PLATFORM, "--implementation", "cp", "--abi", "cp314"]
    for requirement in WASM_WHEELS:
        pip_download(layout, requirement, wasm, offline)


def build_own_wheel(layout: RuntimeLayout) -> Path:
    for old in layout.wheels.glob("agentsurface-*.whl"):
        old.unlink()
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--disable-pip-version-check",
            ".",
            "--no-deps",
            "-w",
            layout.wheels_arg,
        ],
        layout.project,
    )
    built = sorted(layout.wheels.glob("agentsurface-*.whl"))
    if len(built) != 1:
        raise BuildError(f"expected one agentsurface wheel, found {[p.name for p in built]}")
    say(f"built {built[0].name}")
    return built[0]


def build_rpds_shim(layout: RuntimeLayout) -> Path:
    dist_info = f"rpds_py-{RPDS_SHIM_VERSION}.dist-info"
    files = {
        "rpds/__init__.py": RPDS_SHIM_INIT,
        "rpds/py.typed": "",
        f"{dist_info}/METADATA": (
            "Metadata-Version: 2.1\n"
            "Name: rpds-py\n"
            f"Version: {RPDS_SHIM_VERSION}\n"
            "Summary: rpds for Pyodide, backed by pyrsistent-as-rpds-py (generated by "
            "agentsurface's build_web.py)\n"
            "Requires-Dist: pyrsistent-as-rpds-py[pyrsistent]\n"
        ),
        f"{dist_info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: agentsurface build_web.py\n"
            "Root-Is-Purelib: true\nTag: py3-none-any\n"
        ),
        f"{dist_info}/top_level.txt": "rpds\n",
    }
    record = [record_line(name, text.encode()) for name, text in files.items()]
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = "\n".join(record) + "\n"

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():  # fixed timestamps: the same bytes on every build
            archive.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), text)
    data = buffer.getvalue()

    target = layout.wheels / f"rpds_py-{RPDS_SHIM_VERSION}-py3-none-any.whl"
    if target.exists() and target.read_bytes() == data:
        say(f"up to date {target.name}")
    else:
        target.write_bytes(data)
        say(f"wrote {target.name}")
    return target


# --------------------------------------------------------------------------- lock


def write_lock(layout: RuntimeLayout, wheels: list[Path]) -> None:
    shipped = json.loads((layout.node_modules / "pyodide" / "pyodide-lock.json").read_text())
    try:
        lock, replaced = pyodide_lock(shipped, wheels)
    except LockError as exc:
        raise BuildError(f"{exc} (wheels in {layout.wheels_arg})") from None
    text = json.dumps(lock, indent=1, sort_keys=False) + "\n"
    target = layout.dist / "pyodide" / "pyodide-lock.json"
    if target.exists() and target.read_text() == text:
        say("pyodide-lock.json up to date")
    else:
        target.write_text(text)
        ours = len(wheels)
        say(f"wrote pyodide-lock.json: {ours} local wheels ({len(replaced)} replace Pyodide's entries: {', '.join(replaced)})")


def wheels_in_lock(layout: RuntimeLayout) -> list[Path]:
    wanted = [find_wheel(layout, r) for r in PURE_WHEELS + WASM_WHEELS]
    return [w for w in wanted if w is not None]


def build(
    layout: RuntimeLayout,
    offline: bool = False,
    own_wheel: Callable[[RuntimeLayout], Path] = build_own_wheel,  # a pip install repacks itself
    memory_snapshot: bool = False,
) -> None:
    """Build (or bring up to date) the runtime in ``layout``; with ``memory_snapshot``, also the
    snapshot pages with ``data-memory-snapshot`` boot from (memory_snapshot.py: needs Playwright
    and chromium)."""
    ensure_node_modules(layout)
    copy_runtime(layout)
    copy_test_tools(layout)
    download_wheels(layout, offline)
    own = own_wheel(layout)
    shim = build_rpds_shim(layout)
    served = [own, shim, *wheels_in_lock(layout)]
    shipped_lock = layout.node_modules / "pyodide" / "pyodide-lock.json"
    try:
        precompile_wheels(layout.dist / "pyodide", shipped_lock, served, say)
        if add_dataclass_code(layout.dist / "pyodide", shipped_lock, own):
            say(f"records' generated code: compiled into {own.name} with Pyodide's CPython")
        write_compiled_stdlib(layout.dist / "pyodide", shipped_lock, served, say)
    except PrecompileError as exc:
        raise BuildError(str(exc)) from None
    write_lock(layout, served)
    written = write_page_zip(own, layout.dist, stdlib=COMPILED_STDLIB)
    say(f"wrote {page_zip_name(own)} (the page imports it in place)" if written else "page zip up to date")
    if memory_snapshot:
        try:
            write_memory_snapshot(layout.dist, say)
        except MemorySnapshotError as exc:
            raise BuildError(str(exc)) from None
    say(f"done: {layout.dist.name} is ready")


def source_checkout() -> Path | None:
    """The agentsurface source tree this package runs from (an editable install), if any."""
    candidate = Path(__file__).resolve().parents[3]
    pyproject = candidate / "pyproject.toml"
    if (
        pyproject.is_file()
        and (candidate / "web" / "package.json").is_file()
        and re.search(r'^name\s*=\s*"agentsurface"', pyproject.read_text(), re.M)
    ):
        return candidate
    return None
