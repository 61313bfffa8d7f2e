"""Why Pyodide pages' renderers died at random in this suite, and that the cause is gone.

Two of Chromium's allocation samplers record a stack by walking frame pointers: its sampling heap
profiler (``HeapProfilerReporting``) and GWP-ASan (``GwpAsanMalloc``, ``GwpAsanPartitionAlloc``),
which guards a sample of allocations to catch memory errors. Pyodide runs Python on WebAssembly
stacks of their own (JS Promise Integration), and the walk runs past the end of such a stack:
SIGSEGV in the renderer, at the same instruction for both. A build without an official channel,
such as Debian's, turns them on at random (the profiler in half its launches, then in one renderer
in ten; GWP-ASan in a few renderers), so a suite that boots a few hundred Pyodide pages lost one
now and then. Here each sampler in turn is on in every renderer with a dense sampling: the devices
console's renderer dies as it boots, and the failure names the sampler. With the features off (what
every launch of ours adds, see ``agentsurface.testing.chromium_flags``) the same configuration
boots every time.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Playwright

from agentsurface.testing.chromium_flags import with_features
from conftest import CHROMIUM_FLAGS, crash_details
from crash_dumps import CrashDump, dumps_since, read_dump

PROFILER_ON = (
    "HeapProfilerReporting:nonstable-probability/1.0/stable-probability/1.0"
    "/renderer-prob-pct/100/renderer-sampling-rate-bytes/10000"
)
# Every process guarded, one allocation in ~100 sampled, room for many live samples: with fewer
# (one in 5) the slots fill at start-up and nothing is sampled while Python runs.
GWP_ASAN_ON = ",".join(
    f"{feature}:ProcessSamplingProbability/1.0/AllocationSamplingMultiplier/100/AllocationSamplingRange/1"
    "/TotalPages/2048/MaxAllocations/1024/MaxMetadata/2048"
    for feature in ("GwpAsanMalloc", "GwpAsanPartitionAlloc")
)
SAMPLERS = {
    "heap profiler": (PROFILER_ON, ("HeapProfilerReporting",), "heap_profiled", "HeapProfilerReporting"),
    "GWP-ASan": (GWP_ASAN_ON, ("GwpAsanMalloc", "GwpAsanPartitionAlloc"), "gwp_asan", "GWP-ASan"),
}
READY = "() => document.body.dataset.ready === 'true'"
BOOTS = 3  # with a sampler off: each must boot
# With a sampler forced on, boots until the first crash: the sampling is random, and on a loaded
# machine the console's renderer survived 3 boots once (6 of 6 crashed on a quiet one).
MAX_BOOTS_TO_CRASH = 10


def boot(context: BrowserContext, url: str) -> bool:
    """Opens the console once; True if its renderer crashed before the page was ready."""
    crashed: list[bool] = []
    page = context.new_page()
    try:
        page.on("crash", lambda _page: crashed.append(True))
        try:
            page.goto(url + "/index.html")
            page.wait_for_function(READY, timeout=60_000)
        except Exception:
            if not crashed:
                raise
        return bool(crashed)
    finally:
        page.close()


class Launched:
    """A Chromium with a profile of its own: its renderers' dumps carry the profile's path, so
    a test counts its own crashes and no other Chromium's (crashpad writes all into one folder)."""

    def __init__(self, context: BrowserContext, profile: Path) -> None:
        self.context = context
        self.profile = profile

    def dumps(self, since: float, want: int = 0, timeout_s: float = 15.0) -> list[CrashDump]:
        """Its dumps since ``since``, once there are ``want`` (crashpad writes them a moment late)."""
        deadline = time.monotonic() + timeout_s
        while True:
            mine = [
                d
                for d in map(read_dump, dumps_since(since))
                if f"--user-data-dir={self.profile}" in d.switches
            ]
            if len(mine) >= want or time.monotonic() >= deadline:
                return mine
            time.sleep(0.2)


@pytest.fixture
def launch(playwright: Playwright, chromium_executable: str) -> Iterator[Callable[[list[str]], Launched]]:
    launched: list[BrowserContext] = []
    profiles: list[Path] = []

    def start(args: list[str]) -> Launched:
        # A short path: crashpad keeps only the first 64 characters of a switch.
        profile = Path(tempfile.mkdtemp(prefix="as-crash-"))
        profiles.append(profile)
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=chromium_executable, args=args
        )
        launched.append(context)
        return Launched(context, profile)

    yield start
    for context in launched:
        context.close()
    for profile in profiles:
        shutil.rmtree(profile, ignore_errors=True)


@pytest.mark.parametrize("sampler", SAMPLERS)
def test_a_sampler_crashes_a_pyodide_renderer_and_the_failure_says_so(
    launch, demo_url: str, sampler: str
) -> None:
    forced, features, flag, named = SAMPLERS[sampler]
    args = with_features(CHROMIUM_FLAGS, enable=["WebMCPTesting", forced])
    assert not any(a.startswith("--disable-features=") and f in a for a in args for f in features)
    chromium = launch(args)
    since = time.time()
    crashes = next((1 for _ in range(MAX_BOOTS_TO_CRASH) if boot(chromium.context, demo_url)), 0)
    assert crashes == 1, f"no renderer crashed in {MAX_BOOTS_TO_CRASH} boots with the {sampler} in every renderer"

    dumps = [d for d in chromium.dumps(since, want=crashes) if d.origin == demo_url]
    assert dumps, "crashpad wrote no dump for the crashed renderer"
    assert all(d.process == "renderer" and d.signal == "SIGSEGV" and getattr(d, flag) for d in dumps)
    # What the suite's guard puts in a crashed test's failure.
    details = crash_details([(since, None)])
    assert "renderer process died of SIGSEGV" in details
    assert "sampled by" in details and named in details
    assert "--disable-features=HeapProfilerReporting,GwpAsanMalloc,GwpAsanPartitionAlloc" in details


@pytest.mark.parametrize("sampler", SAMPLERS)
def test_with_the_sampler_disabled_the_same_configuration_boots_every_time(
    launch, demo_url: str, sampler: str
) -> None:
    forced, features, _flag, _named = SAMPLERS[sampler]
    args = with_features(CHROMIUM_FLAGS, enable=["WebMCPTesting", forced])
    args.append("--disable-features=" + ",".join(features))  # Chromium: disabling wins over enabling
    chromium = launch(args)
    since = time.time()
    crashes = sum(boot(chromium.context, demo_url) for _ in range(BOOTS))
    assert crashes == 0
    assert not chromium.dumps(since, timeout_s=2)
