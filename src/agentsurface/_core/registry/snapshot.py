"""Snapshots: building the per-consumer catalog of a registry's live registrations.

``snapshot()`` is synchronous and side-effect free: it evaluates availability (``enabled``,
pushed overrides, ``when()``) and synchronous discovery policies, and never runs ``read()``.
Descriptors are cached per registration and rebuilt only when what they show changes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..consumer import Consumer
from ..contracts import frozen_meta
from ..jsonvalue import FrozenDict, freeze, json_size
from ..pipeline.availability import availability, discovery
from ..registrations.entries import ActionEntry, CapabilityEntry, ObservationEntry, ProcedureEntry
from ..registrations.registration import Registration
from .descriptors import (
    ActionDescriptor,
    BoundField,
    Budget,
    ComponentDescriptor,
    ObservationDescriptor,
    ProcedureDescriptor,
    Snapshot,
)

__all__ = [
    "ActionDescriptor",
    "BoundField",
    "Budget",
    "ComponentDescriptor",
    "ObservationDescriptor",
    "ProcedureDescriptor",
    "Snapshot",
    "apply_budget",
    "build_snapshot",
    "describe_registration",
    "in_scope",
    "normalize_scope",
    "sort_key",
]

log = logging.getLogger("agentsurface")

CapabilityDescriptor = ObservationDescriptor | ActionDescriptor | ProcedureDescriptor


def normalize_scope(scope: object) -> tuple[str, ...] | None:
    """Check a snapshot scope once: a list of component-type prefixes (or None for all).

    A bare string is refused: iterating it would test single characters as prefixes.
    """
    if scope is None:
        return None
    if isinstance(scope, str) or not isinstance(scope, (list, tuple, set, frozenset)):
        raise TypeError(f"scope must be a list of component-type prefixes, got {scope!r}")
    for prefix in scope:
        if not isinstance(prefix, str) or not prefix:
            raise TypeError(f"scope prefixes must be non-empty strings, got {prefix!r}")
    return tuple(scope)


def in_scope(component_type: str, scope: Sequence[str] | None) -> bool:
    if scope is None:
        return True
    return any(component_type == p or component_type.startswith(p + ".") for p in scope)


# Where a registration's whole description is cached among its descriptors ("" holds the
# component's; capability ids contain ":").
_WHOLE = "*"
Described = tuple[ComponentDescriptor | None, tuple[ProcedureDescriptor, ...]]


def describe_registration(
    reg: Registration,
    consumer: Consumer,
    host: Callable[[], Mapping[str, Any]],
    now: Callable[[], float],
    include_unavailable: bool,
) -> Described:
    """The component descriptor (None when it shows nothing) and procedure descriptors of
    ``reg`` for ``consumer``."""
    if reg.fixed is None:
        reg.fixed = all(_fixed(entry) for entry in reg.capabilities.values())
    if not reg.fixed or reg.overrides:
        return _describe(reg, consumer, host, now, include_unavailable)
    # Nothing the consumer, the clock or the host can vary: the last description stands while
    # the registration's status and enabled flag do.
    key = (reg.status, reg.enabled, include_unavailable)
    hit = reg.descriptors.get(_WHOLE)
    if hit is not None and hit[0] == key:
        described: Described = hit[1]
        return described
    described = _describe(reg, consumer, host, now, include_unavailable)
    reg.descriptors[_WHOLE] = (key, described)
    return described


def _fixed(entry: CapabilityEntry) -> bool:
    note = entry.reference.describe if isinstance(entry, ProcedureEntry) else None
    return not entry.policies and entry.when is None and note is None


def _describe(
    reg: Registration,
    consumer: Consumer,
    host: Callable[[], Mapping[str, Any]],
    now: Callable[[], float],
    include_unavailable: bool,
) -> Described:
    observations: list[ObservationDescriptor] = []
    actions: list[ActionDescriptor] = []
    procedures: list[ProcedureDescriptor] = []
    cache = reg.descriptors
    for cid, entry in reg.capabilities.items():
        decision = discovery(reg, entry, consumer, host, now)
        if decision.outcome == "hide":
            continue
        available, reason = availability(reg, entry)
        if available and decision.outcome == "disable":
            available, reason = False, decision.reason or "disabled by policy"
        if not available and not include_unavailable:
            continue
        note = _note(entry.reference.describe, cid) if isinstance(entry, ProcedureEntry) else None
        key = (available, reason, note)
        hit = cache.get(cid)
        if hit is not None and hit[0] == key:
            descriptor = hit[1]  # frozen, so sharing it between snapshots is safe
        else:
            descriptor = _describe_capability(reg, entry, available, reason, note)
            cache[cid] = (key, descriptor)
        match descriptor:
            case ObservationDescriptor():
                observations.append(descriptor)
            case ActionDescriptor():
                actions.append(descriptor)
            case ProcedureDescriptor():
                procedures.append(descriptor)
    if not observations and not actions:
        return None, tuple(procedures)
    members = (tuple(observations), tuple(actions))
    hit = cache.get("")  # "" is never a capability id
    if hit is not None and _same(hit[0][0], members[0]) and _same(hit[0][1], members[1]):
        return hit[1], tuple(procedures)
    contract = reg.binding.contract
    component = ComponentDescriptor(
        type=contract.type,
        instance_id=reg.instance_id,
        registration_id=reg.registration_id,
        description=contract.description,
        priority=contract.priority,
        observations=members[0],
        actions=members[1],
        parent=reg.binding.parent,
        meta=frozen_meta(contract.meta),
    )
    cache[""] = (members, component)
    return component, tuple(procedures)


def build_snapshot(
    *,
    surface_id: str,
    surface_version: str,
    captured_at: str,
    registrations: Iterable[Registration],
    consumer: Consumer,
    host_context: Callable[[], Mapping[str, Any]],
    now: Callable[[], float],
    scope: Sequence[str] | None,
    include_unavailable: bool,
    budget: Budget | None,
    route: Callable[[], Mapping[str, Any] | None] | None,
) -> Snapshot:
    """The catalog of ``registrations`` (in snapshot order) for ``consumer``."""
    components: list[ComponentDescriptor] = []
    procedures: list[ProcedureDescriptor] = []
    host_cache: list[Mapping[str, Any]] = []

    def host() -> Mapping[str, Any]:  # read once, and only if a policy asks
        if not host_cache:
            host_cache.append(host_context())
        return host_cache[0]

    for reg in registrations:
        if not in_scope(reg.component_type, scope):
            continue
        component, procs = describe_registration(reg, consumer, host, now, include_unavailable)
        if component is not None:
            components.append(component)
        procedures.extend(procs)
    procedures.sort(key=lambda p: (p.procedure_id, p.context))
    components, procedures, dropped = apply_budget(components, procedures, budget)
    return Snapshot(
        surface_id=surface_id,
        surface_version=surface_version,
        captured_at=captured_at,
        components=tuple(components),
        procedures=tuple(procedures),
        route=_route(route),
        truncated=FrozenDict({"droppedComponents": dropped}) if dropped else None,
    )


def _route(route: Callable[[], Mapping[str, Any] | None] | None) -> FrozenDict | None:
    if route is None:
        return None
    try:
        info = route()
    except Exception:
        log.exception("route() raised; the snapshot has no route")
        return None
    return freeze(dict(info)) if info else None


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def _schema_json(schema: Any) -> Any:
    return None if schema is None else schema.json_schema


def _describe_capability(
    reg: Registration,
    entry: CapabilityEntry,
    available: bool,
    reason: str | None,
    note: str | None,
) -> CapabilityDescriptor:
    cid = entry.capability_id
    meta = frozen_meta(entry.contract.meta)
    match entry:
        case ObservationEntry(contract=obs):
            return ObservationDescriptor(
                cid, entry.name, obs.description, obs.output.json_schema, available, reason, meta,
                obs.untrusted_output,
            )
        case ActionEntry(contract=act):
            return ActionDescriptor(
                cid,
                entry.name,
                act.description,
                act.input.json_schema,
                _schema_json(act.output),
                act.effect,
                entry.idempotent,
                bool(act.reversible),
                entry.confirmation,
                available,
                reason,
                meta,
                act.untrusted_output,
            )
        case ProcedureEntry(reference=ref):
            pc = ref.contract
            return ProcedureDescriptor(
                procedure_id=cid,
                description=pc.description,
                input_schema=ref.agent_schema,
                output_schema=_schema_json(pc.output),
                effect=pc.effect,
                idempotent=entry.idempotent,
                confirmation=ref.confirmation,
                available=available,
                bound_fields=tuple(BoundField(f, f in ref.locked_fields) for f in ref.bound_fields),
                registration_id=reg.registration_id,
                context=reg.key,
                unavailable_reason=reason,
                contextual_note=note,
                meta=meta,
                untrusted_output=pc.untrusted_output,
            )


def _note(describe: Callable[[], str] | None, cid: str) -> str | None:
    if describe is None:
        return None
    try:
        note = describe()
    except Exception:
        log.warning("describe() of %s raised; omitting its note", cid, exc_info=True)
        return None
    return note if isinstance(note, str) and note else None


def sort_key(reg: Registration) -> tuple[int, str, str]:
    return reg.order


def apply_budget(
    components: list[ComponentDescriptor],
    procedures: list[ProcedureDescriptor],
    budget: Budget | None,
) -> tuple[list[ComponentDescriptor], list[ProcedureDescriptor], int]:
    """Drop lowest-priority components past the budget; report how many were dropped."""
    if budget is None or (budget.max_components is None and budget.max_bytes is None):
        return components, procedures, 0
    kept: list[ComponentDescriptor] = []
    used = 0
    for component in components:
        if budget.max_components is not None and len(kept) >= budget.max_components:
            break
        size = json_size(component.to_json())
        if budget.max_bytes is not None and used + size > budget.max_bytes:
            break
        kept.append(component)
        used += size
    dropped = len(components) - len(kept)
    if not dropped:
        return components, procedures, 0
    live = {c.registration_id for c in kept}
    dropped_ids = {c.registration_id for c in components} - live
    kept_procs = [p for p in procedures if p.registration_id not in dropped_ids]
    return kept, kept_procs, dropped
