"""Why Pyodide pages' renderers died at random in this suite, and that the cause is gone.

Chromium's sampling heap profiler (``HeapProfilerReporting``) records a stack for some allocations
by walking frame pointers; Pyodide runs Python on WebAssembly stacks of their own (JS Promise
Integration), and the walk runs past the end of such a stack: SIGSEGV in the renderer. A build
without an official channel, such as Debian's, turns the profiler on in half its launches, then in
one renderer in ten, with one sample per 10 MB allocated on average; a suite that boots a few
hundred Pyodide pages lost one now and then. Here the profiler is turned on in every renderer with
a sample every 10 KB: the devices console's renderer dies as it boots, and the failure names the
profiler. With ``--disable-features=HeapProfilerReporting`` (what every launch of ours adds, see
``agentsurface.testing.chromium_flags``) the same configuration boots every time.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Playwright

from agentsurface.testing.chromium_flags import with_features
from conftest import CHROMIUM_FLAGS, crash_details
from crash_dumps import dumps_since, wait_for_dumps

PROFILER_ON = (
    "HeapProfilerReporting:nonstable-probability/1.0/stable-probability/1.0"
    "/renderer-prob-pct/100/renderer-sampling-rate-bytes/10000"
)
READY = "() => document.body.dataset.ready === 'true'"
BOOTS = 3


def boot(browser: Browser, url: str) -> bool:
    """Opens the console once; True if its renderer crashed before the page was ready."""
    context = browser.new_context()
    crashed: list[bool] = []
    try:
        page = context.new_page()
        page.on("crash", lambda _page: crashed.append(True))
        try:
            page.goto(url + "/index.html")
            page.wait_for_function(READY, timeout=60_000)
        except Exception:
            if not crashed:
                raise
        return bool(crashed)
    finally:
        context.close()


@pytest.fixture
def launch(playwright: Playwright, chromium_executable: str) -> Iterator[object]:
    launched: list[Browser] = []

    def start(args: list[str]) -> Browser:
        browser = playwright.chromium.launch(executable_path=chromium_executable, args=args)
        launched.append(browser)
        return browser

    yield start
    for browser in launched:
        browser.close()


def test_the_heap_profiler_crashes_a_pyodide_renderer_and_the_failure_says_so(launch, demo_url: str) -> None:
    args = with_features(CHROMIUM_FLAGS, enable=["WebMCPTesting", PROFILER_ON])
    assert not any(a.startswith("--disable-features=") and "HeapProfilerReporting" in a for a in args)
    browser = launch(args)
    since = time.time()
    crashes = sum(boot(browser, demo_url) for _ in range(BOOTS))
    assert crashes >= 1, f"no renderer crashed in {BOOTS} boots with the heap profiler in every renderer"

    dumps = [d for d in wait_for_dumps(since) if d.origin == demo_url]
    assert dumps, "crashpad wrote no dump for the crashed renderer"
    assert all(d.process == "renderer" and d.signal == "SIGSEGV" and d.heap_profiled for d in dumps)
    # What the suite's guard puts in a crashed test's failure.
    details = crash_details([(since, None)])
    assert "renderer process died of SIGSEGV" in details
    assert "heap profiler sampled this process" in details
    assert "--disable-features=HeapProfilerReporting" in details


def test_with_the_profiler_disabled_the_same_configuration_boots_every_time(launch, demo_url: str) -> None:
    args = with_features(CHROMIUM_FLAGS, enable=["WebMCPTesting", PROFILER_ON])
    args.append("--disable-features=HeapProfilerReporting")  # Chromium: disabling wins over enabling
    browser = launch(args)
    before = set(dumps_since(0))
    crashes = sum(boot(browser, demo_url) for _ in range(BOOTS))
    assert crashes == 0
    assert not set(dumps_since(0)) - before
