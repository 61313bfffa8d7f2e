"""The page end of the bridge: one page of URL in a Chromium (launched or attached over CDP),
its WebMCP tools listed and called through agentsurface's agent runtime
(``agentsurface.testing.webmcp_agent``, the same client the e2e suite drives), and a callback
whenever its tools may have changed.

It only evaluates the runtime's list/call/abort functions in the page: it never clicks, types
or sends input events, so approvals in the page's dialog stay with the person.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, BrowserContext, Page, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from ..testing.chromium_flags import with_features
from ..testing.webmcp_agent import agent_runtime_function
from ..testing.webmcp_results import Tool, parse_tool
from .cdp import CdpConnection, CdpError
from .chromium import OwnChromium
from .errors import PageGone
from .options import WEBMCP_FEATURES, BridgeOptions, origin_of
from .page_eval import EvaluationFailed, PageEvaluator

CHROMIUM_FLAGS = [
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# Never from a document that is leaving (after its pagehide, e.g. on its way into the back/forward
# cache): Chromium 156's browser process CHECK-fails on getTools() from such a document.
_LEAVING = "window.__agentSurfaceMcpLeaving === true"
_LIST = agent_runtime_function(f"if ({_LEAVING}) return []; return agent.list();")
# Never in another document than the one whose origin was checked (one that committed between
# the two evaluates of a document's first call, say): it answers "leaving", a PageGone.
_CALL_BODY = (
    f"if ({_LEAVING} || location.origin !== arg.origin) return {{leaving: true}};"
    + """
  if (!agent.shape()) return null;
  return agent.run(arg.id, arg.name, arg.input);"""
)
# A call sends only this once the document has the runtime (the first call installs it): the
# runtime's source is parsed on every evaluate that carries it.
_CALL = f"(arg) => {{ const agent = window.__agentSurfaceAgent; if (!agent) return {{install: true}}; {_CALL_BODY} }}"
_INSTALL_AND_CALL = agent_runtime_function(_CALL_BODY)
_ABORT = "(id) => { window.__agentSurfaceAgent?.calls[id]?.controller.abort(); }"
# Is the page ready? Its tools (null: no WebMCP client), and whether its document has loaded.
_PROBE = agent_runtime_function(
    f"if ({_LEAVING}) return null;"
    " return agent.list().then((tools) => ({tools, loaded: document.readyState === 'complete'}));"
)
# How often a wait for the page's first tool looks again (its toolchange events also wake it).
READY_POLL_SECONDS = 0.1


class PageReadiness:
    """What a wait for the page found: ``tools`` it lists, or ``no_webmcp`` (its document loaded
    without any WebMCP client), or neither (still starting when the wait ended)."""

    __slots__ = ("no_webmcp", "tools")

    def __init__(self, tools: list[Tool], no_webmcp: bool) -> None:
        self.tools = tools
        self.no_webmcp = no_webmcp


# Tells the bridge when the page's tools change: Chromium's toolchange event, or the polyfill's
# callback (installed once the polyfill is there), as a console.debug line with this marker (not
# an exposed binding: another Playwright attached to the same page, e.g. the person's test
# harness, would answer a binding it does not know with an error in the page). Runs before the
# page's scripts in every document.
MARKER = "agentsurface-mcp:toolchange"
_WATCH = f"""(() => {{
  if (window.__agentSurfaceMcpWatching) return;
  window.__agentSurfaceMcpWatching = true;
  addEventListener("pagehide", () => {{ window.__agentSurfaceMcpLeaving = true; }});
  addEventListener("pageshow", () => {{ window.__agentSurfaceMcpLeaving = false; }});
  const notify = () => console.debug("{MARKER}");
  const hook = () => {{
    const native = document.modelContext;
    if (native && typeof native.addEventListener === "function") {{
      native.addEventListener("toolchange", notify);
      return true;
    }}
    const testing = navigator.modelContextTesting;
    if (testing && typeof testing.registerToolsChangedCallback === "function") {{
      testing.registerToolsChangedCallback(notify);
      return true;
    }}
    return false;
  }};
  if (hook()) return;
  let tries = 0;
  const retry = () => {{ if (!hook() && ++tries < 600) setTimeout(retry, 100); else notify(); }};
  setTimeout(retry, 0);
}})();"""


def polyfill_script() -> Path:
    """The vendored WebMCP polyfill (web/dist/polyfill) that --polyfill injects."""
    here = Path(__file__).resolve()
    for base in here.parents:
        candidate = base / "web" / "dist" / "polyfill" / "webmcp-polyfill.iife.js"
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        "the vendored WebMCP polyfill is not built (web/dist/polyfill/webmcp-polyfill.iife.js): "
        "run scripts/build_web.py, or use a Chromium with --enable-features=WebMCPTesting"
    )


class PageLink:
    """``async with PageLink(options, on_change) as link``: the page is open and watched."""

    def __init__(
        self, options: BridgeOptions, on_change: Callable[[], None], chromium: OwnChromium | None = None
    ) -> None:
        self.options = options
        self._on_change = on_change
        self._chromium = chromium  # started already, on URL (see mcp_server/chromium.py)
        # The calls' way in (one hop, see cdp.py): our Chromium's pipe, or a --cdp browser's
        # WebSocket; without one (--polyfill launches through Playwright), Playwright's evaluate.
        self._cdp: CdpConnection | None = None
        self._ids = itertools.count(1)
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._context: BrowserContext | None = None
        self._launched = False
        self.page: Page | None = None
        self._evaluate: PageEvaluator | None = None  # runs the runtime's functions in page
        self._gone: asyncio.Future[str] | None = None  # settles when the page crashes or closes
        # The page's main-frame navigations in flight: until one commits (or fails), the bridge
        # evaluates nothing in the document that is leaving (see _LEAVING).
        self._navigating: set[Any] = set()
        # Set once the current document listed a tool (booted), or a wait for one ran its full
        # time: a client's first tools/list waits for it (a page boots Pyodide for seconds
        # first), later ones answer at once, even for a page that offers no tool yet.
        self._ready = False
        self.booted = False
        self._woken = asyncio.Event()

    # ------------------------------------------------------------------ opening

    async def open(self) -> None:
        """Launch or attach, open URL (returning once its document is committed) and watch it.
        Until then the page lists no tools."""
        self._playwright = await async_playwright().start()
        chromium = self._playwright.chromium
        if self._chromium is not None:
            await self._attach_own(chromium)
            return
        if self.options.cdp:
            self._browser = await chromium.connect_over_cdp(self.options.cdp)
            with contextlib.suppress(CdpError):  # without it, Playwright's evaluate answers
                self._cdp = await CdpConnection.websocket(self.options.cdp)
            contexts = self._browser.contexts
            self._context = contexts[0] if contexts else await self._browser.new_context()
        else:
            # With --polyfill, a Chromium without WebMCP (the polyfill's shape); otherwise WebMCP on.
            # Chromium's heap profiler off: it crashes Pyodide pages' renderers (chromium_flags).
            webmcp = [] if self.options.polyfill else WEBMCP_FEATURES.split(",")
            args = with_features(CHROMIUM_FLAGS, enable=webmcp)
            self._browser = await chromium.launch(
                executable_path=self.options.browser, headless=self.options.headless, args=args
            )
            self._launched = True
            self._context = await self._browser.new_context(no_viewport=True)
        context = self._context
        if self.options.polyfill:
            await context.add_init_script(path=polyfill_script())
        await context.add_init_script(script=_WATCH)
        page = next((p for p in context.pages if p.url == self.options.url), None)
        if page is None:
            page = await context.new_page()
            self._watch(page)
            await page.goto(self.options.url, wait_until="commit")
        else:
            self._watch(page)
            if self.options.polyfill:
                await page.evaluate(polyfill_script().read_text())
            await page.evaluate(_WATCH)

    async def _attach_own(self, chromium: Any) -> None:
        """Attach to the Chromium started on URL: its page is loading already (it missed the
        watch script that runs before a page's scripts; the probe finds its tools anyway)."""
        assert self._chromium is not None
        self._browser = await chromium.connect_over_cdp(await self._chromium.cdp_url())
        self._cdp = await self._chromium.cdp_pipe()
        self._launched = True
        contexts = self._browser.contexts
        context = self._context = contexts[0] if contexts else await self._browser.new_context()
        await context.add_init_script(script=_WATCH)  # the documents from now on
        if context.pages:
            self._watch(context.pages[0])
            with contextlib.suppress(PlaywrightError):  # between documents: the next has it
                await context.pages[0].evaluate(_WATCH)  # the current one
        else:
            page = await context.new_page()
            self._watch(page)
            await page.goto(self.options.url, wait_until="commit")

    def _watch(self, page: Page) -> None:
        self.page = page
        self._gone = asyncio.get_running_loop().create_future()
        page.on("crash", lambda _: self._went("the page crashed"))
        page.on("close", lambda _: self._went("the page was closed"))
        page.on("framenavigated", lambda frame: self._navigated(frame))
        page.on("request", self._request_started)
        page.on("requestfinished", self._request_ended)
        page.on("requestfailed", self._request_ended)
        page.on("console", lambda message: self._changed() if message.text == MARKER else None)

    def _navigated(self, frame: Any) -> None:
        # A new document: its tools are listed again. A call running in the old one is rejected
        # by Playwright (its execution context was destroyed), which answers it PageGone.
        if self.page is not None and frame == self.page.main_frame:
            self._navigating.clear()
            self._ready = self.booted = False  # a new document boots again
            self._changed()

    def _request_started(self, request: Any) -> None:
        with contextlib.suppress(PlaywrightError):  # a request of no frame (a service worker's)
            if (
                request.is_navigation_request()
                and self.page is not None
                and request.frame == self.page.main_frame
            ):
                self._navigating.add(request)

    def _request_ended(self, request: Any) -> None:
        if request in self._navigating:  # it did not commit (a download, 204, failure): list again
            self._navigating.discard(request)
            self._changed()

    def _went(self, reason: str) -> None:
        if self._gone is not None and not self._gone.done():
            self._gone.set_result(reason)
        self._changed()

    def _changed(self) -> None:
        self._woken.set()
        self._on_change()

    async def aclose(self) -> None:
        if self._chromium is None and self._cdp is not None:  # our --cdp WebSocket (a pipe is our Chromium's)
            self._cdp.close()
        with contextlib.suppress(Exception):
            if self._launched and self._browser is not None:
                await self._browser.close()
        if self._chromium is not None:
            self._chromium.close()
        # Attached over CDP: leave the person's browser and page as they are (disconnect only).
        if self._playwright is not None:
            with contextlib.suppress(Exception):
                await self._playwright.stop()
        self._playwright = None

    # ------------------------------------------------------------------ tools

    @property
    def page_origin(self) -> str | None:
        if self.page is None or self.page.is_closed():
            return None
        return origin_of(self.page.url)

    async def list_tools(self) -> list[Tool]:
        """The page's tools of the allowed origins (none when the page is elsewhere or gone)."""
        page = self.page
        origin = self.page_origin
        if page is None or origin is None or origin not in self.options.origins or self._navigating:
            return []
        try:
            raw = await self._evaluator(page)(_LIST, None)
        except EvaluationFailed:
            return []  # between documents, or gone: the next change lists again
        allowed = self.options.origins
        return [parse_tool(t) for t in raw or [] if origin_of(str(t.get("origin") or origin)) in allowed]

    async def wait_ready(self, timeout: float) -> PageReadiness:
        """Until the page lists a tool (it has booted), its document has loaded without a
        WebMCP client, or ``timeout`` seconds passed: whichever comes first."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(0.0, timeout)
        while True:
            self._woken.clear()
            tools, no_webmcp, elsewhere = await self._probe()
            if tools:
                self._ready = self.booted = True
            if self._ready or no_webmcp or elsewhere:
                return PageReadiness(tools, no_webmcp)
            if loop.time() >= deadline:
                self._ready = True  # waited long enough for this document: answer at once now
                return PageReadiness(tools, no_webmcp)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._woken.wait(), min(READY_POLL_SECONDS, deadline - loop.time()))

    @property
    def ready(self) -> bool:
        """The current document has listed a tool, or a wait for one ran its full time."""
        return self._ready

    async def _probe(self) -> tuple[list[Tool], bool, bool]:
        """The page's tools, whether it loaded without WebMCP, and whether waiting is pointless
        (the page is closed or at an origin whose tools are not exposed)."""
        page = self.page
        if page is None or self._navigating or page.url == "about:blank":
            return [], False, False  # still opening, or between documents
        origin = self.page_origin
        if origin is None or origin not in self.options.origins:
            return [], False, True
        try:
            state = await self._evaluator(page)(_PROBE, None)
        except EvaluationFailed:
            return [], False, page.is_closed()  # between documents, or gone
        if not isinstance(state, dict):
            return [], False, False
        raw = state.get("tools")
        if raw is None:
            return [], bool(state.get("loaded")), False
        allowed = self.options.origins
        return (
            [parse_tool(t) for t in raw if origin_of(str(t.get("origin") or origin)) in allowed],
            False,
            False,
        )

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Run one tool through the browser's client; its recorded outcome (``{"text": ...}`` or
        ``{"rejected": name, "message": ...}``). Raises PageGone when the document goes first;
        on cancellation the call's signal is aborted in the page."""
        page, gone = self.page, self._gone
        if page is None or gone is None:
            raise PageGone("the page is still opening")
        if page.is_closed():
            raise PageGone("the page is closed")
        if gone.done():
            raise PageGone(gone.result())
        if self.page_origin not in self.options.origins:
            raise PageGone(f"the page is now at {self.page_origin}, not an allowed origin")
        if self._navigating:
            raise PageGone("the page is navigating away")
        call_id = f"mcp-{next(self._ids)}"
        arg = {"id": call_id, "name": name, "input": arguments, "origin": self.page_origin}
        evaluate = self._evaluator(page)
        running = asyncio.ensure_future(self._evaluate_call(evaluate, arg))
        try:
            done, _ = await asyncio.wait({running, gone}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            running.cancel()
            # The abort outlives this cancellation (shielded); when the bridge is shutting down
            # (the client left mid-call), the browser is gone before it ends: its failure is
            # expected and taken here, not reported as "never retrieved" on the way out.
            abort = asyncio.ensure_future(asyncio.wait_for(evaluate(_ABORT, call_id), 5))
            abort.add_done_callback(_taken)
            with contextlib.suppress(Exception):
                await asyncio.shield(abort)
            raise
        if running not in done:
            running.cancel()
            raise PageGone(gone.result())
        try:
            outcome = running.result()
        except EvaluationFailed as exc:
            raise PageGone(gone.result() if gone.done() else _reason(exc)) from exc
        if outcome is None:
            raise PageGone("the page offers no WebMCP client any more")
        if outcome.get("leaving"):
            raise PageGone("the page is navigating away")
        return dict(outcome)

    def _evaluator(self, page: Page) -> PageEvaluator:
        if self._evaluate is None or self._evaluate.page is not page:
            self._evaluate = PageEvaluator(page, self._cdp)
        return self._evaluate

    @staticmethod
    async def _evaluate_call(evaluate: PageEvaluator, arg: dict[str, Any]) -> Any:
        outcome = await evaluate(_CALL, arg)
        if isinstance(outcome, dict) and outcome.get("install"):  # this document's first call
            outcome = await evaluate(_INSTALL_AND_CALL, arg)
        return outcome


def _taken(task: asyncio.Future[Any]) -> None:
    """Retrieve a background task's outcome (its failure is expected and says nothing new)."""
    if not task.cancelled():
        task.exception()


def _reason(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]
