"""End-to-end harness: real Chromium (Debian's, via Playwright), pages served locally, offline.

Session setup: build web/dist once (scripts/build_web.py), serve the repository on a free port,
and launch at most one Chromium per variant, on pytest-playwright's ``playwright`` fixture:

    webmcp   --enable-features=WebMCPTesting  (document.modelContext, Chromium's shape B)
    plain    no WebMCP flag                   (absence, or the polyfill's shape A)

pytest-playwright's own ``browser``/``context``/``page`` fixtures (and agentsurface's
``webmcp_agent`` on them) work too, the way an application's tests use them: the browser is
launched through ``browser_type_launch_args`` with ``agentsurface.testing.with_webmcp`` (Debian's
Chromium, WebMCPTesting on), watched by the same guards, and each context is offline.

Every page gets a fresh browser context whose requests to anything but the local server are
aborted and recorded; a test that caused one fails. On failure a screenshot goes to e2e/artifacts/.

Page errors fail the test, centrally: every context made from the shared browsers (``open_page``
and any class-scoped page a test module builds itself) is watched, and after each e2e test's
teardown (:func:`pytest_runtest_teardown`) anything recorded since the previous test fails it:
an uncaught page error, a console error (or failed console.assert), a crashed page, or a PyScript
error box (``div.py-error``, which PyScript shows for Python's stderr without necessarily logging
to the console). A test that provokes errors on purpose says which, with
``@pytest.mark.allow_page_errors(regex, ...)``: every recorded error must match one of its
patterns, and every pattern must match at least one error (a stale allowance fails too). Timings recorded with ``record_timing`` are printed
at the end of the run.

Set AGENTSURFACE_E2E_SKIP_BUILD=1 to reuse an existing web/dist.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, Route

from agentsurface.testing import with_webmcp
from agentsurface.testing.chromium_flags import with_features
from crash_dumps import CRASH_DIRS, wait_for_dumps

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "e2e" / "artifacts"


def _load_serve_module() -> Any:
    """Import scripts/serve.py by path: putting scripts/ on sys.path would shadow packages."""
    spec = importlib.util.spec_from_file_location("_agentsurface_serve", ROOT / "scripts" / "serve.py")
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
    # Shared memory through /tmp: a small /dev/shm (containers often mount 64 MB) crashes
    # renderers mid-test ("Target crashed") once a few Pyodide pages are open.
    "--disable-dev-shm-usage",
]
# Every variant has Chromium's heap profiler and GWP-ASan off: they walk past the end of Pyodide's
# WebAssembly stacks and kill a renderer now and then (agentsurface.testing.chromium_flags, test_chromium_crashes.py).
VARIANTS = {
    "webmcp": with_features([], enable=["WebMCPTesting"]),
    "plain": with_features([]),
}
PAGE_TIMEOUT_MS = 120_000  # a cold Pyodide boot takes ~5 s here; leave room for slow machines

_report_key = pytest.StashKey[dict[str, pytest.TestReport]]()
ALLOW_MARKER = "allow_page_errors"
_timings: list[tuple[str, dict[str, Any]]] = []


# --------------------------------------------------------------------------- page-error guard

# Installed in every watched context before any page script runs: reports each PyScript error box
# (PyScript appends ``div.py-error`` to the body) through an exposed binding.
_PY_ERROR_BOX_OBSERVER = """(() => {
  const report = (node) => {
    if (node.nodeType === 1 && node.classList.contains("py-error")) {
      window.__agentSurfaceE2EPyErrorBox(node.textContent || "");
    }
  };
  new MutationObserver((records) => {
    for (const record of records) record.addedNodes.forEach(report);
  }).observe(document, {childList: true, subtree: true});
})();"""


@dataclass(frozen=True)
class PageProblem:
    kind: str  # "pageerror" | "console.error" | "console.assert" | "pyscript-error-box" | "crash"
    text: str
    url: str

    def __str__(self) -> str:
        return f"[{self.kind}] {self.text} (at {self.url})"


class PageErrorGuard:
    """Records every problem of every watched page until the running test drains them."""

    def __init__(self) -> None:
        self.problems: list[PageProblem] = []
        self._pages: list[Page] = []
        # Crashes seen since the last drain: when, and the log of the Chromium they happened in.
        self._crashes: list[tuple[float, Path | None]] = []

    def watch_context(self, context: BrowserContext, log: Path | None = None) -> None:
        context.expose_binding(
            "__agentSurfaceE2EPyErrorBox",
            lambda source, text: self._record("pyscript-error-box", str(text), source["page"].url),
        )
        context.add_init_script(_PY_ERROR_BOX_OBSERVER)
        context.on("page", lambda page: self.watch_page(page, log))
        for page in context.pages:
            self.watch_page(page, log)

    def watch_page(self, page: Page, log: Path | None = None) -> None:
        self._pages.append(page)
        page.on("pageerror", lambda error: self._record("pageerror", str(error), page.url))

        def on_crash(crashed: Page) -> None:
            self._crashes.append((time.time(), log))
            self._record("crash", "the page crashed", crashed.url)

        page.on("crash", on_crash)

        def on_console(message: Any) -> None:
            if message.type in ("error", "assert"):
                self._record(f"console.{message.type}", message.text, page.url)

        page.on("console", on_console)
        page.on("close", lambda closed: self._pages.remove(closed) if closed in self._pages else None)

    def _record(self, kind: str, text: str, url: str) -> None:
        self.problems.append(PageProblem(kind, text, url))

    def drain(self) -> list[PageProblem]:
        """Everything recorded so far. A round trip to each open page first, so that events the
        browser already sent (console messages, error boxes) have been dispatched to us."""
        for page in list(self._pages):
            # Bounded: a page that is busy or hung must not hang the teardown; a closed, crashed
            # or busy page has nothing more to pump.
            with contextlib.suppress(Exception):
                page.wait_for_function("() => true", timeout=5_000)
        problems, self.problems = self.problems, []
        crashes, self._crashes = self._crashes, []
        if crashes:
            problems.append(PageProblem("crash", crash_details(crashes), "the crashed pages' Chromium"))
        return problems


def crash_details(crashes: list[tuple[float, Path | None]]) -> str:
    """Why the pages crashed: crashpad's dumps (process, signal, address, switches) and the end of
    each Chromium's log."""
    dumps = wait_for_dumps(min(when for when, _ in crashes) - 2)
    lines = [dump.describe() for dump in dumps] or [f"no crash dump in {', '.join(map(str, CRASH_DIRS))}"]
    for log in sorted({log for _, log in crashes if log is not None}):
        lines.append(f"the end of {log.name}:\n{log_tail(log)}")
    return "\n    ".join(lines)


