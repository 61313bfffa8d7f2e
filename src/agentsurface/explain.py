"""Developer projection: why the snapshot looks the way it does, hidden capabilities included.

Deliberately not exported from ``agentsurface``: its output discloses exactly what ``hide``
withholds from agents. Never hand it to an adapter, a toolset or a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._core.consumer import ANONYMOUS, Consumer
from ._core.errors import RegistryClosedError
from ._core.pipeline.availability import availability, policy_context
from ._core.policies.base import EXPOSE, Decision, as_decision, more_restrictive
from ._core.records import record
from ._core.registry.registry import AgentSurfaceRegistry
from ._core.registry.snapshot import in_scope

__all__ = ["CapabilityExplanation", "PolicyVote", "explain_surface"]


@record
class PolicyVote:
    name: str
    scope: str
    phases: tuple[str, ...]
    discovery: Decision | None
    threw: bool = False
    confirmation_escalation: bool = False


@record
class CapabilityExplanation:
    capability_id: str
    kind: str
    plane: str
    description: str
    registration_id: str
    component: tuple[str, str]
    outcome: str
    reason: str | None
    policies: tuple[PolicyVote, ...]
    available: bool
    unavailable_reason: str | None


def _phases(policy: Any) -> tuple[str, ...]:
    from ._core.policies.base import Policy

    out = []
    for hook, phase in (("on_discovery", "discovery"), ("on_authorize", "authorize"), ("on_invoke", "invoke")):
        if getattr(type(policy), hook, None) is not getattr(Policy, hook):
            out.append(phase)
    return tuple(out)


def _as_snapshot(composed: Decision, available: bool, reason: str | None) -> tuple[str, str | None]:
    """The outcome ``snapshot()`` produced for this capability (AS-EXPLAIN-003): hidden by
    policy, disabled by state or policy (state's reason first, as the snapshot reports it),
    or exposed. Per-policy votes and ``available`` keep authority and state apart."""
    if composed.outcome == "hide":
        return "hide", composed.reason
    if not available:
        return "disable", reason
    if composed.outcome == "disable":
        return "disable", composed.reason or "disabled by policy"
    return "expose", None


def explain_surface(
    registry: AgentSurfaceRegistry, *, consumer: Consumer | None = None, scope: Sequence[str] | None = None
) -> list[CapabilityExplanation]:
    """Every capability the registry holds for ``consumer``, with each policy's vote."""
    if not isinstance(registry, AgentSurfaceRegistry):
        raise TypeError("explain_surface needs an AgentSurfaceRegistry")
    if registry.closed:
        raise RegistryClosedError("explain_surface on a closed registry")
    who = consumer or ANONYMOUS
    host = registry.host_context()
    out: list[CapabilityExplanation] = []
    for reg in registry.registrations():
        if not in_scope(reg.component_type, scope):
            continue
        for cid, entry in reg.capabilities.items():
            ctx = policy_context(reg, entry, who, host, registry.now)
            votes: list[PolicyVote] = []
            composed = EXPOSE
            for policy, where in entry.policies:
                threw = False
                try:
                    vote = as_decision(policy.on_discovery(ctx))
                except Exception:
                    threw, vote = True, Decision("hide", f"policy {policy.name} failed")
                try:
                    escalates = bool(policy.requires_confirmation(ctx))
                except Exception:
                    escalates = True
                votes.append(PolicyVote(policy.name, where, _phases(policy), vote, threw, escalates))
                composed = more_restrictive(composed, vote)
            available, reason = availability(reg, entry)
            outcome, outcome_reason = _as_snapshot(composed, available, reason)
            out.append(CapabilityExplanation(
                capability_id=cid,
                kind=entry.kind,
                plane=cid.split(":", 1)[0],
                description=entry.description,
                registration_id=reg.registration_id,
                component=reg.key,
                outcome=outcome,
                reason=outcome_reason,
                policies=tuple(votes),
                available=available,
                unavailable_reason=reason,
            ))
    return out
