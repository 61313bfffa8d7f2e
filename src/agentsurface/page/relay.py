"""``await connect_relay(registry)``: this page's tools for the agents that ``agentsurface mcp
--relay`` serves, in any browser (no WebMCP needed), once the person paired the page's origin.

Opt-in only: nothing connects unless the page calls this. The tools are the WebMCP adapter's
projection of the registry (same names, descriptions, schemas, annotations, same scope and
curation options), kept current as they come and go; every call runs through the same adapter
and registry pipeline as a WebMCP call, so a consequential one waits for the person in this page's
confirmation dialog (``ConfirmationDialog(registry)``), never for the relay.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from .._core.consumer import Consumer
from .._core.registry.registry import AgentSurfaceRegistry
from ..adapters.projection import Curation
from ..adapters.relay_context import RelayModelContext
from ..adapters.relay_protocol import DEFAULT_PORT
from ..adapters.webmcp import WebMCPAdapter

if TYPE_CHECKING:
    from ..browser.relay_socket import RelaySocket

__all__ = ["RelayConnection", "connect_relay"]


class RelayConnection:
    """What ``connect_relay`` started: ``status`` (``connecting``, ``welcomed``, ``waiting``
    between attempts, ``stopped``), ``source`` (the relay's id for this tab), ``refusal``
    (the relay's last reason), and ``aclose()``."""

    def __init__(self, adapter: WebMCPAdapter, context: RelayModelContext, socket: RelaySocket) -> None:
        self.adapter = adapter
        self.context = context
        self.socket = socket

    @property
    def status(self) -> str:
        return self.socket.status

    @property
    def source(self) -> str | None:
        return self.socket.source

    @property
    def refusal(self) -> str | None:
        return self.socket.refusal

    @property
    def tool_names(self) -> list[str]:
        return self.context.tool_names

    async def aclose(self) -> None:
        self.socket.stop()
        await self.adapter.aclose()


async def connect_relay(
    registry: AgentSurfaceRegistry,
    *,
    port: int = DEFAULT_PORT,
    consumer: Consumer | None = None,
    scope: Sequence[str] | None = None,
    expose_capability: Curation | None = None,
    mode: Literal["direct", "meta"] = "direct",
) -> RelayConnection:
    """Offer ``registry``'s surface to the relay on ``127.0.0.1:port``, reconnecting with backoff
    while it is not running. The first time, the person pairs the origin in a dialog."""
    from ..browser.relay_socket import RelaySocket

    context = RelayModelContext()
    adapter = WebMCPAdapter(scope=scope, expose_capability=expose_capability, mode=mode, model_context=context)
    await adapter.start(registry=registry, consumer=consumer or Consumer("relay-agent", "webmcp"))
    socket = RelaySocket(context, f"127.0.0.1:{port}")
    socket.start()
    return RelayConnection(adapter, context, socket)
