"""Reproduces a Chromium 156 browser-process crash (WebMCPTesting): ``getTools()`` reaching the
browser from a document whose page goes into the back/forward cache on a cross-site navigation
makes the browser CHECK-fail (SIGILL, always the same address, in the code that gathers the page's
tools for blink.mojom.ModelContextHost). Chromium's stderr says nothing; the dump lands in
crashpad's "Crash Reports/pending".

    python e2e/chromium_repro/repro.py --rounds 60 --watch pagehide --no-wait --stagger 20
        getTools() in a pagehide listener: crashes on the first navigation
    ... --watch timer          getTools() every 5 ms in every document: crashes within a few rounds
    ... --watch burst --dwell 2.5   getTools() only while the page is settled: no crash
    ... --arg=--disable-back-forward-cache   no crash with any of the above
    ... --same-origin          no crash
    python e2e/chromium_repro/repro.py --console --rounds 8 --poll 2 --link
        the devices console (Pyodide) navigated 127.0.0.1 -> localhost while agentsurface's own
        PageLink.list_tools() is polled (what an MCP client's tools/list does): crashes in round 1;
        with --disable-back-forward-cache, or without the polling, no crash in 12 rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import http.server
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import async_playwright

PAGE = """<!doctype html><meta charset=utf-8><title>tools</title><body>
<script>
const controller = new AbortController();
const unregisterOnPagehide = new URLSearchParams(location.search).has("unregister");
(async () => {
  for (let i = 0; i < %(tools)d; i++) {
    await document.modelContext.registerTool({
      name: "tool_" + i, description: "tool " + i,
      inputSchema: {type: "object", properties: {n: {type: "number"}}},
      execute: async () => "ok"}, {signal: controller.signal});
    if (%(stagger)d) await new Promise((r) => setTimeout(r, %(stagger)d));
  }
  document.body.dataset.ready = "true";
})();
if (unregisterOnPagehide) addEventListener("pagehide", () => controller.abort());
</script>"""

LIST = "async () => (await document.modelContext.getTools()).length"
WATCHES = {
    "list": """(() => { const m = document.modelContext;
  if (m) m.addEventListener("toolchange", () => m.getTools().catch(() => {})); })()""",
    "listen": """(() => { const m = document.modelContext;
  if (m) m.addEventListener("toolchange", () => console.debug("toolchange")); })()""",
    "timer": """(() => { const m = document.modelContext;
  if (m) setInterval(() => m.getTools().catch(() => {}), 5); })()""",
    "active": """(() => { const m = document.modelContext;
  if (!m) return; const t = setInterval(() => m.getTools().catch(() => {}), 5);
  addEventListener("pagehide", () => clearInterval(t)); })()""",
    "pagehide": """(() => { const m = document.modelContext;
  if (m) addEventListener("pagehide", () => { for (let i = 0; i < 5; i++) m.getTools().catch(() => {}); }); })()""",
    "late": """(() => { const m = document.modelContext; if (!m) return; let t;
  addEventListener("load", () => setTimeout(() => { t = setInterval(() => m.getTools().catch(() => {}), 5); }, 1500));
  addEventListener("pagehide", () => clearInterval(t)); })()""",
    "burst": """(() => { const m = document.modelContext; if (!m) return;
  addEventListener("load", () => setTimeout(() => {
    const t = setInterval(() => m.getTools().catch(() => {}), 5); setTimeout(() => clearInterval(t), 500); }, 1000)); })()""",
    "start": """(() => { const m = document.modelContext; if (m) m.getTools().catch(() => {}); })()""",
}


def serve(tools: int, stagger: int) -> tuple[http.server.ThreadingHTTPServer, int]:
    body = (PAGE % {"tools": tools, "stagger": stagger}).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


def chromium(profile: Path, log: Path, extra: list[str]) -> tuple[subprocess.Popen[bytes], str]:
    exe = shutil.which("chromium")
    assert exe
    process = subprocess.Popen(
        [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
         "--enable-features=WebMCPTesting", "--remote-debugging-port=0", f"--user-data-dir={profile}",
         *extra, "about:blank"],
        stdout=subprocess.DEVNULL, stderr=log.open("wb"))
    port_file = profile / "DevToolsActivePort"
    while not port_file.exists() or not port_file.read_text().strip():
        assert process.poll() is None, "chromium exited"
        time.sleep(0.05)
    return process, f"http://127.0.0.1:{port_file.read_text().split()[0]}"


async def main(args: argparse.Namespace) -> int:
    if args.console:  # the devices console (Pyodide) instead of the small page
        import sys
        root = Path(__file__).resolve().parents[2]
        sys.path.insert(0, str(root))
        from demo.server.backend import start_demo_server

        server, base = start_demo_server(root, port=0)
        port = int(base.rsplit(":", 1)[1])
    else:
        server, port = serve(args.tools, args.stagger)
    query = "?unregister" if args.unregister and not args.console else ""
    here = f"http://127.0.0.1:{port}/index.html{query}"
    there = (f"http://127.0.0.1:{port}/other.html{query}" if args.same_origin
             else f"http://localhost:{port}/index.html{query}")
    with tempfile.TemporaryDirectory(prefix="as-repro-") as tmp:
        log = Path(tmp) / "chromium.log"
        process, endpoint = chromium(Path(tmp) / "profile", log, args.arg)
        async with async_playwright() as pw:
            person = await pw.chromium.connect_over_cdp(endpoint)
            bridge = await pw.chromium.connect_over_cdp(endpoint)
            if args.watch:
                await bridge.contexts[0].add_init_script(script=WATCHES[args.watch])
            page = await person.contexts[0].new_page()
            stop = asyncio.Event()
            lists = 0

            async def poll() -> None:
                nonlocal lists
                while not stop.is_set():
                    pages = [p for p in bridge.contexts[0].pages if not p.is_closed()]
                    for p in pages:
                        if args.poll_only and not p.url.startswith(args.poll_only):
                            await asyncio.sleep(0.01)
                            continue
                        try:
                            await p.evaluate(LIST)
                            lists += 1
                        except PlaywrightError:
                            await asyncio.sleep(0)
                    if not pages:
                        await asyncio.sleep(0.01)

            link = None
            if args.link:  # agentsurface's bridge end (PageLink) lists instead, as tools/list does
                from agentsurface.mcp_server.options import BridgeOptions
                from agentsurface.mcp_server.page import PageLink

                await page.goto(here)
                link = PageLink(BridgeOptions(url=here, cdp=endpoint), lambda: None)
                await link.open()

                async def poll() -> None:
                    nonlocal lists
                    while not stop.is_set():
                        await link.list_tools()
                        lists += 1
                        await asyncio.sleep(0.005)

            pollers = [asyncio.ensure_future(poll()) for _ in range(args.poll)]
            started = time.monotonic()
            n = 0
            try:
                while n < args.rounds:
                    n += 1
                    await page.goto(here)
                    if args.wait:
                        await page.wait_for_function("() => document.body.dataset.ready === 'true'")
                    else:
                        await asyncio.sleep(args.stagger * args.tools / 2000)
                    await asyncio.sleep(args.dwell)
                    await page.goto(there)
                    await page.wait_for_function("() => document.body.dataset.ready === 'true'")
                    await asyncio.sleep(args.dwell)
                    if process.poll() is not None:
                        break
            except PlaywrightError as exc:
                print("playwright:", str(exc).splitlines()[0])
            finally:
                stop.set()
                for task in pollers:
                    task.cancel()
                if link is not None:
                    await link.aclose()
            time.sleep(0.5)
            code = process.poll()
            took = time.monotonic() - started
            print(f"rounds={n} lists={lists} seconds={took:.0f} chromium_exit={code}")
            if code is not None:
                print(log.read_text()[-2000:])
            else:
                process.terminate()
                process.wait(10)
    server.shutdown()
    return 1 if code is not None else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--tools", type=int, default=20)
    parser.add_argument("--poll", type=int, default=1, help="concurrent getTools() pollers (0: none)")
    parser.add_argument("--no-unregister", dest="unregister", action="store_false")
    parser.add_argument("--watch", choices=sorted(WATCHES), help="an init script: getTools() on toolchange "
                        "(list), only a toolchange listener (listen), getTools() every 5 ms (timer)")
    parser.add_argument("--stagger", type=int, default=0, help="ms between registrations")
    parser.add_argument("--no-wait", dest="wait", action="store_false", help="leave mid-registration")
    parser.add_argument("--arg", action="append", default=[], help="another Chromium switch")
    parser.add_argument("--dwell", type=float, default=0, help="seconds on each page")
    parser.add_argument("--console", action="store_true", help="the devices console (Pyodide) instead")
    parser.add_argument("--poll-only", help="poll pages whose URL starts with this (e.g. http://127.0.0.1)")
    parser.add_argument("--link", action="store_true", help="poll with agentsurface's PageLink.list_tools")
    parser.add_argument("--same-origin", action="store_true")
    raise SystemExit(asyncio.run(main(parser.parse_args())))
