"""A Pyodide memory snapshot with agentsurface already imported, for pages that opt in.

A page whose loader script has ``data-memory-snapshot`` boots Pyodide from this snapshot instead
of running the interpreter's start and the library's imports (web/agentsurface.js): the
runtime's linear memory as it was once Pyodide had booted with our compiled stdlib and imported
every page module of agentsurface from its zip (and the small pure-Python packages its simple
type hints use: PRELOADED). It is made in the browser it is restored in
(headless Chromium through Playwright; under node the environment differs: ``os.environ``,
``LANG``, the script's path), booted the way the loader boots, so nothing but the memory
changes for the page.

    <dist>/pyodide/agentsurface-memory.bin.gz   the snapshot, gzipped (the loader inflates it
                                                 with DecompressionStream: any static server)
    <dist>/pyodide/agentsurface-memory.json     {file, sha256, size, zip_sha256, stdlib,
                                                 packages, inputs}: the loader uses the snapshot
                                                 only with the zip and stdlib it was made from;
                                                 ``inputs`` is the build's tag (rebuilt when any
                                                 input changes)

Its inputs are Pyodide's runtime files, the lock, the compiled stdlib zip, agentsurface's page
zip and the maker page below: any change rebuilds it. Needs Playwright and Debian's ``chromium``.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import mimetypes
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .._core.errors import AgentSurfaceError
from .page_zip import ZIP_INFO

if TYPE_CHECKING:  # Playwright is needed only to make the snapshot
    from playwright.sync_api import Route

MEMORY_SNAPSHOT = "agentsurface-memory.bin.gz"
MEMORY_INFO = "agentsurface-memory.json"
# The files of the runtime the snapshot is made from (and restored with), in dist/pyodide.
RUNTIME_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm")
# Served to the maker page through Playwright's routing, never over a network (a *.localhost
# origin is a secure context in Chromium, as a page served over https is).
ORIGIN = "http://agentsurface-build.localhost"
# Pure-Python packages of agentsurface's own dependency closure that pages with simple type hints
# import at start (annotated_types' constraint markers): unpacked from their wheels and imported
# into the snapshot too. The loader still installs them when a page names them in data-packages,
# and loads them with the rest of the dependencies otherwise, as without the snapshot.
PRELOADED = ("annotated-types", "typing-extensions")
# agentsurface's modules that no page imports (the runtime build, the command line, the servers,
# the test helpers): left out of the snapshot.
NOT_IN_PAGES = ("_runtime_build", "cli", "server", "testing", "mcp_server", "django", "fastapi")

# Boot as web/agentsurface.js does (the compiled stdlib, the zip at /lib/<its name> on sys.path),
# import every page module of agentsurface that imports without other packages, then snapshot.
MAKER_PAGE = """<!doctype html>
<meta charset="utf-8">
<script type="module">
try {
const indexURL = new URL("/pyodide/", location.href).href;
const info = await (await fetch(indexURL + "%ZIP_INFO%")).json();
const { loadPyodide } = await import(indexURL + "pyodide.mjs");
const pyodide = await loadPyodide({
  indexURL, stdLibURL: new URL(info.stdlib, indexURL).href, _makeSnapshot: true,
});
const zipUrl = new URL(info.file, indexURL + "%ZIP_INFO%").href;
const zipPath = "/lib/" + zipUrl.split("/").pop();
pyodide.FS.writeFile(zipPath, new Uint8Array(await (await fetch(zipUrl)).arrayBuffer()));
const lock = await (await fetch(indexURL + "pyodide-lock.json")).json();
const wheels = [];
for (const name of %PRELOADED%) {
  const url = new URL(lock.packages[name].file_name, indexURL).href;
  const path = "/tmp/" + url.split("/").pop();
  pyodide.FS.writeFile(path, new Uint8Array(await (await fetch(url)).arrayBuffer()));
  wheels.push(path);
}
// In a namespace of its own: the page's scripts run in Pyodide's globals, which stay as a boot
// leaves them.
const newDict = pyodide.globals.get("dict");
const namespace = newDict();
newDict.destroy();
namespace.set("wheels_json", JSON.stringify(wheels));
namespace.set("zip_path", zipPath);
const skipped = pyodide.runPython(`
import importlib, json, pkgutil, sys
sys.path.append(zip_path)
from agentsurface.browser.packages import unpack_wheels
unpack_wheels(wheels_json)
import annotated_types, typing_extensions, agentsurface
skipped = []
for module in pkgutil.walk_packages(agentsurface.__path__, "agentsurface."):
    if module.name.split(".")[1] in %NOT_IN_PAGES%:
        continue
    try:
        importlib.import_module(module.name)
    except Exception as error:  # needs another package: imported in the page, as without it
        skipped.append(f"{module.name}: {type(error).__name__}")
json.dumps(skipped)
`, { globals: namespace });
namespace.destroy();
const bytes = pyodide.makeMemorySnapshot();
const gzipped = new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"));
const base64 = await new Promise(async (resolve) => {
  const reader = new FileReader();
  reader.onload = () => resolve(reader.result.slice(reader.result.indexOf(",") + 1));
  reader.readAsDataURL(await new Response(gzipped).blob());
});
window.snapshot = { base64, size: bytes.length, skipped };
} catch (error) {
  window.snapshot = { failed: String(error?.stack ?? error) };
}
</script>
""".replace("%ZIP_INFO%", ZIP_INFO).replace("%NOT_IN_PAGES%", repr(NOT_IN_PAGES)).replace(
    "%PRELOADED%", json.dumps(PRELOADED)
)


class MemorySnapshotError(AgentSurfaceError):
    """The snapshot could not be made (no Playwright or chromium, or the page failed)."""


def inputs_tag(pyodide_dir: Path) -> str:
    """What a snapshot is made from: the runtime's files, the lock (the preloaded wheels' sha256),
    the zip info and the files it names (agentsurface's zip, the compiled stdlib), and the maker
    page."""
    digest = hashlib.sha256(MAKER_PAGE.encode())
    info_path = pyodide_dir / ZIP_INFO
    info = json.loads(info_path.read_text())
    if not info.get("stdlib"):
        raise MemorySnapshotError(f"{ZIP_INFO} names no compiled stdlib: the loader's boot, and so the snapshot, needs it")
    files = [pyodide_dir / name for name in (*RUNTIME_FILES, "pyodide-lock.json")]
    files += [info_path, (pyodide_dir / info["file"]).resolve(), pyodide_dir / info["stdlib"]]
    for path in files:
        digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def is_current(pyodide_dir: Path, tag: str) -> bool:
    """Whether the snapshot in ``pyodide_dir`` was made from the inputs ``tag`` names."""
    info_path, snapshot = pyodide_dir / MEMORY_INFO, pyodide_dir / MEMORY_SNAPSHOT
    if not (info_path.is_file() and snapshot.is_file()):
        return False
    try:
        info = json.loads(info_path.read_text())
    except ValueError:
        return False
    return bool(
        info.get("inputs") == tag and info.get("sha256") == hashlib.sha256(snapshot.read_bytes()).hexdigest()
    )


def _route_to(root: Path) -> Callable[[Route], None]:
    """A Playwright route handler serving ``root``'s files at ORIGIN (the maker page at /)."""

    def handle(route: Route) -> None:
        path = route.request.url.removeprefix(ORIGIN).split("?")[0].lstrip("/")
        if path == "":
            route.fulfill(body=MAKER_PAGE, content_type="text/html")
            return
        file = (root / path).resolve()
        if root.resolve() not in file.parents or not file.is_file():
            route.fulfill(status=404)
            return
        kind = "application/wasm" if file.suffix == ".wasm" else mimetypes.guess_type(file.name)[0]
        route.fulfill(body=file.read_bytes(), content_type=kind or "application/octet-stream")

    return handle


def make_snapshot(dist: Path, timeout_ms: int = 180_000) -> tuple[bytes, int, list[str]]:
    """Make the snapshot in headless Chromium: (gzipped bytes, raw size, modules left out)."""
    chromium = shutil.which("chromium")
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        raise MemorySnapshotError("the memory snapshot needs Playwright (pip install playwright)") from None
    if chromium is None:
        raise MemorySnapshotError("the memory snapshot needs Debian's chromium (apt install chromium)")
    errors: list[str] = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
            try:
                page = browser.new_page()
                page.on("pageerror", lambda error: errors.append(str(error)))
                page.route(f"{ORIGIN}/**", _route_to(dist))
                page.goto(f"{ORIGIN}/")
                page.wait_for_function("() => window.snapshot !== undefined", timeout=timeout_ms)
                made = page.evaluate("() => window.snapshot")
            finally:
                browser.close()
    except Error as exc:
        detail = "; ".join(errors) or str(exc).splitlines()[0]
        raise MemorySnapshotError(f"making the memory snapshot failed: {detail}") from None
    if "failed" in made:
        raise MemorySnapshotError(f"making the memory snapshot failed: {made['failed'][-2000:]}")
    return base64.b64decode(made["base64"]), int(made["size"]), json.loads(made["skipped"])


def write_memory_snapshot(
    dist: Path,
    say: Callable[[str], None],
    make: Callable[[Path], tuple[bytes, int, list[str]]] = make_snapshot,
) -> bool:
    """Write the snapshot and its info file into ``dist/pyodide``; False when up to date."""
    pyodide_dir = dist / "pyodide"
    tag = inputs_tag(pyodide_dir)
    if is_current(pyodide_dir, tag):
        say(f"{MEMORY_SNAPSHOT} up to date")
        return False
    gzipped, size, skipped = make(dist)
    if len(gzip.decompress(gzipped)) != size:
        raise MemorySnapshotError("the memory snapshot came back damaged")
    zip_info = json.loads((pyodide_dir / ZIP_INFO).read_text())
    info = {
        "file": MEMORY_SNAPSHOT,
        "sha256": hashlib.sha256(gzipped).hexdigest(),
        "size": size,
        "zip_sha256": zip_info["sha256"],
        "stdlib": zip_info["stdlib"],
        "packages": list(PRELOADED),
        "inputs": tag,
    }
    staged = pyodide_dir / (MEMORY_SNAPSHOT + ".tmp")
    staged.write_bytes(gzipped)
    staged.replace(pyodide_dir / MEMORY_SNAPSHOT)
    (pyodide_dir / MEMORY_INFO).write_text(json.dumps(info, indent=1) + "\n")
    left_out = f"; left out (they need other packages): {', '.join(skipped)}" if skipped else ""
    say(f"wrote {MEMORY_SNAPSHOT}: {size / 1e6:.1f} MB, {len(gzipped) / 1e6:.1f} MB gzipped{left_out}")
    return True
