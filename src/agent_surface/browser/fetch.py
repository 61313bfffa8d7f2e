"""The bridge's transport in the page: ``pyodide.http.pyfetch`` with an AbortController.

When the bridge cancels a call (the registry's signal aborted, or its own deadline passed) the
awaiting task is cancelled and the fetch is aborted, so the browser stops the request instead
of leaving it running. Same-origin credentials (the user's session cookie) go with the call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import js
from pyodide.ffi import JsException
from pyodide.http import pyfetch

from ..bridge.transport import TransportError, TransportResponse


class PyfetchTransport:
    def __init__(self, *, credentials: str = "same-origin") -> None:
        self._credentials = credentials

    async def request(
        self, method: str, url: str, *, headers: Mapping[str, str], body: bytes | None, max_response_bytes: int
    ) -> TransportResponse:
        controller = js.AbortController.new()
        try:
            response = await pyfetch(
                url,
                method=method,
                headers=dict(headers),
                body=None if body is None else body.decode("utf-8"),
                credentials=self._credentials,
                signal=controller.signal,
            )
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > max_response_bytes:
                controller.abort()
                raise TransportError(f"the answer is larger than {max_response_bytes} bytes")
            data = await response.bytes()
        except asyncio.CancelledError:
            controller.abort()
            raise
        except (JsException, OSError) as exc:  # network failure, CORS, aborted fetch
            raise TransportError(f"{type(exc).__name__}: {exc}") from exc
        if len(data) > max_response_bytes:
            raise TransportError(f"the answer is larger than {max_response_bytes} bytes")
        return TransportResponse(response.status, data, {k.lower(): v for k, v in response.headers.items()})

    async def aclose(self) -> None:
        return None
