"""The bridge's transport in the page: the browser's ``fetch`` with an AbortController.

When the bridge cancels a call (the registry's signal aborted, or its own deadline passed) the
awaiting task is cancelled and the fetch is aborted, so the browser stops the request instead
of leaving it running. Same-origin credentials (the user's session cookie) go with the call.

``fetch`` is called directly, not through ``pyodide.http``: that module imports ``urllib.parse``
(and ``ipaddress``) for its XMLHttpRequest client, which the page would compile from source on
its way to the first tool (about 0.3 s in Chromium) for nothing a call needs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import js
from pyodide.ffi import JsException

from ..bridge.transport import TransportError, TransportResponse
from .convert import to_js_object


def _headers(response: Any) -> dict[str, str]:
    """A fetch Response's headers as a dict of lower-case names (as the Headers object has them)."""
    entries = js.Object.fromEntries(response.headers).to_py()
    return {str(name).lower(): str(value) for name, value in entries.items()}


class PyfetchTransport:
    def __init__(self, *, credentials: str = "same-origin") -> None:
        self._credentials = credentials

    async def request(
        self, method: str, url: str, *, headers: Mapping[str, str], body: bytes | None, max_response_bytes: int
    ) -> TransportResponse:
        controller = js.AbortController.new()
        init: dict[str, Any] = {
            "method": method,
            "headers": dict(headers),
            "credentials": self._credentials,
            "signal": controller.signal,
        }
        if body is not None:
            init["body"] = body.decode("utf-8")
        try:
            response = await js.fetch(url, to_js_object(init))
            declared = response.headers.get("content-length")
            if isinstance(declared, str) and declared.isdigit() and int(declared) > max_response_bytes:
                controller.abort()
                raise TransportError(f"the answer is larger than {max_response_bytes} bytes")
            data = (await response.arrayBuffer()).to_bytes()
        except asyncio.CancelledError:
            controller.abort()
            raise
        except (JsException, OSError) as exc:  # network failure, CORS, aborted fetch
            raise TransportError(f"{type(exc).__name__}: {exc}") from exc
        if len(data) > max_response_bytes:
            raise TransportError(f"the answer is larger than {max_response_bytes} bytes")
        return TransportResponse(int(response.status), data, _headers(response))

    async def aclose(self) -> None:
        return None