def log_tail(path: Path, lines: int = 15) -> str:
    """The last lines of a Chromium log, without its D-Bus complaints (no bus in a container)."""
    with contextlib.suppress(OSError):
        text = [line for line in path.read_text(errors="replace").splitlines() if "dbus" not in line.lower()]
        return "\n".join("      " + line for line in text[-lines:]) or "      (nothing but D-Bus noise)"
    return "      (unreadable)"


_guard = PageErrorGuard()


def unexpected_problems(problems: list[PageProblem], allowed: tuple[str, ...], ran: bool) -> list[str]:
    """Why these problems fail a test allowing ``allowed`` (regexes searched in the text); an
    allowance nothing matched is stale if the test body ``ran``."""
    patterns = [re.compile(pattern) for pattern in allowed]
    failures = [
        f"unexpected {problem}"
        for problem in problems
        if not any(pattern.search(problem.text) for pattern in patterns)
    ]
    if ran:
        failures += [
            f"allowed error never happened (stale allowance): {pattern.pattern!r}"
            for pattern in patterns
            if not any(pattern.search(problem.text) for problem in problems)
        ]
    return failures


class GuardedBrowser:
    """A Browser whose every new context (and page) is watched by the page-error guard."""

    def __init__(self, browser: Browser, log: Path | None = None) -> None:
        self._browser = browser
        self.log = log

    def new_context(self, **options: Any) -> BrowserContext:
        context = self._browser.new_context(**options)
        _guard.watch_context(context, self.log)
        return context

    def new_page(self, **options: Any) -> Page:
        return self.new_context(**options).new_page()

    def close(self) -> None:
        self._browser.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._browser, name)


