"""How the bridge runs a function in its page: over its own DevTools connection when it has one
(one hop, see ``cdp``), else through Playwright's ``evaluate``. Both run in the page's main world
and fail the same way, with ``EvaluationFailed``."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from .._core.errors import AgentSurfaceError
from .cdp import CdpConnection, CdpError, evaluate


class EvaluationFailed(AgentSurfaceError):
    """The function threw, or could not run (the page is between documents, or gone)."""


class PageEvaluator:
    """``await evaluator(function, arg)``: ``function(arg)`` in ``page``, awaited, as JSON."""

    def __init__(self, page: Page, cdp: CdpConnection | None = None) -> None:
        self.page = page
        self._cdp = cdp
        self._session: str | None = None  # the connection's session with the page, once attached
        self._attaching: asyncio.Future[str | None] | None = None  # one attach for concurrent calls

    async def __call__(self, function: str, arg: Any) -> Any:
        session = await self._attached() if self._cdp is not None else None
        try:
            if self._cdp is not None and session is not None:
                return await evaluate(self._cdp, session, function, arg)
            return await self.page.evaluate(function, arg)
        except (CdpError, PlaywrightError) as exc:
            if session is not None and self._cdp is not None and session in self._cdp.ended_sessions:
                self._session = None  # the next call attaches again (if the page is still there)
            raise EvaluationFailed(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from exc

    async def _attached(self) -> str | None:
        """The connection's session with the page: attached on first use (the page's target id
        comes from Playwright, which knows which tab is ours). None when that fails, or the
        connection has closed: Playwright's evaluate answers instead (and says why it cannot
        run, if the page is gone)."""
        if self._cdp is None or self._cdp.closed:
            return None
        if self._session is not None:
            return self._session
        if self._attaching is None or self._attaching.done():
            self._attaching = asyncio.ensure_future(self._attach(self._cdp))
        return await asyncio.shield(self._attaching)

    async def _attach(self, cdp: CdpConnection) -> str | None:
        with contextlib.suppress(CdpError, PlaywrightError, KeyError, TypeError):
            playwright_session = await self.page.context.new_cdp_session(self.page)
            try:
                info = await playwright_session.send("Target.getTargetInfo")
            finally:
                with contextlib.suppress(PlaywrightError):
                    await playwright_session.detach()
            target = info["targetInfo"]["targetId"]
            attached = await cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True})
            self._session = str(attached["sessionId"])
        return self._session
