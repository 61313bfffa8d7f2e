"""The bridge's own DevTools connection for its calls (mcp_server/cdp.py, page_eval.py), with
Debian's real ``chromium``, over both ways in: its own Chromium's debugging pipe and a --cdp
browser's WebSocket. A function runs in the page with its argument as JSON (whatever the strings
hold); a throw or a closed tab fails the waiting call with a typed error; closing the pipe ends
Chromium at once; and the bridge's evaluator uses the connection for the page Playwright holds
(Playwright's evaluate without one, or once it has closed) with the same answers."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from playwright.async_api import async_playwright

from agentsurface.mcp_server.cdp import CdpConnection, CdpError, evaluate
from agentsurface.mcp_server.chromium import OwnChromium
from agentsurface.mcp_server.options import BridgeOptions
from agentsurface.mcp_server.page_eval import EvaluationFailed, PageEvaluator

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium")
PAGE = "data:text/html,<title>pipe</title><script>window.answer = 41</script>"
# Strings that would end or break a JavaScript literal written naively.
AWKWARD = ["é", "\u2028\u2029", "</script>", "\"'`${x}", "\\", "\x00", "😀"]


@asynccontextmanager
async def own_chromium(way: str = "pipe") -> AsyncIterator[tuple[OwnChromium, CdpConnection, str]]:
    """Chromium on PAGE, a connection (its pipe, or a WebSocket to its debugging port) attached
    to the page's target."""
    chromium = OwnChromium(BridgeOptions(url=PAGE, browser=CHROMIUM, headless=True))
    socket: CdpConnection | None = None
    try:
        endpoint = await chromium.cdp_url()
        if way == "pipe":
            pipe = await chromium.cdp_pipe()
        else:
            pipe = socket = await CdpConnection.websocket(endpoint)
        assert pipe is not None
        targets = (await pipe.send("Target.getTargets"))["targetInfos"]
        (page,) = [t for t in targets if t["type"] == "page"]
        session = (await pipe.send("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True}))[
            "sessionId"
        ]
        deadline = time.monotonic() + 30
        while await evaluate(pipe, session, "() => window.answer ?? null", None) is None:
            assert time.monotonic() < deadline, "the page never ran its script"
            await asyncio.sleep(0.05)
        yield chromium, pipe, session
    finally:
        if socket is not None:
            socket.close()
        chromium.close()


WAYS = pytest.mark.parametrize("way", ["pipe", "websocket"])


@WAYS
def test_a_function_runs_in_the_page_with_its_argument_as_json(way: str) -> None:
    async def scenario() -> None:
        async with own_chromium(way) as (_chromium, pipe, session):
            assert await evaluate(pipe, session, "(arg) => window.answer + arg.add", {"add": 1}) == 42
            assert await evaluate(pipe, session, "(arg) => arg", {"strings": AWKWARD}) == {"strings": AWKWARD}
            assert await evaluate(pipe, session, "async (arg) => arg * 2", 21) == 42
            assert await evaluate(pipe, session, "() => undefined", None) is None
            # Calls in flight together each get their own answer.
            answers = await asyncio.gather(*(evaluate(pipe, session, "(n) => n", n) for n in range(20)))
            assert answers == list(range(20))

    asyncio.run(scenario())


@WAYS
def test_a_throw_or_a_closed_tab_fails_the_call_with_cdp_error(way: str) -> None:
    async def scenario() -> None:
        async with own_chromium(way) as (_chromium, pipe, session):
            with pytest.raises(CdpError, match="boom"):
                await evaluate(pipe, session, "() => { throw new Error('boom'); }", None)
            with pytest.raises(CdpError, match="nope"):
                await evaluate(pipe, session, "async () => Promise.reject(new Error('nope'))", None)
            assert await evaluate(pipe, session, "() => 1", None) == 1  # the session still works
            with pytest.raises(CdpError):
                await pipe.send("No.suchMethod")
            # A call waiting on the page when its tab closes ends, and its session is known gone.
            waiting = asyncio.ensure_future(evaluate(pipe, session, "() => new Promise(() => {})", None))
            await asyncio.sleep(0.2)
            assert not waiting.done()
            targets = (await pipe.send("Target.getTargets"))["targetInfos"]
            (page,) = [t for t in targets if t["type"] == "page"]
            await pipe.send("Target.closeTarget", {"targetId": page["targetId"]})
            with pytest.raises(CdpError):
                await asyncio.wait_for(waiting, 10)
            assert session in pipe.ended_sessions
            with pytest.raises(CdpError):
                await evaluate(pipe, session, "() => 1", None)

    asyncio.run(scenario())


def test_closing_the_pipe_fails_waiting_calls_and_ends_chromium_at_once() -> None:
    async def scenario() -> None:
        async with own_chromium() as (chromium, pipe, session):
            pid = chromium._pid
            assert pid is not None
            waiting = asyncio.ensure_future(evaluate(pipe, session, "() => new Promise(() => {})", None))
            await asyncio.sleep(0.1)
            started = time.monotonic()
            chromium.close()  # no loop turn in between: the pipe's files close here
            assert chromium._pid is None
            assert time.monotonic() - started < 4.0  # not the 5 s grace before SIGKILL
            with pytest.raises(CdpError, match="closed"):
                await waiting
            with pytest.raises(CdpError, match="closed"):
                await pipe.send("Browser.getVersion")
            pipe.close()  # twice is fine

    asyncio.run(scenario())


@WAYS
def test_the_evaluator_uses_the_connection_for_playwrights_page_and_answers_the_same(way: str) -> None:
    async def scenario() -> None:
        async with own_chromium(way) as (chromium, pipe, _session), async_playwright() as playwright:
            browser = await playwright.chromium.connect_over_cdp(await chromium.cdp_url())
            page = browser.contexts[0].pages[0]
            over_pipe = PageEvaluator(page, pipe)
            over_playwright = PageEvaluator(page)
            for evaluator in (over_pipe, over_playwright):
                assert await evaluator("(arg) => window.answer + arg", 1) == 42
                assert await evaluator("(arg) => arg", AWKWARD) == AWKWARD
                with pytest.raises(EvaluationFailed, match="boom"):
                    await evaluator("() => { throw new Error('boom'); }", None)
            assert over_pipe._session is not None  # the calls went over the pipe
            # Concurrent first calls attach once.
            fresh = PageEvaluator(page, pipe)
            assert await asyncio.gather(*(fresh("(n) => n", n) for n in range(5))) == list(range(5))
            await page.close()
            with pytest.raises(EvaluationFailed):
                await over_pipe("() => 1", None)
            assert over_pipe._session is None  # its session ended with the tab: not reused
            await browser.close()

    asyncio.run(scenario())


def test_a_closed_connection_leaves_the_calls_to_playwright() -> None:
    async def scenario() -> None:
        async with own_chromium("websocket") as (chromium, socket, _session), async_playwright() as playwright:
            browser = await playwright.chromium.connect_over_cdp(await chromium.cdp_url())
            page = browser.contexts[0].pages[0]
            evaluator = PageEvaluator(page, socket)
            assert await evaluator("(arg) => window.answer + arg", 1) == 42
            assert evaluator._session is not None
            socket.close()
            assert await evaluator("(arg) => window.answer + arg", 1) == 42  # through Playwright
            await browser.close()

    asyncio.run(scenario())


def test_a_cdp_address_with_no_browser_is_a_typed_error() -> None:
    async def scenario() -> None:
        with pytest.raises(CdpError, match=r"no DevTools WebSocket at http://127\.0\.0\.1:9 "):
            await CdpConnection.websocket("http://127.0.0.1:9")
        with pytest.raises(CdpError, match="no DevTools WebSocket"):
            await CdpConnection.websocket("ws://127.0.0.1:9/devtools/browser/x")

    asyncio.run(scenario())
