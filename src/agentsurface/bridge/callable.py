"""Per-caller tools: the page offers its agent only the procedures the server says this caller
may call (``GET <base>/.well-known/agentsurface/callable``), so a person without a permission is
never offered a tool, nor asked to approve a call, that the server would refuse anyway.

    await bridge.load_callable()
    registry = AgentSurfaceRegistry(authority=..., policies=[bridge.callable_policy()])

It only decides what the agent is offered: the server still checks every call.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import CapabilityFailure, Policy
from .._core.errors import error
from .._core.policies.base import Outcome, PolicyContext


class CallablePolicy(Policy):
    """Hides a procedure the bridge's caller may not call (``callable()``: the bridge's
    ``callable``), and refuses it with NOT_AUTHORIZED in the page; views, and every procedure
    while ``callable()`` is None (before ``load_callable()``), are left alone."""

    name = "backend-callable"

    def __init__(self, callable: Callable[[], frozenset[str] | None]) -> None:
        self._callable = callable

    def _allowed(self, ctx: PolicyContext) -> bool:
        allowed = self._callable()
        return ctx.kind != "procedure" or allowed is None or ctx.capability_id in allowed

    def on_discovery(self, ctx: PolicyContext) -> Outcome | None:
        return None if self._allowed(ctx) else "hide"

    def on_authorize(self, ctx: PolicyContext) -> None:
        if not self._allowed(ctx):
            raise CapabilityFailure(
                error("NOT_AUTHORIZED", "This call is not permitted for the current user.", origin="client")
            )
