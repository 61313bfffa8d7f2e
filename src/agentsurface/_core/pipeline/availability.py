"""Phase 3, availability, and the checks it shares with snapshots: whether a capability can be used now.

Availability is state (``enabled``, pushed overrides, ``when()``); discovery is the composed
vote of the capability's policy chain. Both are synchronous and side-effect free.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from ..consumer import Consumer
from ..policies.base import EXPOSE, Decision, PolicyContext, evaluate_discovery
from ..registrations.entries import CapabilityEntry, Reason
from ..registrations.registration import Registration
from . import failures
from .call import Call
from .failures import PhaseRefusal

log = logging.getLogger("agentsurface")


def _reason(value: Reason, default: str) -> str:
    if value is None:
        return default
    if callable(value):
        try:
            text = value()
        except Exception:
            return default
        return text if isinstance(text, str) and text else default
    return value


def availability(reg: Registration, entry: CapabilityEntry) -> tuple[bool, str | None]:
    """State-based availability (not policy): enabled, pushed overrides, ``when()``."""
    if reg.status != "active":
        return False, "component-unmounted"
    if not reg.enabled:
        return False, "component-disabled"
    override = reg.overrides.get(entry.capability_id)  # keyed by id (live_updates)
    if override is not None and not override[0]:
        return False, override[1] or _reason(entry.unavailable_reason, "not available right now")
    when = entry.when
    if when is not None:
        try:
            ok = when()
        except Exception:
            log.warning("when() of %s raised; treating it as unavailable", entry.capability_id, exc_info=True)
            return False, "when-error"
        if not ok:
            return False, _reason(entry.unavailable_reason, "not available right now")
    return True, None


def policy_context(
    reg: Registration,
    entry: CapabilityEntry,
    consumer: Consumer,
    host: Mapping[str, Any],
    now: Callable[[], float],
    invocation_id: str | None = None,
) -> PolicyContext:
    """What the policies of ``entry`` see, before any agent input."""
    return PolicyContext(
        consumer=consumer,
        capability_id=entry.capability_id,
        kind=entry.kind,
        effect=entry.effect,
        component_type=reg.component_type,
        instance_id=reg.instance_id,
        registration_id=reg.registration_id,
        origin=reg.origin,
        host=host,
        now=now,
        internal=reg.binding.internal,
        invocation_id=invocation_id,
        environment=reg.environment,
    )


def discovery(
    reg: Registration,
    entry: CapabilityEntry,
    consumer: Consumer,
    host: Callable[[], Mapping[str, Any]],
    now: Callable[[], float],
) -> Decision:
    """The composed discovery vote; ``host`` is called only if there is a policy to ask."""
    if not entry.policies:
        return EXPOSE
    ctx = policy_context(reg, entry, consumer, host(), now)
    return evaluate_discovery([p for p, _ in entry.policies], ctx)


def check(call: Call) -> None:
    """The phase: enabled, pushed overrides, ``when()``, and a discovery ``disable``."""
    target = call.target
    ok, reason = availability(target.reg, target.entry)
    if ok and target.discovery.outcome == "disable":
        ok, reason = False, target.discovery.reason or "disabled by policy"
    if not ok:
        raise PhaseRefusal(failures.not_available(target.entry.capability_id, reason or "not available right now"))
