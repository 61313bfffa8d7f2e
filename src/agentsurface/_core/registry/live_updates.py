"""Live updates of a registration: pushed ``enabled``/availability patches, and availability
flips published as ``availability-changed`` events."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import DefinitionError
from ..events import SurfaceEvent, make_event
from ..pipeline.availability import availability
from ..registrations.registration import Registration


def apply_update(
    reg: Registration, enabled: bool | None, overrides: Mapping[str, Any] | None
) -> list[SurfaceEvent] | None:
    """Apply a patch; the availability events it caused, or None if nothing changed."""
    # Parse the whole patch before touching anything: a bad entry must not leave the
    # registration half-updated (and changed without a version bump).
    if enabled is not None and not isinstance(enabled, bool):
        raise DefinitionError("INVALID_DEFINITION", f"enabled must be True or False, got {enabled!r}")
    if overrides is not None and not isinstance(overrides, Mapping):
        raise DefinitionError(
            "INVALID_DEFINITION", f"availability must be a mapping of capability to override, got {overrides!r}"
        )
    patch = [(_override_target(reg, name), _parse_override(value)) for name, value in (overrides or {}).items()]
    before = {cid: availability(reg, e)[0] for cid, e in reg.capabilities.items()}
    changed = False
    if enabled is not None and enabled != reg.enabled:
        reg.enabled = enabled
        changed = True
    for cid, parsed in patch:
        if reg.overrides.get(cid) != parsed:
            if parsed is None:
                reg.overrides.pop(cid, None)
            else:
                reg.overrides[cid] = parsed
            changed = True
    if not changed:
        return None
    events = []
    for cid, entry in reg.capabilities.items():
        now_available = availability(reg, entry)[0]
        reg.published[cid] = now_available
        if now_available != before[cid]:
            events.append(_changed(reg, cid, now_available))
    return events


def first_publication(reg: Registration) -> dict[str, bool]:
    """Availability as a fresh registration publishes it. It has no overrides yet, so only a
    ``when()`` (if any) can make a capability differ from ``enabled``."""
    enabled = reg.enabled
    return {cid: enabled and (e.when is None or availability(reg, e)[0]) for cid, e in reg.capabilities.items()}


def publish_flips(registrations: Iterable[Registration]) -> list[SurfaceEvent]:
    """Re-evaluate availability and record it; events for what flipped since last published."""
    events: list[SurfaceEvent] = []
    for reg in registrations:
        for cid, entry in reg.capabilities.items():
            available = availability(reg, entry)[0]
            if reg.published.get(cid, available) != available:
                events.append(_changed(reg, cid, available))
            reg.published[cid] = available
    return events


def _changed(reg: Registration, capability_id: str, available: bool) -> SurfaceEvent:
    return make_event(
        "availability-changed", registrationId=reg.registration_id, capabilityId=capability_id, available=available
    )


def _override_target(reg: Registration, name: object) -> str:
    """The capability id an availability override names (by capability name or full id)."""
    if isinstance(name, str):
        cid = name if ":" in name else f"view:{reg.component_type}.{name}"
        if cid in reg.capabilities:
            return cid
    raise DefinitionError("INVALID_DEFINITION", f"{name!r} is not a capability of this registration")


def _parse_override(value: Any) -> tuple[bool, str | None] | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return (value, None)
    available: object = None
    reason: object = None
    if isinstance(value, tuple) and len(value) == 2:
        available, reason = value
    elif isinstance(value, Mapping) and "available" in value:
        available, reason = value["available"], value.get("reason")
    # Strict: {"available": "no"} would otherwise read as available.
    if isinstance(available, bool) and (reason is None or isinstance(reason, str)):
        return (available, reason)
    raise DefinitionError(
        "INVALID_DEFINITION",
        f"availability override must be a bool, (bool, reason) or {{'available': ...}}, got {value!r}",
    )
