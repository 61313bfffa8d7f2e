"""``agentsurface mcp URL``: a page's WebMCP tools as MCP tools for any MCP client.

The bridge opens URL in a Chromium it starts itself before its own imports, so the page boots
meanwhile, and drives through Playwright over CDP (or one it attaches to with --cdp), and mirrors the page's tools one to one: same names, descriptions, input schemas, MCP
annotations mapped from the page's, ``notifications/tools/list_changed`` when the page's tools
change, calls through the page's own WebMCP client (``executeTool``) with MCP cancellation
aborting the call, results as MCP content with ``isError`` and agentsurface's typed error.
It never clicks in the page: consequential calls wait for the person's approval there.

Server-side only (extra ``[mcp]``: ``mcp``, ``playwright``); nothing the page loads imports it.
"""

from __future__ import annotations
# Nothing imported here: `agentsurface --help` reads .options without the SDK or Playwright.
