"""Arguments that are not a JSON object never reach the SDK's request parsing (which would
answer a bare JSON-RPC error), and arguments larger than ``MAX_ARGUMENT_BYTES`` never reach the
page (a tab on the relay, or one over CDP, would parse and validate all of it first): the bridge
answers both as a tool result with agentsurface's INVALID_INPUT, like any other input the tool
refuses. The bridge's server runs every session behind this guard, over stdio and over HTTP
alike, whichever way it reaches the page."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import types
from mcp.shared.message import SessionMessage

from ..server.config import ServerLimits
from .errors import arguments_too_large, invalid_arguments
from .results import error_result

_KINDS = {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
# As much as a procedure server takes in one request body (ServerLimits.max_body_bytes): every way
# to a page or a server has the same bound.
MAX_ARGUMENT_BYTES = ServerLimits().max_body_bytes


def refusal(message: SessionMessage) -> SessionMessage | None:
    """The answer to a tools/call whose arguments are not an object, or None to pass it on."""
    root = message.message.root
    if not isinstance(root, types.JSONRPCRequest) or root.method != "tools/call":
        return None
    params: Any = root.params
    if not isinstance(params, dict) or "arguments" not in params:
        return None
    arguments = params["arguments"]
    if arguments is None:
        return None
    if isinstance(arguments, dict):
        size = len(json.dumps(arguments, ensure_ascii=False, separators=(",", ":")).encode())
        if size <= MAX_ARGUMENT_BYTES:
            return None
        refused = arguments_too_large(size, MAX_ARGUMENT_BYTES)
    else:
        refused = invalid_arguments(_KINDS.get(type(arguments), type(arguments).__name__))
    result = error_result(refused).model_dump(by_alias=True, mode="json", exclude_none=True)
    response = types.JSONRPCResponse(jsonrpc="2.0", id=root.id, result=result)
    return SessionMessage(types.JSONRPCMessage(response))


async def guard(
    incoming: MemoryObjectReceiveStream[SessionMessage | Exception],
    to_server: MemoryObjectSendStream[SessionMessage | Exception],
    outgoing: MemoryObjectSendStream[SessionMessage],
) -> None:
    """Pump the transport's messages to the server, answering refused calls directly."""
    async with incoming, to_server:
        async for message in incoming:
            answer = refusal(message) if isinstance(message, SessionMessage) else None
            if answer is None:
                await to_server.send(message)
            else:
                with (
                    anyio.CancelScope(shield=True),
                    contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError),
                ):
                    await outgoing.send(answer)  # a session that already ended has no one to tell
