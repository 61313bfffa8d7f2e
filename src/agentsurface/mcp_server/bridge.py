"""The MCP server that mirrors the page: ``tools/list`` is the page's tools (of the allowed
origins), ``tools/call`` runs one through the page's WebMCP client, and every client that listed
hears ``notifications/tools/list_changed`` when the page's listing changes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sys
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.shared.exceptions import McpError
from mcp.shared.message import SessionMessage

from ..testing.webmcp_results import Tool
from .chromium import OwnChromium
from .errors import PageGone, page_gone, waited_too_long
from .guard import guard
from .options import WEBMCP_FEATURES, BridgeOptions
from .page import PageLink

if TYPE_CHECKING:
    from .relay.link import RelayLink
from .results import call_result, error_result, mcp_tool

SERVER_NAME = "agentsurface"
# A burst of DOM changes (a drawer mounting three tools) becomes one notification.
SETTLE_SECONDS = 0.02


def _signature(tools: list[Tool]) -> str:
    return json.dumps(
        [[t.name, t.title, t.description, t.input_schema, dict(t.annotations)] for t in tools], sort_keys=True
    )


class _Server(Server[Any, Any]):
    """Says ``tools.listChanged`` in every session's capabilities (the HTTP transport builds
    its sessions' options itself), and runs every session, stdio's or HTTP's, behind the one
    argument guard (:mod:`.guard`)."""

    async def run(
        self,
        read_stream: MemoryObjectReceiveStream[SessionMessage | Exception],
        write_stream: MemoryObjectSendStream[SessionMessage],
        initialization_options: InitializationOptions,
        raise_exceptions: bool = False,
        stateless: bool = False,
    ) -> None:
        to_server, from_guard = anyio.create_memory_object_stream[SessionMessage | Exception](16)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(guard, read_stream, to_server, write_stream)
            try:
                async with from_guard:
                    await super().run(
                        from_guard, write_stream, initialization_options, raise_exceptions, stateless
                    )
            finally:
                tasks.cancel_scope.cancel()

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True), experimental_capabilities
        )


class Bridge:
    """One page, any number of MCP sessions (stdio: one; HTTP: one per client)."""

    def __init__(self, options: BridgeOptions, chromium: OwnChromium | None = None) -> None:
        self.options = options
        self.server: Server[Any, Any] = _Server(
            SERVER_NAME, version=_version(), instructions=_instructions(options)
        )
        self.server.request_handlers[types.ListToolsRequest] = self._list_tools
        self.server.request_handlers[types.CallToolRequest] = self._call_tool
        self.link: PageLink | RelayLink
        if options.relay:
            from .relay.link import RelayLink

            self.link = RelayLink(options, self.mark_changed)
        else:
            self.link = PageLink(options, self.mark_changed, chromium)
        self._sessions: weakref.WeakSet[ServerSession] = weakref.WeakSet()
        self._listed: str | None = None  # the listing the clients were last told about
        self._tools: dict[str, Tool] = {}
        self._changed = asyncio.Event()
        self.failed: Exception | None = None
        self.ended_by: int | None = None  # the signal that ended it (see main._ends_on_sigterm)
        self._said_no_webmcp = False

    async def open_page(self, stop: Callable[[], None]) -> None:
        """Open the page while the MCP session already answers (tools/list is empty until
        then, and list_changed follows); a page that cannot be opened ends the server."""
        try:
            await self.link.open()
        except Exception as exc:
            self.failed = exc
            where = "the relay" if self.options.relay else self.options.url
            print(f"agentsurface mcp: could not open {where}: {exc}", file=sys.stderr)
            stop()
            return
        self.mark_changed()

    def initialization_options(self) -> InitializationOptions:
        return self.server.create_initialization_options()

    # ------------------------------------------------------------------ listing

    async def current_tools(self) -> list[Tool]:
        tools = await self.link.list_tools()
        self._tools = {t.name: t for t in tools}
        return tools

    async def page_ready(self) -> None:
        """Before answering a client: wait (at most ``--ready-timeout`` seconds) for the page to
        list its first tool, since a page boots Pyodide for seconds and a one-shot client (the
        MCP Inspector) lists once; a page loaded without any WebMCP client is an error that
        says which flags the browser needs."""
        link = self.link
        if not isinstance(link, PageLink) or link.ready:
            return
        found = await link.wait_ready(self.options.ready_timeout)
        if found.no_webmcp:
            message = no_webmcp_message(self.options)
            if not self._said_no_webmcp:
                self._said_no_webmcp = True
                print(f"agentsurface mcp: {message}", file=sys.stderr)
            raise McpError(types.ErrorData(code=types.INTERNAL_ERROR, message=message))

    async def _list_tools(self, request: types.ListToolsRequest) -> types.ServerResult:
        self._sessions.add(self.server.request_context.session)
        await self.page_ready()
        tools = await self.current_tools()
        self._listed = _signature(tools)
        return types.ServerResult(types.ListToolsResult(tools=[mcp_tool(t) for t in tools]))

    def mark_changed(self) -> None:
        self._changed.set()

    async def watch_changes(self) -> None:
        """Forever: after each change the page reports, list again and tell the sessions when
        the listing differs from what they were told."""
        while True:
            await self._changed.wait()
            await asyncio.sleep(SETTLE_SECONDS)
            self._changed.clear()
            signature = _signature(await self.current_tools())
            if signature == self._listed:
                continue
            self._listed = signature
            for session in list(self._sessions):
                with contextlib.suppress(Exception):  # a session that went away
                    await session.send_tool_list_changed()

    # ------------------------------------------------------------------ calls

    async def _call_tool(self, request: types.CallToolRequest) -> types.ServerResult:
        name = request.params.name
        arguments = request.params.arguments or {}
        if name not in self._tools:
            await self.page_ready()
            await self.current_tools()  # the client may know of it before we listed
        if name not in self._tools:
            starting = isinstance(self.link, PageLink) and not self.link.booted
            why = (
                f" (it listed no tool within {self.options.ready_timeout:g} s: is it still starting? "
                "--ready-timeout waits longer)"
                if starting
                else ""
            )
            raise McpError(
                types.ErrorData(
                    code=types.INVALID_PARAMS,
                    message=f"unknown tool {_said(name)}: the page offers {sorted(self._tools)}{why}",
                )
            )
        context = self.server.request_context
        token = context.meta.progressToken if context.meta is not None else None
        ticking = None
        if token is not None and self.options.progress_interval > 0:
            ticking = asyncio.ensure_future(
                _tell_progress(
                    context.session, token, str(context.request_id), self.options.progress_interval
                )
            )
        try:
            # An MCP cancellation, or the bound, cancels the call in the page (its dialog closes).
            outcome = await asyncio.wait_for(self.link.call(name, arguments), self.options.wait_timeout)
        except TimeoutError:
            return types.ServerResult(error_result(waited_too_long(self.options.wait_timeout)))
        except PageGone as gone:
            return types.ServerResult(error_result(page_gone(gone.reason)))
        finally:
            if ticking is not None:
                ticking.cancel()
        return types.ServerResult(call_result(name, outcome))


async def _tell_progress(session: ServerSession, token: str | int, request_id: str, interval: float) -> None:
    """Every ``interval`` while the call runs: progress on the client's token (seconds waited so
    far), so a client that resets its timeout on progress keeps waiting for the person."""
    waited = 0.0
    while True:
        await asyncio.sleep(interval)
        waited += interval
        with contextlib.suppress(Exception):  # a session that went away: the call's end says so
            await session.send_progress_notification(
                token,
                progress=waited,
                message=f"waiting for the person: {waited:g} s so far (a consequential call waits until "
                "they approve or deny it in the page)",
                related_request_id=request_id,
            )


# What MCP allows in a tool name: such a name is repeated in an error (a typo is easy to see),
# anything else the client sent (markup, control characters, megabytes) is not.
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")


def _said(name: str) -> str:
    return repr(name) if _TOOL_NAME.fullmatch(name) else "(a name no tool can have)"


def no_webmcp_message(options: BridgeOptions) -> str:
    """What to do about a page that loaded without a WebMCP client."""
    if options.polyfill:
        fix = "the injected polyfill did not take: does the page replace navigator.modelContext?"
    elif options.cdp:
        fix = (
            f"start the Chromium you attach to with --enable-features={WEBMCP_FEATURES} (Chromium 146+), "
            "or pass --polyfill to inject the vendored polyfill"
        )
    else:
        fix = (
            f"this Chromium was launched with --enable-features={WEBMCP_FEATURES} and still has none: "
            "it needs Chromium 146+ (--browser PATH), or pass --polyfill"
        )
    return f"the page {options.url} has loaded without WebMCP (no document.modelContext): {fix}"


def _instructions(options: BridgeOptions) -> str:
    if options.relay:
        return (
            "The tools of the browser tabs connected to this relay (agentsurface), as each page declares "
            "them; a tool two tabs offer is listed once per tab, prefixed with the tab's id (t3-name). "
            "Consequential calls wait until the person approves them in that tab; a refusal comes back "
            "as a result with isError and a typed error (code, message, retry, details)."
        )
    return (
        f"The tools of the web page {options.url}, as the page declares them (agentsurface). "
        "Consequential calls wait until the person approves them in the page; a refusal comes back "
        "as a result with isError and a typed error (code, message, retry, details)."
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agentsurface")
    except PackageNotFoundError:
        return "0"
