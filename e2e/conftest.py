"""End-to-end harness: real Chromium (Debian's, via Playwright), pages served locally, offline.

Session setup: build web/dist once (scripts/build_web.py), serve the repository on a free port,
and launch at most one Chromium per variant:

    webmcp   --enable-features=WebMCPTesting  (document.modelContext, Chromium's shape B)
    plain    no WebMCP flag                   (absence, or the polyfill's shape A)

Every page gets a fresh browser context whose requests to anything but the local server are
aborted and recorded; a test that caused one fails. Console errors and page errors are collected.
On failure a screenshot goes to e2e/artifacts/. Timings recorded with ``record_timing`` are printed
at the end of the run.

Set AGENT_SURFACE_E2E_SKIP_BUILD=1 to reuse an existing web/dist.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, Route, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "e2e" / "artifacts"


def _load_serve_module() -> Any:
    """Import scripts/serve.py by path: putting scripts/ on sys.path would shadow packages."""
    spec = importlib.util.spec_from_file_location("_agent_surface_serve", ROOT / "scripts" / "serve.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


start_server = _load_serve_module().start_server

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VARIANTS = {
    "webmcp": ["--enable-features=WebMCPTesting"],
    "plain": [],
}
PAGE_TIMEOUT_MS = 120_000  # a cold Pyodide boot takes ~5 s here; leave room for slow machines

_report_key = pytest.StashKey[dict[str, pytest.TestReport]]()
_timings: list[tuple[str, dict[str, Any]]] = []


# --------------------------------------------------------------------------- hooks


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    e2e_dir = Path(__file__).parent
    for item in items:
        if e2e_dir in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.e2e)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    report = yield
    item.stash.setdefault(_report_key, {})[report.when] = report
    return report


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _timings:
        return
    terminalreporter.section("browser runtime timings (ms, cold: fresh context per page)")
    for label, values in _timings:
        terminalreporter.write_line(f"{label}: {json.dumps(values)}")


# --------------------------------------------------------------------------- session


@pytest.fixture(scope="session")
def web_dist() -> Path:
    """Build web/dist once per session (idempotent and quick when nothing changed)."""
    if os.environ.get("AGENT_SURFACE_E2E_SKIP_BUILD") != "1":
        result = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "build_web.py")],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            pytest.fail(f"scripts/build_web.py failed:\n{result.stdout}{result.stderr}", pytrace=False)
    dist = ROOT / "web" / "dist"
    if not (dist / "pyodide" / "pyodide-lock.json").exists():
        pytest.fail("web/dist is not built (run: python scripts/build_web.py)", pytrace=False)
    return dist


@pytest.fixture(scope="session")
def server_url(web_dist: Path) -> Iterator[str]:
    server, url = start_server(ROOT, port=0)
    yield url
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def demo_url(web_dist: Path) -> Iterator[str]:
    """The devices console's server (its API over a fresh seeded in-memory database, and the
    static files), as ``python scripts/demo.py`` runs it."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from demo.backend import start_demo_server

    server, url = start_demo_server(ROOT, port=0)
    yield url
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def chromium_executable() -> str:
    path = shutil.which("chromium")
    if path is None:
        pytest.fail(
            "Chromium is not installed (no `chromium` on PATH). The e2e suite runs Debian's "
            "Chromium, never a Playwright download: apt-get install -y chromium chromium-driver",
            pytrace=False,
        )
    return path


class Browsers:
    """One Chromium per variant, launched on first use and shared by the whole session."""

    def __init__(self, playwright: Playwright, executable: str) -> None:
        self._playwright = playwright
        self._executable = executable
        self._browsers: dict[str, Browser] = {}

    def get(self, variant: str) -> Browser:
        if variant not in VARIANTS:
            raise ValueError(f"unknown browser variant {variant!r}; known: {sorted(VARIANTS)}")
        if variant not in self._browsers:
            self._browsers[variant] = self._playwright.chromium.launch(
                executable_path=self._executable,
                args=CHROMIUM_FLAGS + VARIANTS[variant],
            )
        return self._browsers[variant]

    def close(self) -> None:
        for browser in self._browsers.values():
            browser.close()


