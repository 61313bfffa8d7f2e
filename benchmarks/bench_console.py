"""The devices console's per-call cost in headless Chromium 156 (WebMCPTesting), printed as figures.

    .venv/bin/python benchmarks/bench_console.py [--calls 300] [--burst 400] [--root DIR]

- read: the executeTool round trip of a read-only view tool (the table's selection, and the
  visible rows) on the console page, sequential calls after a warm-up: p50 / p95.
- burst: ``--burst`` concurrent view-changing calls (setFilters, cycling through statuses and
  cities) started at once; the time until every call has resolved and the page has painted.

The demo is served as the e2e ``demo_url`` fixture serves it (its backend over a fresh seeded
in-memory database, and the repository's static files; ``--root`` serves another checkout).
Needs web/dist (scripts/build_web.py) and Debian's chromium. Never asserts a timing.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from agentsurface.testing.chromium_flags import with_features

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FLAGS = with_features([
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-features=WebMCPTesting",
])
BOOT_TIMEOUT_MS = 180_000

READ_CALLS = """async ([name, input, calls]) => {
  const tool = (await document.modelContext.getTools()).find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  for (let i = 0; i < 30; i++) await document.modelContext.executeTool(tool, input);  // warm-up
  const single = [];
  for (let i = 0; i < calls; i++) {
    const start = performance.now();
    await document.modelContext.executeTool(tool, input);
    single.push(performance.now() - start);
  }
  return single;
}"""

BURST = """async (count) => {
  const tools = await document.modelContext.getTools();
  const tool = tools.find((t) => t.name === "view_devices__filters__setFilters");
  const inputs = [{status: "offline"}, {status: "online", city: "Milan"}, {}, {status: "disabled"},
                  {city: "Turin"}, {text: "dev-00"}];
  const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));
  const start = performance.now();
  const results = await Promise.all(
    Array.from({length: count}, (_, i) => document.modelContext.executeTool(tool, inputs[i % inputs.length])));
  const settled = performance.now() - start;
  await frame(); await frame();  // the batched render has painted
  const painted = performance.now() - start;
  const failed = results.filter((text) => JSON.parse(text).isError === true).length;
  return {settled, painted, failed};
}"""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(root: Path, calls: int, burst: int) -> dict[str, Any]:
    from demo.server.backend import start_demo_server

    server, url = start_demo_server(root, port=0)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=FLAGS)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(url + "/index.html")
            page.wait_for_function("() => document.body.dataset.ready === 'true'", timeout=BOOT_TIMEOUT_MS)
            page.wait_for_function(  # the components register once their elements are in the page
                "async () => (await document.modelContext.getTools()).some((t) => t.name === 'view_devices__table__selection')"
            )
            figures: dict[str, Any] = {}
            for name in ("view_devices__table__selection", "view_devices__table__visibleRows"):
                figures[name] = page.evaluate(READ_CALLS, [name, {}, calls])
            figures["burst"] = page.evaluate(BURST, burst)
            browser.close()
            return figures
    finally:
        server.shutdown()
        server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--burst", type=int, default=400)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to serve (default: this one)")
    args = parser.parse_args()
    if shutil.which("chromium") is None:
        sys.exit("needs Debian's chromium on PATH")
    figures = run(args.root, args.calls, args.burst)
    print(f"devices console, headless Chromium 156, document.modelContext ({args.calls} calls each)")
    for name in ("view_devices__table__selection", "view_devices__table__visibleRows"):
        single = figures[name]
        p50, p95 = statistics.median(single), percentile(single, 0.95)
        print(f"  read round trip {name:<36} p50 {p50:7.2f} ms   p95 {p95:7.2f} ms")
    burst = figures["burst"]
    print(
        f"  burst of {args.burst} concurrent setFilters calls: all settled {burst['settled'] / 1000:6.2f} s,"
        f" painted {burst['painted'] / 1000:6.2f} s, not ok: {burst['failed']}"
    )


if __name__ == "__main__":
    main()
