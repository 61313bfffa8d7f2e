"""Phase 2, resolution: the capability, instance and registration a call targets, and staleness.

A capability hidden from this consumer is indistinguishable from an absent one, except that a
gate that hid it may refuse with its own typed error (NOT_AUTHENTICATED, NOT_AUTHORIZED).
"""

from __future__ import annotations

import inspect
import logging

from ..contracts.kinds import VERSION_GUARDED_EFFECTS
from ..errors import CapabilityFailure
from ..jsonvalue import JsonValue
from ..policies.base import EXPOSE, Decision, PolicyContext, as_decision, evaluate_discovery
from ..registrations.registration import Registration
from . import failures
from .availability import policy_context
from .call import Call, CallTarget, Wait
from .failures import PhaseRefusal

log = logging.getLogger("agentsurface")


def resolve(call: Call) -> Wait:
    registry = call.pipeline.registry
    req = call.request
    cid = req.capability_id
    if not isinstance(cid, str) or not cid:
        raise PhaseRefusal(failures.no_capability_id())
    if req.surface_id is not None and req.surface_id != registry.surface_id:
        raise PhaseRefusal(failures.page_reloaded())
    holders = registry._holders
    instance_id = req.instance_id
    # The common call: one holder (on the instance it names, if it names one), without
    # policies, and it is the registration the call names, if it names one. The full search
    # below would pick it too.
    sole = holders.sole(cid) if instance_id is None else holders.sole_at(cid, instance_id)
    if (
        sole is not None
        and req.registration_id in (None, sole.registration_id)
        and not sole.capabilities[cid].policies
        and instance_id in (None, sole.binding.instance_id)
    ):
        _target(call, sole, EXPOSE, None)
        return None
    host = call.host
    consumer = call.consumer
    visible: list[tuple[Registration, Decision, PolicyContext | None]] = []
    hidden: list[Registration] = []
    # The registry indexes holders by capability, already in snapshot order (AMBIGUOUS_INSTANCE
    # lists them in that order): no scan or sort of every live registration per call.
    # A call naming only an instance can concern only that instance's holders (_pick and the
    # gate refusal filter the same way); one naming a registration sees them all.
    instance = req.instance_id if req.registration_id is None else None
    for reg in registry._holders.holding(cid):
        if instance is not None and reg.binding.instance_id != instance:
            continue
        held = reg.capabilities[cid]
        if not held.policies:
            visible.append((reg, EXPOSE, None))
            continue
        # One policy context per holder serves its discovery vote and, if picked, the call.
        ctx = policy_context(reg, held, consumer, host, registry.now, call.invocation_id)
        decision = evaluate_discovery([p for p, _ in held.policies], ctx)
        if decision.outcome == "hide":
            hidden.append(reg)
        else:
            visible.append((reg, decision, ctx))
    try:
        reg, decision, policy = _pick(call, visible)
    except PhaseRefusal as refusal:
        if refusal.err.code == "CAPABILITY_NOT_FOUND" and hidden:
            return _gate_refusal(call, hidden, refusal)
        raise
    _target(call, reg, decision, policy)
    return None


def _target(call: Call, reg: Registration, decision: Decision, policy: PolicyContext | None) -> None:
    """Fix the call's target, unless the surface it was listed at has changed under an effect
    that must not run on a stale view."""
    req = call.request
    entry = reg.capabilities[req.capability_id]
    if (
        req.surface_version is not None
        and req.surface_version != str(call.pipeline.registry.revision)
        and entry.effect in VERSION_GUARDED_EFFECTS
    ):
        raise PhaseRefusal(failures.surface_version_mismatch(reg.registration_id))
    call.resolved = call.target = CallTarget(reg, entry, policy, decision)


async def _gate_refusal(call: Call, hidden: list[Registration], not_found: PhaseRefusal) -> None:
    """Let a gate that hid the target refuse with its own typed error.

    Built-in gates (authenticated, has_permission, tenant_boundary) hide at discovery and
    answer NOT_AUTHENTICATED / NOT_AUTHORIZED at invocation (docs/06). The policies that voted
    ``hide`` are asked through ``on_authorize``, without agent input; if none refuses, the call
    stays CAPABILITY_NOT_FOUND (hidden is indistinguishable from absent).
    """
    req = call.request
    registry = call.pipeline.registry
    for reg in hidden:
        if req.registration_id not in (None, reg.registration_id):
            continue
        if req.instance_id not in (None, reg.instance_id):
            continue
        entry = reg.capabilities[req.capability_id]
        ctx = policy_context(reg, entry, call.consumer, call.host, registry.now, call.invocation_id)
        for policy, _scope in entry.policies:
            try:
                if as_decision(policy.on_discovery(ctx)).outcome != "hide":
                    continue
                outcome = policy.on_authorize(ctx)
                if inspect.isawaitable(outcome):
                    await outcome
            except CapabilityFailure as exc:
                raise PhaseRefusal(exc.error) from None
            except Exception:
                log.warning("policy %s failed while refusing a hidden call", policy.name, exc_info=True)
        break
    raise not_found


Visible = tuple[Registration, Decision, "PolicyContext | None"]


def _pick(call: Call, visible: list[Visible]) -> Visible:
    req = call.request
    registry = call.pipeline.registry
    if req.registration_id is not None:
        for picked in visible:
            reg = picked[0]
            if reg.registration_id == req.registration_id:
                if req.instance_id is not None and req.instance_id != reg.instance_id:
                    raise PhaseRefusal(failures.not_found(req.capability_id))
                return picked
        tomb = registry.tombstone(req.registration_id)
        same_instance = [
            r
            for r, _, _ in visible
            if req.instance_id in (None, r.instance_id)
            and (tomb is None or (r.component_type, r.instance_id) == (tomb.component_type, tomb.instance_id))
        ]
        if tomb is not None and len(same_instance) == 1:
            raise PhaseRefusal(failures.registration_replaced(same_instance[0].registration_id))
        if tomb is not None:
            raise PhaseRefusal(failures.unmounted())
        if len(same_instance) == 1:
            raise PhaseRefusal(failures.registration_unknown(same_instance[0].registration_id))
        raise PhaseRefusal(failures.not_found(req.capability_id))
    candidates = (
        visible if req.instance_id is None else [v for v in visible if v[0].instance_id == req.instance_id]
    )
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        if registry._tombstone_holding(req.capability_id, req.instance_id) is not None:
            raise PhaseRefusal(failures.unmounted())
        raise PhaseRefusal(failures.not_found(req.capability_id))
    raise PhaseRefusal(failures.ambiguous([_instance(req.capability_id, reg) for reg, _, _ in candidates]))


def _instance(capability_id: str, reg: Registration) -> JsonValue:
    item: dict[str, JsonValue] = {"instanceId": reg.instance_id, "registrationId": reg.registration_id}
    if capability_id.startswith("domain:"):
        item["context"] = {"type": reg.component_type, "instanceId": reg.instance_id}
    else:
        item["description"] = reg.binding.contract.description
    return item
