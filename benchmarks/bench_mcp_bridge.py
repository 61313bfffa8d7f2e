"""Figures for ``agentsurface mcp`` on the devices console, printed (never asserted).

    .venv/bin/python benchmarks/bench_mcp_bridge.py [--calls 200] [--changes 20]

- startup: from starting ``agentsurface mcp URL --headless`` (it launches its own Chromium) to
  the first tools/list answer, and to the first answer that lists the page's tools (the page
  has booted Pyodide and registered them).
- calls: one read tool (``view_devices__filters__active``) through the bridge (MCP SDK client
  over stdio -> bridge -> executeTool), next to the same executeTool in the page (timed with the
  page's clock, and as a Playwright evaluate round trip from Python); p50 and p95. Twice: with
  the Chromium the bridge starts itself (``agentsurface mcp URL``: its calls go over the
  browser's debugging pipe), and attached to a running one (``--cdp``: over a WebSocket to its
  DevTools endpoint). Then where a call's time goes: the MCP hop alone (a ping), the CDP hop
  alone (an empty Playwright evaluate), and one call started from outside timed by the page's
  clock (its getTools, its executeTool), which pays what back-to-back calls in the page do not
  (the previous call's rendering, a cold path).
- list_changed: from a click that opens the device drawer (its component mounts three tools) or
  closes it, to the client receiving notifications/tools/list_changed.

Needs web/dist (scripts/build_web.py), Debian's chromium and the [mcp] extra.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from playwright.async_api import async_playwright

from agentsurface.testing.chromium_flags import with_features

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from demo.server.backend import start_demo_server  # noqa: E402

READY = "view_devices__table__selectVisible"
READ = "view_devices__filters__active"
FLAGS = with_features(
    ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    enable=["WebMCPTesting"],
)
IN_PAGE = """async ([name, n]) => {
  const tool = (await document.modelContext.getTools()).find((t) => t.name === name);
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await document.modelContext.executeTool(tool, {});
    times.push(performance.now() - t0);
  }
  return times;
}"""
ONE_TIMED = """async (name) => {
  const t0 = performance.now();
  const tool = (await document.modelContext.getTools()).find((t) => t.name === name);
  const t1 = performance.now();
  await document.modelContext.executeTool(tool, {});
  return [t1 - t0, performance.now() - t1];
}"""
ONE_IN_PAGE = """async (name) => {
  const tool = (await document.modelContext.getTools()).find((t) => t.name === name);
  return await document.modelContext.executeTool(tool, {});
}"""


def bridge(*args: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    # This environment, not the SDK's short default one (PYTHONPATH reaches the bridge: a run of
    # another checkout's code beside this one).
    return StdioServerParameters(
        command=sys.executable, args=["-m", "agentsurface", "mcp", *args], env=env or dict(os.environ)
    )


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def row(label: str, values: list[float]) -> None:
    print(f"  {label:<48} p50 {statistics.median(values):8.2f} ms   p95 {pct(values, 0.95):8.2f} ms   (n={len(values)})")


async def startup(url: str, chromium: str) -> None:
    started = time.perf_counter()
    first: float | None = None
    with open(Path(tempfile.gettempdir()) / "bench-mcp-bridge.log", "w") as errlog:
        params = bridge(url, "--headless", "--browser", chromium)
        async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            while True:
                tools = (await session.list_tools()).tools
                first = first or time.perf_counter() - started
                if any(t.name == READY for t in tools):
                    break
                await asyncio.sleep(0.05)
            ready = time.perf_counter() - started
    print("startup (own Chromium, cold profile, headless)")
    print(f"  start -> first tools/list answer               {first * 1000:8.0f} ms")
    print(f"  start -> first answer with the page's tools    {ready * 1000:8.0f} ms")


async def calls_own_chromium(url: str, chromium: str, n: int, changes: int) -> None:
    """The bridge starts its Chromium (in a temporary folder of ours, where the benchmark finds
    its debugging port to time the page from the inside)."""
    with tempfile.TemporaryDirectory() as folder:
        params = bridge(url, "--headless", "--browser", chromium, env={**os.environ, "TMPDIR": folder})

        async def bridges_chromium() -> str:
            while not (ports := list(Path(folder).glob("agentsurface-mcp-*/DevToolsActivePort"))):
                await asyncio.sleep(0.05)
            while not ports[0].read_text().strip():
                await asyncio.sleep(0.05)
            return f"http://127.0.0.1:{ports[0].read_text().split()[0]}"

        await _measure(url, params, bridges_chromium, "its own Chromium, over the debugging pipe", n, changes)


async def calls_and_changes(url: str, chromium: str, n: int, changes: int) -> None:
    with tempfile.TemporaryDirectory() as profile:
        process = subprocess.Popen(
            [chromium, *FLAGS, "--remote-debugging-port=0",
             f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            port_file = Path(profile) / "DevToolsActivePort"
            while not port_file.exists() or not port_file.read_text().strip():
                await asyncio.sleep(0.05)
            cdp = f"http://127.0.0.1:{port_file.read_text().split()[0]}"

            async def given() -> str:
                return cdp

            await _measure(url, bridge(url, "--cdp", cdp), given, "--cdp, over a DevTools WebSocket", n, changes)
        finally:
            process.terminate()
            process.wait()


async def _measure(
    url: str, params: StdioServerParameters, chromium_of: Callable[[], Awaitable[str]], how: str, n: int, changes: int
) -> None:
    notes: list[float] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification) and message.root.method == "notifications/tools/list_changed":
            notes.append(time.perf_counter())

    with open(Path(tempfile.gettempdir()) / "bench-mcp-bridge.log", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(
            r, w, message_handler=on_message
        ) as session, async_playwright() as pw:
            await session.initialize()
            while not any(t.name == READY for t in (await session.list_tools()).tools):
                await asyncio.sleep(0.05)
            browser = await pw.chromium.connect_over_cdp(await chromium_of())
            page = next(p for p in browser.contexts[0].pages if p.url == url)
            for _ in range(20):  # warm both paths
                await session.call_tool(READ, {})
            await page.evaluate(IN_PAGE, [READ, 20])
            through: list[float] = []
            for _ in range(n):
                t0 = time.perf_counter()
                result = await session.call_tool(READ, {})
                through.append((time.perf_counter() - t0) * 1000)
                assert not result.isError
            page_clock: list[float] = await page.evaluate(IN_PAGE, [READ, n])
            round_trip: list[float] = []
            for _ in range(n):
                t0 = time.perf_counter()
                await page.evaluate(ONE_IN_PAGE, READ)
                round_trip.append((time.perf_counter() - t0) * 1000)
            split = [await page.evaluate(ONE_TIMED, READ) for _ in range(n)]
            # Where a call's time goes: the MCP hop alone (a ping answered by the bridge) and the
            # CDP hop alone (an evaluate that does nothing).
            ping: list[float] = []
            empty: list[float] = []
            for _ in range(n):
                t0 = time.perf_counter()
                await session.send_ping()
                ping.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                await page.evaluate("() => 0")
                empty.append((time.perf_counter() - t0) * 1000)
            print(f"calls ({READ}; the bridge on {how})")
            row("in the page: executeTool (page clock)", page_clock)
            row("from Python: page.evaluate(executeTool)", round_trip)
            row("through the bridge: MCP tools/call over stdio", through)
            row("  the MCP hop alone: ping over stdio", ping)
            row("  the CDP hop alone: page.evaluate(() => 0)", empty)
            row("  one call from outside: getTools (page clock)", [a for a, _ in split])
            row("  one call from outside: executeTool (page clock)", [b for _, b in split])
            print(f"  bridge p50 / in-page p50: {statistics.median(through) / statistics.median(page_clock):.1f}x")
            print(f"  bridge p50 - in-page p50: {statistics.median(through) - statistics.median(page_clock):+.2f} ms")

            opened: list[float] = []
            closed: list[float] = []
            for _ in range(changes):
                for selector, into in (("#rows tr .name", opened), ("#drawer [data-action=close]", closed)):
                    seen = len(notes)
                    t0 = time.perf_counter()
                    await page.click(selector)
                    while len(notes) == seen:
                        await asyncio.sleep(0.001)
                    into.append((notes[seen] - t0) * 1000)
                    await asyncio.sleep(0.2)  # let the change settle before the next one
            print("tools/list_changed after a DOM change (the person's click)")
            row("drawer opens (3 tools mount)", opened)
            row("drawer closes (3 tools unmount)", closed)
            await browser.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--changes", type=int, default=20)
    args = parser.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("no chromium on PATH")
    server, base = start_demo_server(ROOT, port=0)
    try:
        url = base + "/index.html"
        await startup(url, chromium)
        await calls_own_chromium(url, chromium, args.calls, args.changes)
        await calls_and_changes(url, chromium, args.calls, args.changes)
    finally:
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    asyncio.run(main())
