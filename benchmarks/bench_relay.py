"""Figures for ``agentsurface mcp --relay``, printed (never asserted).

    .venv/bin/python benchmarks/bench_relay.py [--calls 200] [--loads 3]

- load to listed: from a tab's navigation (a fresh browser context: cold page, already paired,
  so the challenge-response runs) to the MCP client's first tools/list that has the page's
  tools; beside it the page's own time to ready (the loader's ``readyMs``).
- calls: one read tool through the relay (MCP SDK client over stdio -> relay -> WebSocket -> the
  tab's adapter -> registry) next to the same call in the page (the adapter's execute, timed with
  the page's clock): p50 and p95.

Uses e2e/pages/relay.html on a Chromium without WebMCP. Needs web/dist (scripts/build_web.py),
Debian's chromium and the [mcp] extra.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import shutil
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from playwright.async_api import Browser, async_playwright

from agentsurface.adapters.relay_protocol import new_secret
from agentsurface.testing.chromium_flags import with_features

ROOT = Path(__file__).resolve().parent.parent
READ = "view_notes__board__listNotes"
FLAGS = with_features(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"])


def _serve_module() -> Any:
    spec = importlib.util.spec_from_file_location("_serve", ROOT / "scripts" / "serve.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def row(label: str, values: list[float]) -> None:
    print(f"  {label:<52} p50 {statistics.median(values):8.2f} ms   p95 {pct(values, 0.95):8.2f} ms   (n={len(values)})")


async def open_paired_tab(browser: Browser, url: str, key: str, secret: str) -> Any:
    context = await browser.new_context()
    await context.add_init_script(f"localStorage.setItem({json.dumps(key)}, {json.dumps(secret)})")
    page = await context.new_page()
    await page.goto(url)
    return context, page


async def main(calls: int, loads: int) -> None:
    server, base = _serve_module().start_server(ROOT, port=0)
    origin = base.rstrip("/")
    port, secret = free_port(), new_secret()
    folder = Path(tempfile.mkdtemp(prefix="bench-relay-"))
    pairings = folder / "pairings.json"
    pairings.write_text(json.dumps({"origins": {origin: secret}}))  # paired before, as a person would have
    pairings.chmod(0o600)
    url = f"{origin}/e2e/pages/relay.html?relay={port}&app=notes"
    key = f"agentsurface-relay-secret:127.0.0.1:{port}"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agentsurface", "mcp", "--relay", "--relay-port", str(port), "--relay-pairings", str(pairings)],
    )
    chromium = shutil.which("chromium")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium, args=FLAGS)
        with open(folder / "relay.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as session:
                await session.initialize()
                print(f"agentsurface mcp --relay on a Chromium without WebMCP ({loads} cold loads, {calls} calls)")
                listed, ready, welcomed = [], [], []
                for _ in range(loads):
                    started = time.perf_counter()
                    context, page = await open_paired_tab(browser, url, key, secret)
                    while READ not in {t.name for t in (await session.list_tools()).tools}:
                        await asyncio.sleep(0.01)
                    listed.append((time.perf_counter() - started) * 1000)
                    ready.append(await page.evaluate("() => window.agentSurface.ready.then(() => window.agentSurface.timings.readyMs)"))
                    welcomed.append(json.loads(await page.evaluate("() => window.relayPage.state()"))["welcomedMs"])
                    await context.close()
                    while (await session.list_tools()).tools:
                        await asyncio.sleep(0.01)
                row("tab navigation -> tools listed in the MCP client", listed)
                row("tab navigation -> page ready (its own clock)", ready)
                row("tab navigation -> welcomed by the relay (its own clock)", welcomed)
                context, page = await open_paired_tab(browser, url, key, secret)
                while READ not in {t.name for t in (await session.list_tools()).tools}:
                    await asyncio.sleep(0.01)
                for _ in range(20):  # warm both paths
                    await session.call_tool(READ, {})
                await page.evaluate("([n, c]) => window.relayPage.timeCalls(n, c)", [READ, 20])
                through: list[float] = []
                for _ in range(calls):
                    begin = time.perf_counter()
                    result = await session.call_tool(READ, {})
                    through.append((time.perf_counter() - begin) * 1000)
                    assert not result.isError, result
                in_page = json.loads(await page.evaluate("([n, c]) => window.relayPage.timeCalls(n, c)", [READ, calls]))
                row("call through the relay (MCP client -> tab -> MCP client)", through)
                row("the same call in the page (adapter execute, mean of 10)", in_page)
                print(f"  relay overhead per call (p50): {statistics.median(through) - statistics.median(in_page):.2f} ms")
                await context.close()
        await browser.close()
    server.shutdown()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--loads", type=int, default=3)
    options = parser.parse_args()
    asyncio.run(main(options.calls, options.loads))