# --------------------------------------------------------------------------- hooks


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{ALLOW_MARKER}(*patterns): regexes for the page/console errors this e2e test provokes on "
        "purpose; each error must match one, and each must match an error",
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """After all of the test's teardown (its pages closed, class pages maybe too): fail it on any
    page problem recorded since the previous test, except the ones it explicitly allows."""
    try:
        return (yield)
    finally:
        marker = item.get_closest_marker(ALLOW_MARKER)
        allowed = tuple(marker.args) if marker is not None else ()
        ran = "call" in item.stash.get(_report_key, {})  # not skipped, setup succeeded
        failures = unexpected_problems(_guard.drain(), allowed, ran)
        if failures:
            pytest.fail("page errors during this test:\n  " + "\n  ".join(failures), pytrace=False)


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
    if os.environ.get("AGENTSURFACE_E2E_SKIP_BUILD") != "1":
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
    from demo.server.backend import start_demo_server

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
        self._browsers: dict[str, GuardedBrowser] = {}
        self._log_dir = tempfile.TemporaryDirectory(prefix="as-e2e-chromium-logs-")
        self._logs = Path(self._log_dir.name)

    def get(self, variant: str) -> GuardedBrowser:
        if variant not in VARIANTS:
            raise ValueError(f"unknown browser variant {variant!r}; known: {sorted(VARIANTS)}")
        if variant not in self._browsers:
            log = self._logs / f"chromium-{variant}.log"
            self._browsers[variant] = GuardedBrowser(
                self._playwright.chromium.launch(
                    executable_path=self._executable,
                    args=[*CHROMIUM_FLAGS, *VARIANTS[variant], *log_flags(log)],
                ),
                log,
            )
        return self._browsers[variant]

    def close(self) -> None:
        for browser in self._browsers.values():
            browser.close()
        self._log_dir.cleanup()


def log_flags(path: Path) -> list[str]:
    """Chromium's own log into ``path`` (a crash's failure quotes its end)."""
    return ["--enable-logging", f"--log-file={path}"]


@pytest.fixture(scope="session")
def browsers(playwright: Playwright, chromium_executable: str) -> Iterator[Browsers]:
    """On pytest-playwright's session-wide ``playwright`` (one Playwright per process)."""
    pool = Browsers(playwright, chromium_executable)
    yield pool
    pool.close()


# --------------------------------------------------------------------------- pytest-playwright's page


@pytest.fixture(scope="session")
def browser_type_launch_args(
    browser_type_launch_args: dict[str, Any], chromium_executable: str
) -> dict[str, Any]:
    """pytest-playwright's launch options, as an application's conftest sets them up."""
    base = {**browser_type_launch_args, "args": CHROMIUM_FLAGS}
    return with_webmcp(base, executable_path=chromium_executable)


@pytest.fixture(scope="session")
def browser(launch_browser: Callable[..., Browser]) -> Iterator[GuardedBrowser]:
    """pytest-playwright's browser (launched only by tests that use its ``page``), guarded."""
    launched = GuardedBrowser(launch_browser())
    yield launched
    launched.close()


@pytest.fixture
def context(new_context: Callable[..., BrowserContext], server_url: str) -> Iterator[BrowserContext]:
    """pytest-playwright's context, offline like ``open_page``'s: a request to anything but the
    local server is aborted and fails the test."""
    made = new_context(viewport={"width": 1400, "height": 900})
    made.set_default_timeout(PAGE_TIMEOUT_MS)
    external: list[str] = []

    def guard(route: Route) -> None:
        if _is_local(route.request.url, server_url):
            route.fallback()
        else:
            external.append(route.request.url)
            route.abort()

    made.route("**/*", guard)
    yield made
    if external:
        pytest.fail(f"page requested external URLs (must be offline): {external}", pytrace=False)


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
        """Wait for web/agentsurface.js to finish; return its timings (raises if it failed)."""
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
