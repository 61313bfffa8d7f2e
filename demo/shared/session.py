"""The app's own read at start, ``session.describe``: who the caller is (user, role, tenant, and
the devices procedures they may call). Served by the server (``demo.server.procedures``) like
every procedure: same authentication, rate limit and audit, no route of its own; the page calls
it by its id (``values.SESSION_DESCRIBE``), without importing this module (or pydantic).

It is the page's, never the agent's: this module is kept apart from ``contracts.py`` and is not
imported by ``demo/page/surface.py``, so the reviewed contract (``contract.json``, the agent's
ceiling) does not declare it and no component can offer it as a tool.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from agentsurface import ProcedureContract

from .values import SESSION_DESCRIBE


class SessionInput(BaseModel):
    """Nothing: the session is the caller's, named by their credentials."""

    model_config = ConfigDict(extra="forbid")  # a caller cannot ask for someone else's session


class SessionUser(BaseModel):
    id: str
    name: str
    role: Literal["viewer", "operator", "admin"]


class SessionOutput(BaseModel):
    user: SessionUser
    tenant: str
    tenantName: str
    allowedProcedures: list[str]


SESSION = ProcedureContract(
    id=SESSION_DESCRIBE,
    description="Who is calling: the user, their role and tenant, and the procedures they may call.",
    effect="server-query",
    input=SessionInput,
    output=SessionOutput,
)

__all__ = ["SESSION", "SessionInput", "SessionOutput", "SessionUser"]
