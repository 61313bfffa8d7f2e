"""The connected tabs (sources), their tools under MCP names, and the calls each one owes.

Tools keep the names their page gave them; a name that two tabs offer is listed once per tab,
each prefixed with its tab's short id (``t3-name``), so no call can reach a tab the agent did not
pick. A name that is still ambiguous after that (a tab naming a tool ``t3-name`` itself) stays
with the tab that connected first. A call goes only to the tab that offered the tool; a tab that
goes away withdraws its tools and fails its pending calls with ``PageGone``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import field
from typing import Any

from ..._core.errors import AgentSurfaceError
from ..._core.records import record
from ...adapters.relay_protocol import MAX_TOOLS, checked_tool
from ...testing.webmcp_results import Tool, parse_tool
from ..errors import PageGone

# A tab's own name in the form of a prefixed one (t2-read) is always prefixed itself: otherwise a
# tab that connected first could list t2-read and take the calls meant for the second tab's read.
LOOKS_PREFIXED = re.compile(r"t[0-9]+-")

SendText = Callable[[str], Awaitable[None]]


@record(frozen=False, eq=False)
class Source:
    """One welcomed tab."""

    id: str
    origin: str
    send: SendText
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    pending: dict[int, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    gone: str | None = None


class UnknownTool(AgentSurfaceError, LookupError):
    """No connected tab offers this MCP name (any more)."""


class SourceRegistry:
    """Every welcomed tab; ``on_change`` whenever the listing may differ."""

    def __init__(self, on_change: Callable[[], None]) -> None:
        self._on_change = on_change
        self._sources: list[Source] = []  # in the order they connected
        self._ids = itertools.count(1)
        self._call_ids = itertools.count(1)

    @property
    def sources(self) -> list[Source]:
        return list(self._sources)

    def add(self, origin: str, send: SendText) -> Source:
        source = Source(f"t{next(self._ids)}", origin, send)
        self._sources.append(source)
        return source

    def set_tools(self, source: Source, raw: object) -> str | None:
        """A tab's whole listing; why it was refused (the listing is then left as it was)."""
        if not isinstance(raw, list) or len(raw) > MAX_TOOLS:
            return f"a listing is a list of at most {MAX_TOOLS} tools"
        tools: dict[str, dict[str, Any]] = {}
        for entry in raw:
            tool = checked_tool(entry)
            if tool is None or tool["name"] in tools:
                return "a tool of the listing is malformed or repeated"
            tools[tool["name"]] = tool
        source.tools = tools
        self._on_change()
        return None

    def remove(self, source: Source, reason: str) -> None:
        """The tab went away: its tools are withdrawn and its pending calls fail."""
        if source.gone is not None:
            return
        source.gone = reason
        with contextlib.suppress(ValueError):
            self._sources.remove(source)
        for future in source.pending.values():
            if not future.done():
                future.set_exception(PageGone(reason))
        source.pending.clear()
        if source.tools:
            self._on_change()

    # ------------------------------------------------------------------ listing

    def routes(self) -> dict[str, tuple[Source, str]]:
        """MCP name → (tab, the tab's own name for the tool)."""
        counts = Counter(name for source in self._sources for name in source.tools)
        routes: dict[str, tuple[Source, str]] = {}
        for source in self._sources:
            for name in source.tools:
                listed = f"{source.id}-{name}" if counts[name] > 1 or LOOKS_PREFIXED.match(name) else name
                routes.setdefault(listed, (source, name))  # the first tab keeps a clash
        return routes

    def tools(self) -> list[Tool]:
        listed = []
        for mcp_name, (source, name) in self.routes().items():
            listed.append(parse_tool({**source.tools[name], "name": mcp_name}))
        return listed

    # ------------------------------------------------------------------ calls

    async def call(self, mcp_name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Run the tool in its tab: the outcome (``{"text"}`` or ``{"rejected", "message"}``).
        Raises UnknownTool, or PageGone when the tab goes first; cancelling this cancels the
        call in the tab."""
        route = self.routes().get(mcp_name)
        if route is None:
            raise UnknownTool(mcp_name)
        source, name = route
        call_id = next(self._call_ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        source.pending[call_id] = future
        try:
            await source.send(json.dumps({"type": "call", "id": call_id, "name": name, "input": arguments}))
            return await future
        except asyncio.CancelledError:
            if source.gone is None:
                with contextlib.suppress(Exception):
                    await asyncio.shield(source.send(json.dumps({"type": "cancel", "id": call_id})))
            raise
        except PageGone:
            raise
        except Exception as exc:  # the socket closed under the send
            raise PageGone(source.gone or f"the tab's connection failed ({type(exc).__name__})") from exc
        finally:
            source.pending.pop(call_id, None)

    @staticmethod
    def settle(source: Source, message: dict[str, Any]) -> None:
        """A ``result`` frame: it settles only a call this very tab owes."""
        future = source.pending.get(message.get("id"))  # type: ignore[arg-type]
        if future is None or future.done():
            return
        text, rejected = message.get("text"), message.get("rejected")
        if isinstance(text, str):
            future.set_result({"text": text})
        elif isinstance(rejected, str):
            future.set_result({"rejected": rejected, "message": str(message.get("message") or "")})
        else:
            future.set_result({"rejected": "TypeError", "message": "the tab answered a malformed result"})