@pytest.fixture(scope="session")
def browsers(chromium_executable: str) -> Iterator[Browsers]:
    with sync_playwright() as playwright:
        pool = Browsers(playwright, chromium_executable)
        yield pool
        pool.close()


# --------------------------------------------------------------------------- pages


@dataclass
class PageRun:
    """A page in its own context, with what it logged and what it tried to fetch."""

    page: Page
    context: BrowserContext
    variant: str
    url: str
    external_requests: list[str] = field(default_factory=list)
    console: list[tuple[str, str]] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)

    @property
    def console_errors(self) -> list[str]:
        return [text for kind, text in self.console if kind == "error"] + self.page_errors

    def wait_ready(self) -> dict[str, Any]:
        """Wait for web/agent-surface.js to finish; return its timings (raises if it failed)."""
        self.page.wait_for_function("() => window.agentSurface")
        timings = self.page.evaluate(
            "() => window.agentSurface.ready.then(() => window.agentSurface.timings)"
        )
        timings["wallMs"] = round((time.perf_counter() - self.started) * 1000)
        return timings


def _is_local(url: str, base: str) -> bool:
    target, local = urlsplit(url), urlsplit(base)
    return (target.scheme, target.netloc) == (local.scheme, local.netloc)


@pytest.fixture
def open_page(
    request: pytest.FixtureRequest, browsers: Browsers, server_url: str
) -> Iterator[Callable[..., PageRun]]:
    """``open_page(path, variant="plain")`` navigates a fresh context to ``server_url + path``."""
    runs: list[PageRun] = []

    def _open(
        path: str,
        variant: str = "plain",
        before_goto: Callable[[PageRun], None] | None = None,
        base: str | None = None,
    ) -> PageRun:
        origin = base or server_url  # e.g. the demo server (API + static files) instead
        context = browsers.get(variant).new_context(viewport={"width": 1400, "height": 900})
        context.set_default_timeout(PAGE_TIMEOUT_MS)
        page = context.new_page()
        run = PageRun(page=page, context=context, variant=variant, url=origin + path)
        runs.append(run)

        def guard(route: Route) -> None:
            if _is_local(route.request.url, origin):
                route.fallback()
            else:
                run.external_requests.append(route.request.url)
                route.abort()

        context.route("**/*", guard)
        page.on("console", lambda message: run.console.append((message.type, message.text)))
        page.on("pageerror", lambda error: run.page_errors.append(str(error)))
        if before_goto is not None:
            before_goto(run)
        run.started = time.perf_counter()
        page.goto(run.url)
        return run

    yield _open

    reports = request.node.stash.get(_report_key, {})
    failed = any(report.failed for report in reports.values())
    for index, run in enumerate(runs):
        if failed:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            name = re.sub(r"[^\w.-]+", "_", request.node.nodeid.split("::", 1)[-1])
            suffix = f"-{index}" if len(runs) > 1 else ""
            try:
                run.page.screenshot(path=str(ARTIFACTS / f"{name}{suffix}.png"), full_page=True)
            except Exception as exc:  # a crashed page must not hide the real failure
                print(f"screenshot failed: {exc}")
        run.context.close()
    external = [url for run in runs for url in run.external_requests]
    if external:
        pytest.fail(f"page requested external URLs (must be offline): {external}", pytrace=False)


@pytest.fixture
def record_timing(request: pytest.FixtureRequest) -> Callable[[dict[str, Any]], None]:
    """Record timings for the end-of-run summary (printed, never asserted)."""

    def _record(values: dict[str, Any], label: str | None = None) -> None:
        _timings.append((label or request.node.name, values))

    return _record
