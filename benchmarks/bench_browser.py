"""Browser figures for the WebMCP adapter, measured in one headless Chromium 156 run.

    .venv/bin/python benchmarks/bench_browser.py [--calls 300] [--cycles 1000]

Prints, from one cold page load: navigation → first tool visible in getTools(), next to the bare
Pyodide boot on the same load; the executeTool round trip (median, p95) of a no-op action through
our stack next to a plain JS tool registered directly on the same page; and live JS proxies after
mount/unmount cycles. Needs web/dist (scripts/build_web.py) and Debian's chromium.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.serve import start_server  # noqa: E402

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-features=WebMCPTesting",
]

ROUND_TRIPS = """async ([name, calls]) => {
  const tool = (await document.modelContext.getTools()).find((t) => t.name === name);
  const times = [];
  for (let i = 0; i < calls; i++) {
    const start = performance.now();
    await document.modelContext.executeTool(tool, {ids: ["a"]});
    times.push(performance.now() - start);
  }
  return times;
}"""


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--cycles", type=int, default=1000)
    args = parser.parse_args()
    server, url = start_server(ROOT, port=0)
    try:
        with tempfile.TemporaryDirectory() as profile, sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                profile, executable_path=shutil.which("chromium"), args=FLAGS, headless=True
            )
            page = context.new_page()
            page.goto(f"{url}/benchmarks/pages/webmcp.html")
            page.wait_for_function("() => window.benchReady === true", timeout=120_000)
            timings = page.evaluate("() => window.agentSurface.timings")
            first_tool = page.evaluate("() => window.firstToolMs")
            visible = page.evaluate("async () => (await document.modelContext.getTools()).map((t) => t.name)")
            assert "view_bench__widget__poke" in visible and "js_noop" in visible, visible
            ours = page.evaluate(ROUND_TRIPS, ["view_bench__widget__poke", args.calls])
            plain = page.evaluate(ROUND_TRIPS, ["js_noop", args.calls])
            before = page.evaluate("() => window.proxyCount()")
            churn = page.evaluate("(n) => window.churn(n)", args.cycles)
            context.close()
    finally:
        server.shutdown()
        server.server_close()

    print("agent-surface WebMCP adapter, headless Chromium 156, cold profile, one page load")
    print(f"  bare Pyodide boot (loadPyodide)           {timings['bootMs']:>8.0f} ms")
    print(f"  packages (agent-surface + deps)           {timings['packagesMs']:>8.0f} ms")
    print(
        f"  navigation -> first tool in getTools()    {first_tool:>8.0f} ms"
        f"   (boot share {timings['bootMs'] / first_tool:.0%})"
    )
    print(f"executeTool round trip, {args.calls} calls each (in-page, after warm-up of none)")
    for label, times in (("no-op action through our stack", ours), ("plain JS tool (baseline)", plain)):
        print(f"  {label:<34} p50 {statistics.median(times):6.2f} ms   p95 {pct(times, 0.95):6.2f} ms")
    print(
        f"  ratio p50 ours/plain                      {statistics.median(ours) / statistics.median(plain):6.2f}"
    )
    print(
        f"live JS proxies: {before} before, {churn['liveProxies']} after {args.cycles} mount/unmount "
        f"cycles ({churn['tools']} tools exposed)"
    )


if __name__ == "__main__":
    main()
