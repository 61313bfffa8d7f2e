"""How the bridge reaches the server: the browser's ``fetch`` in the page, httpx under CPython.

A transport sends one request and returns the status, headers and (bounded) body, or raises
TransportError when nothing came back. Cancellation is the asyncio kind: the bridge cancels the
task, and the transport stops the request (httpx closes the stream; the page aborts the fetch).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from .._core import page_services
from .._core.errors import AgentSurfaceError
from .._core.records import record

if TYPE_CHECKING:
    import httpx


@record
class TransportResponse:
    status: int
    body: bytes
    headers: Mapping[str, str]  # lower-case names


class TransportError(AgentSurfaceError):
    """The request failed without an answer (network, refused connection, oversized answer)."""


class Transport(Protocol):
    async def request(
        self, method: str, url: str, *, headers: Mapping[str, str], body: bytes | None, max_response_bytes: int
    ) -> TransportResponse: ...

    async def aclose(self) -> None: ...


class HttpxTransport:
    """httpx under CPython; pass your own ``httpx.AsyncClient`` (e.g. with an ASGI transport)."""

    def __init__(self, client: httpx.AsyncClient | None = None) -> None:
        self._client = client
        self._owned = client is None

    def _get_client(self) -> httpx.AsyncClient:
        if self._client is None:
            import httpx  # the `bridge` extra; only imported when used

            self._client = httpx.AsyncClient(timeout=None)  # the bridge bounds time itself
        return self._client

    async def request(
        self, method: str, url: str, *, headers: Mapping[str, str], body: bytes | None, max_response_bytes: int
    ) -> TransportResponse:
        import httpx

        client = self._get_client()
        try:
            async with client.stream(method, url, headers=dict(headers), content=body) as response:
                received = bytearray()
                async for chunk in response.aiter_bytes():
                    received += chunk
                    if len(received) > max_response_bytes:
                        raise TransportError(f"the answer is larger than {max_response_bytes} bytes")
                return TransportResponse(
                    response.status_code, bytes(received), {k.lower(): v for k, v in response.headers.items()}
                )
        except httpx.HTTPError as exc:
            raise TransportError(f"{type(exc).__name__}: {exc}") from exc

    async def aclose(self) -> None:
        if self._owned and self._client is not None:
            await self._client.aclose()
            self._client = None


def default_transport() -> Transport:
    """The page's transport (the browser's ``fetch``) where the page layer injected one, httpx elsewhere."""
    make = page_services.page_transport
    if make is not None:
        made: Transport = make()
        return made
    if sys.platform == "emscripten":
        raise TransportError(
            "BackendBridge in the page needs the browser layer: import agentsurface.page (or "
            "agentsurface.browser) first, or pass transport="
        )
    return HttpxTransport()
