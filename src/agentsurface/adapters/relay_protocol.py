"""The relay's wire protocol, shared by the page (``agentsurface.page.relay``) and the relay in
``agentsurface mcp --relay``: JSON text frames over a loopback WebSocket.

One connection, in order::

    relay → page   {"type": "hello", "protocol", "relay": "127.0.0.1:PORT", "nonce": Nr}
    page  → relay  {"type": "auth", "nonce": Np, "proof": P}        a paired tab
                   {"type": "pair"}                                  a tab with no secret yet
    relay → page   {"type": "welcome", "source", "proof": R}          authenticated
                   {"type": "pairing", "relay", "attempts"}           the relay printed a code
                   {"type": "refused", "reason", "message"}           and the relay closes
    page  → relay  {"type": "pair-code", "code"} | {"type": "pair-cancel"}
    relay → page   {"type": "paired", "secret"}  (then closes: the page connects again and
                   authenticates) | {"type": "pair-retry", "attempts"} | refused

    once welcomed:
    page  → relay  {"type": "tools", "tools": [...]}                  the whole listing, on change
    relay → page   {"type": "call", "id", "name", "input"} | {"type": "cancel", "id"}
    page  → relay  {"type": "result", "id", "text"} | {"type": "result", "id", "rejected", "message"}

The proofs are HMAC-SHA256 under the origin's secret over both nonces, the origin the browser
put in the handshake's ``Origin`` header, the relay's address and the side that speaks: the
secret never crosses the socket after pairing, a proof made for one origin, relay or connection
is worth nothing on another, and the page checks ``R`` so a program posing as the relay on the
port learns nothing it can replay.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping
from typing import Any, Literal

PROTOCOL = "agentsurface-relay/1"
DEFAULT_PORT = 47821
# What a tab may send: a listing of this many tools, each frame at most this long.
MAX_TOOLS = 512
MAX_FRAME_BYTES = 1 << 20
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
CODE_DIGITS = 6

Side = Literal["page", "relay"]


def new_nonce() -> str:
    return secrets.token_hex(16)


def new_secret() -> str:
    return secrets.token_hex(32)


def new_code() -> str:
    return "".join(secrets.choice("0123456789") for _ in range(CODE_DIGITS))


def normalize_code(typed: str) -> str:
    """What the person typed, without the spaces and dashes a printed code is read with."""
    return re.sub(r"[\s-]", "", typed)


def proof(secret: str, side: Side, origin: str, relay: str, relay_nonce: str, page_nonce: str) -> str:
    """One side's answer to the other's challenge (see the module docstring)."""
    message = "\n".join((PROTOCOL, side, origin, relay, relay_nonce, page_nonce)).encode()
    return hmac.new(bytes.fromhex(secret), message, hashlib.sha256).hexdigest()


def proof_matches(expected: str, given: object) -> bool:
    return isinstance(given, str) and hmac.compare_digest(expected.encode(), given.encode())


def is_secret(value: object) -> bool:
    return isinstance(value, str) and re.fullmatch(r"[0-9a-f]{64}", value) is not None


def is_nonce(value: object) -> bool:
    return isinstance(value, str) and re.fullmatch(r"[0-9a-f]{32}", value) is not None


def checked_tool(raw: object) -> dict[str, Any] | None:
    """One tool of a tab's listing in the shape the relay serves, or None when malformed."""
    if not isinstance(raw, Mapping):
        return None
    name, description = raw.get("name"), raw.get("description", "")
    schema, annotations, title = raw.get("inputSchema"), raw.get("annotations") or {}, raw.get("title")
    if not isinstance(name, str) or not TOOL_NAME.match(name) or not isinstance(description, str):
        return None
    if schema is not None and not isinstance(schema, Mapping):
        return None
    if not isinstance(annotations, Mapping) or not all(isinstance(v, bool) for v in annotations.values()):
        return None
    if title is not None and not isinstance(title, str):
        return None
    return {
        "name": name,
        "title": title,
        "description": description,
        "inputSchema": dict(schema) if schema is not None else None,
        "annotations": {str(k): v for k, v in annotations.items()},
    }
