"""Policies: objects with hooks deciding visibility (discovery), invocability (authorize/invoke),
confirmation, and seeing settlement.

Discovery is synchronous and side-effect free; the most restrictive vote wins across the
registry → component → capability chain (hide > disable > expose).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from ..records import record

if TYPE_CHECKING:
    from ..audit import Settled
    from ..consumer import Consumer
    from ..jsonvalue import JsonValue

Outcome: TypeAlias = Literal["expose", "disable", "hide"]
PolicyScope: TypeAlias = Literal["registry", "component", "capability"]
#: What ``on_authorize``/``on_invoke`` return: a hook is a plain method (None) or ``async def``
#: (its coroutine), as the author writes it; the pipeline awaits only the second.
HookResult: TypeAlias = Awaitable[None] | None
_RANK: dict[str, int] = {"expose": 0, "disable": 1, "hide": 2}


@record
class Decision:
    outcome: Outcome
    reason: str | None = None


EXPOSE = Decision("expose")


@record
class PolicyContext:
    """What a policy sees. ``effective_input`` is set only for the invoke phase;
    ``environment`` is the registry's (``development``, ``production`` or ``test``)."""

    consumer: Consumer
    capability_id: str
    kind: str
    effect: str
    component_type: str
    instance_id: str
    registration_id: str
    origin: str
    host: Mapping[str, Any]
    now: Callable[[], float]
    internal: Mapping[str, Any] = field(default_factory=dict)
    effective_input: Any = None
    invocation_id: str | None = None
    environment: str | None = None


class Policy:
    """Base class: override any of the hooks. ``name`` identifies it in audit and explain."""

    name: str = "policy"

    def on_discovery(self, ctx: PolicyContext) -> Decision | Outcome | None:
        """Synchronous vote for the snapshot: expose (None), disable or hide."""
        return None

    def on_authorize(self, ctx: PolicyContext) -> HookResult:
        """Pre-input check (phase 4). Raise CapabilityFailure to refuse."""
        return None

    def on_invoke(self, ctx: PolicyContext) -> HookResult:
        """Input-aware check over the validated effective input (phase 6)."""
        return None

    def requires_confirmation(self, ctx: PolicyContext) -> bool:
        """Escalate to a required confirmation for this call (phase 6)."""
        return False

    def confirmation_summary(self, effective_input: JsonValue) -> str | None:
        """What the user is asked to approve, when this policy escalated (None: the default)."""
        return None

    def on_settled(self, ctx: PolicyContext, settled: Settled) -> None:
        """The call whose ``on_invoke`` ran here has settled (phase 10); must not raise."""
        return None

    def __repr__(self) -> str:
        return f"<Policy {self.name}>"


def as_decision(vote: Decision | Outcome | None) -> Decision:
    if vote is None:
        return EXPOSE
    if isinstance(vote, Decision):
        return vote
    if vote in _RANK:
        return Decision(vote)
    raise ValueError(f"discovery vote must be 'expose', 'disable' or 'hide', got {vote!r}")


def more_restrictive(a: Decision, b: Decision) -> Decision:
    return b if _RANK[b.outcome] > _RANK[a.outcome] else a


def evaluate_discovery(policies: Sequence[Policy], ctx: PolicyContext) -> Decision:
    """Compose votes, most restrictive wins; a throwing policy fails closed (hide)."""
    result = EXPOSE
    for policy in policies:
        try:
            decision = as_decision(policy.on_discovery(ctx))
        except Exception:
            return Decision("hide", f"policy {policy.name} failed")
        result = more_restrictive(result, decision)
        if result.outcome == "hide":
            return result
    return result
