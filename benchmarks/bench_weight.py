"""Page weight, printed: a bundled site's bytes on disk and transferred on first load, beside a
bare Pyodide distribution and a bare ``loadPyodide`` page.

    .venv/bin/python benchmarks/bench_weight.py

- on disk: the bare Pyodide distribution (the files a ``loadPyodide`` boot needs), web/dist as
  built, and ``agentsurface bundle`` of the test shop app (tests/fixtures/shop_app), by part;
- transferred (CDP ``Network.loadingFinished`` encodedDataLength, cold profile, no HTTP
  compression from the test server): the bare page, our JSON-Schema and type-hinted benchmark
  pages and the bundled shop, to their first tool and once the background loads are done.

Needs web/dist (scripts/build_web.py) and Debian's chromium. Never asserts.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from playwright.sync_api import Playwright, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_browser import BOOT_TIMEOUT_MS, WEBMCP, browser  # noqa: E402
from scripts.serve import start_server  # noqa: E402

BARE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _mb(n: float) -> str:
    return f"{n / 1e6:7.2f} MB"


def on_disk(site: Path) -> None:
    pyodide = ROOT / "web" / "node_modules" / "pyodide"
    bare = sum(_size(pyodide / name) for name in BARE_FILES)
    print("on disk")
    print(f"  bare Pyodide distribution ({', '.join(BARE_FILES)}) {_mb(bare)}")
    dist = ROOT / "web" / "dist"
    print(
        f"  web/dist as built (every part, tests' too)   {_mb(_size(dist))}  ({_size(dist) / bare:.2f}x bare)"
    )
    for part in sorted(p.name for p in dist.iterdir()):
        print(f"    {part:<12} {_mb(_size(dist / part))}")
    total = _size(site)
    print(f"  bundled shop site                            {_mb(total)}  ({total / bare:.2f}x bare)")
    for part in sorted(p.relative_to(site).as_posix() for p in (site / "dist").iterdir()):
        print(f"    {part:<12} {_mb(_size(site / part))}")
    wheels = sorted((site / "dist" / "wheels").iterdir(), key=lambda p: -p.stat().st_size)
    print("    wheels: " + ", ".join(f"{p.name.split('-')[0]} {p.stat().st_size / 1e6:.2f}" for p in wheels))


def transferred(pw: Playwright, url: str, ready: str, complete: bool) -> tuple[int, int, int]:
    """(bytes to ready, bytes after complete, requests) on a cold profile."""
    totals = {"bytes": 0, "requests": 0}
    with browser(pw, WEBMCP) as context:
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})

        def finished(event: dict[str, Any]) -> None:
            totals["bytes"] += int(event.get("encodedDataLength", 0))
            totals["requests"] += 1

        cdp.on("Network.loadingFinished", finished)
        page.goto(url)
        if ready == "ready":  # the page's scripts have run (their tools registered)
            page.wait_for_function("() => window.agentSurface", timeout=BOOT_TIMEOUT_MS)
            page.evaluate("() => window.agentSurface.ready.then(() => null)")
            assert page.evaluate("async () => (await document.modelContext.getTools()).length") > 0
        else:
            page.wait_for_function(ready, timeout=BOOT_TIMEOUT_MS)
        page.wait_for_timeout(200)
        at_ready = totals["bytes"]
        if complete:
            page.evaluate("() => window.agentSurface.complete.then(() => null)")
            page.wait_for_timeout(200)
        return at_ready, totals["bytes"], totals["requests"]


def bundle_shop(work: Path) -> Path:
    app = work / "app"
    shutil.copytree(ROOT / "tests" / "fixtures" / "shop_app", app)
    cli = [sys.executable, "-m", "agentsurface"]
    subprocess.run([*cli, "snapshot"], cwd=app, check=True, capture_output=True)
    subprocess.run([*cli, "bundle", "--out", str(work / "site")], cwd=app, check=True, capture_output=True)
    return work / "site"


def main() -> None:
    with tempfile.TemporaryDirectory() as work:
        site = bundle_shop(Path(work))
        on_disk(site)
        server, base = start_server(ROOT, port=0, quiet=True)
        shop_server, shop = start_server(site, port=0, quiet=True)
        try:
            with sync_playwright() as pw:
                pages = [
                    (
                        "bare loadPyodide",
                        f"{base}/benchmarks/pages/bare.html",
                        "() => window.bareReadyMs",
                        False,
                    ),
                    (
                        "ours, JSON Schema",
                        f"{base}/benchmarks/pages/webmcp.html",
                        "() => window.firstToolMs",
                        True,
                    ),
                    (
                        "ours, type hints",
                        f"{base}/benchmarks/pages/typed.html",
                        "() => window.firstToolMs",
                        True,
                    ),
                    (
                        "bundled shop",
                        f"{shop}/index.html",
                        "ready",
                        True,
                    ),
                ]
                print("transferred on a first (cold) load: to the first tool | after the background loads")
                bare = 0
                for label, url, ready, complete in pages:
                    at_ready, at_end, requests = transferred(pw, url, ready, complete)
                    bare = bare or at_ready
                    print(
                        f"  {label:<18} {_mb(at_ready)} ({at_ready / bare:.2f}x bare)"
                        f" | {_mb(at_end)} ({at_end / bare:.2f}x), {requests} requests"
                    )
        finally:
            for srv in (server, shop_server):
                srv.shutdown()
                srv.server_close()


if __name__ == "__main__":
    main()
