"""``agentsurface mcp --relay``: tabs of the person's own browser offer their tools to MCP
clients through a loopback WebSocket, with no CDP and no browser launched.

- ``pairing``: which origins the person paired (a per-origin secret, stored 0600), the codes of
  pairings under way and their rate limit;
- ``sources``: the connected tabs, their tools under MCP names, and the calls each one owes;
- ``listener``: the WebSocket listener and each connection's handshake (``relay_protocol``);
- ``link``: the relay as the bridge's page link (the MCP side is ``mcp_server.bridge``'s).
"""

from __future__ import annotations
