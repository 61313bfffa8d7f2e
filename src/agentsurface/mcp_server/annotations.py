"""The page's tool annotations as MCP tool annotations.

The page reports what the contract says (``agentsurface.adapters.projection.annotations_for``):
``readOnlyHint`` for observations and read/server-query effects, ``consequentialHint`` for
destructive, external or confirmation-required capabilities, ``untrustedContentHint`` for declared
untrusted output. MCP's four hints are mapped from those and nothing else:

- ``readOnlyHint``: as the page says.
- ``destructiveHint``: ``consequentialHint`` of a tool that is not read-only (MCP's default for a
  non-read-only tool is destructive; a local-state action without the hint is said not to be).
- ``idempotentHint``: true for read-only tools only (reading twice changes nothing); otherwise left
  out, since the page does not say.
- ``openWorldHint``: ``untrustedContentHint`` (the tool brings in content from outside the app);
  false otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp import types


def mcp_annotations(page: Mapping[str, Any], title: str | None = None) -> types.ToolAnnotations:
    read_only = page.get("readOnlyHint") is True
    hints: dict[str, Any] = {
        "readOnlyHint": read_only,
        "openWorldHint": page.get("untrustedContentHint") is True,
    }
    if read_only:
        hints["idempotentHint"] = True
    else:
        hints["destructiveHint"] = page.get("consequentialHint") is True
    if title:
        hints["title"] = title
    return types.ToolAnnotations(**hints)
