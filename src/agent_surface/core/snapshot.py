"""Snapshots: immutable, per-consumer catalogs of descriptors (never state, never handlers).

``snapshot()`` is synchronous and side-effect free: it evaluates availability (``enabled``,
pushed overrides, ``when()``) and synchronous discovery policies, and never runs ``read()``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .consumer import Consumer
from .contracts import frozen_meta
from .jsonvalue import FrozenDict, JsonValue, json_size
from .policy import EXPOSE, Decision, PolicyContext, evaluate_discovery
from .registration import CapabilityEntry, Registration

log = logging.getLogger("agent_surface")


@dataclass(frozen=True, slots=True)
class ObservationDescriptor:
    capability_id: str
    name: str
    description: str
    output_schema: FrozenDict
    available: bool
    unavailable_reason: str | None = None
    meta: FrozenDict | None = None
    untrusted_output: bool = False

    kind = "observation"
    effect = "read"
    confirmation = "never"

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {
            "capabilityId": self.capability_id,
            "name": self.name,
            "description": self.description,
            "outputSchema": self.output_schema,
            "available": self.available,
        }
        _optional(out, unavailableReason=self.unavailable_reason, meta=self.meta)
        return out


@dataclass(frozen=True, slots=True)
class ActionDescriptor:
    capability_id: str
    name: str
    description: str
    input_schema: FrozenDict
    output_schema: FrozenDict | None
    effect: str
    idempotent: bool
    reversible: bool
    confirmation: str
    available: bool
    unavailable_reason: str | None = None
    meta: FrozenDict | None = None
    untrusted_output: bool = False

    kind = "action"

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {
            "capabilityId": self.capability_id,
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
            "effect": self.effect,
            "idempotent": self.idempotent,
            "reversible": self.reversible,
            "confirmation": self.confirmation,
            "available": self.available,
        }
        _optional(
            out, outputSchema=self.output_schema, unavailableReason=self.unavailable_reason, meta=self.meta
        )
        return out


@dataclass(frozen=True, slots=True)
class BoundField:
    path: str
    locked: bool
    source: str = "ui-state"

    def to_json(self) -> dict[str, JsonValue]:
        return {"path": self.path, "locked": self.locked, "source": self.source}


@dataclass(frozen=True, slots=True)
class ProcedureDescriptor:
    procedure_id: str
    description: str
    input_schema: FrozenDict
    output_schema: FrozenDict | None
    effect: str
    idempotent: bool
    confirmation: str
    available: bool
    bound_fields: tuple[BoundField, ...]
    registration_id: str
    context: tuple[str, str]
    unavailable_reason: str | None = None
    contextual_note: str | None = None
    meta: FrozenDict | None = None
    untrusted_output: bool = False

    kind = "procedure"

    @property
    def capability_id(self) -> str:
        return self.procedure_id

    @property
    def name(self) -> str:
        return self.procedure_id.split(":", 1)[1]

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {
            "procedureId": self.procedure_id,
            "description": self.description,
            "inputSchema": self.input_schema,
            "effect": self.effect,
            "confirmation": self.confirmation,
            "available": self.available,
            "boundFields": [b.to_json() for b in self.bound_fields],
            "registrationId": self.registration_id,
            "context": {"type": self.context[0], "instanceId": self.context[1]},
        }
        _optional(
            out,
            outputSchema=self.output_schema,
            unavailableReason=self.unavailable_reason,
            contextualNote=self.contextual_note,
            meta=self.meta,
        )
        return out


@dataclass(frozen=True, slots=True)
class ComponentDescriptor:
    type: str
    instance_id: str
    registration_id: str
    description: str
    priority: int
    observations: tuple[ObservationDescriptor, ...]
    actions: tuple[ActionDescriptor, ...]
    parent: tuple[str, str] | None = None
    meta: FrozenDict | None = None

    @property
    def capabilities(self) -> tuple[ObservationDescriptor | ActionDescriptor, ...]:
        """Observations then actions."""
        return (*self.observations, *self.actions)

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {
            "type": self.type,
            "instanceId": self.instance_id,
            "registrationId": self.registration_id,
            "description": self.description,
            "observations": [o.to_json() for o in self.observations],
            "actions": [a.to_json() for a in self.actions],
        }
        if self.parent is not None:
            out["parent"] = {"type": self.parent[0], "instanceId": self.parent[1]}
        _optional(out, meta=self.meta)
        return out


@dataclass(frozen=True, slots=True)
class Budget:
    max_components: int | None = None
    max_bytes: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_components", "max_bytes"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise ValueError(f"budget {name} must be a non-negative integer, got {value!r}")


@dataclass(frozen=True, slots=True)
class Snapshot:
    surface_id: str
    surface_version: str
    captured_at: str
    components: tuple[ComponentDescriptor, ...]
    procedures: tuple[ProcedureDescriptor, ...]
    route: FrozenDict | None = None
    truncated: FrozenDict | None = None
    scope_rejected: FrozenDict | None = None

    def capabilities(self) -> Iterable[ObservationDescriptor | ActionDescriptor | ProcedureDescriptor]:
        for component in self.components:
            yield from component.observations
            yield from component.actions
        yield from self.procedures

    def find(
        self, capability_id: str
    ) -> list[ObservationDescriptor | ActionDescriptor | ProcedureDescriptor]:
        return [c for c in self.capabilities() if c.capability_id == capability_id]

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {
            "surfaceId": self.surface_id,
            "surfaceVersion": self.surface_version,
            "capturedAt": self.captured_at,
            "components": [c.to_json() for c in self.components],
            "procedures": [p.to_json() for p in self.procedures],
        }
        _optional(out, route=self.route, truncated=self.truncated, scopeRejected=self.scope_rejected)
        return out


def _optional(out: dict[str, JsonValue], **values: Any) -> None:
    for key, value in values.items():
        if value is not None:
            out[key] = value


def iso(epoch_seconds: float) -> str:
    return (
        datetime.fromtimestamp(epoch_seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    )


# --------------------------------------------------------------------------- availability


def _reason(value: str | Callable[[], str] | None, default: str) -> str:
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
    override = reg.overrides.get(entry.capability_id) or reg.overrides.get(entry.name)
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
) -> PolicyContext:
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
        environment=reg.environment,
    )


def discovery(
    reg: Registration,
    entry: CapabilityEntry,
    consumer: Consumer,
    host: Callable[[], Mapping[str, Any]],
    now: Callable[[], float],
) -> Decision:
    if not entry.policies:
        return EXPOSE
    ctx = policy_context(reg, entry, consumer, host(), now)
    return evaluate_discovery([p for p, _ in entry.policies], ctx)


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


# --------------------------------------------------------------------------- building


def build_static(reg: Registration) -> None:
    """Precompute the structural (availability-independent) descriptor parts once."""
    contract = reg.binding.contract
    static: dict[str, Any] = {}
    for cid, entry in reg.capabilities.items():
        if entry.kind == "observation":
            obs = contract.observations[entry.name]
            static[cid] = (obs.description, obs.output.json_schema, obs.meta, obs.untrusted_output)
        elif entry.kind == "action":
            act = contract.actions[entry.name]
            static[cid] = (
                act.description,
                act.input.json_schema,
                None if act.output is None else act.output.json_schema,
                act.meta,
                act.untrusted_output,
            )
        else:
            ref = entry.reference
            assert ref is not None
            pc = ref.contract
            bound = tuple(BoundField(f, f in ref.locked_fields) for f in ref.bound_fields)
            static[cid] = (
                pc.description,
                ref.agent_schema,
                None if pc.output is None else pc.output.json_schema,
                pc.meta,
                pc.untrusted_output,
                bound,
            )
    reg.static = static


def describe_registration(
    reg: Registration,
    consumer: Consumer,
    host: Callable[[], Mapping[str, Any]],
    now: Callable[[], float],
    include_unavailable: bool,
) -> tuple[ComponentDescriptor | None, list[ProcedureDescriptor]]:
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
        note = _note(entry.reference.describe, cid) if entry.reference is not None else None
        key = (available, reason, note)
        hit = cache.get(cid)
        if hit is not None and hit[0] == key:
            descriptor = hit[1]  # frozen, so sharing it between snapshots is safe
        else:
            descriptor = _describe_capability(reg, cid, entry, available, reason, note)
            cache[cid] = (key, descriptor)
        if entry.kind == "observation":
            observations.append(descriptor)
        elif entry.kind == "action":
            actions.append(descriptor)
        else:
            procedures.append(descriptor)
    if not observations and not actions:
        return None, procedures
    members = (tuple(observations), tuple(actions))
    hit = cache.get("")  # "" is never a capability id
    if hit is not None and _same(hit[0][0], members[0]) and _same(hit[0][1], members[1]):
        return hit[1], procedures
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
    return component, procedures


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def _describe_capability(
    reg: Registration,
    cid: str,
    entry: CapabilityEntry,
    available: bool,
    reason: str | None,
    note: str | None,
) -> Any:
    static = reg.static[cid]
    if entry.kind == "observation":
        return ObservationDescriptor(cid, entry.name, static[0], static[1], available, reason, static[2], static[3])
    if entry.kind == "action":
        act = reg.binding.contract.actions[entry.name]
        return ActionDescriptor(
            cid,
            entry.name,
            static[0],
            static[1],
            static[2],
            act.effect,
            bool(act.idempotent),
            bool(act.reversible),
            str(act.confirmation),
            available,
            reason,
            static[3],
            static[4],
        )
    ref = entry.reference
    assert ref is not None
    return ProcedureDescriptor(
        procedure_id=cid,
        description=static[0],
        input_schema=static[1],
        output_schema=static[2],
        effect=ref.contract.effect,
        idempotent=bool(ref.contract.idempotent),
        confirmation=ref.confirmation,
        available=available,
        bound_fields=static[5],
        registration_id=reg.registration_id,
        context=reg.key,
        unavailable_reason=reason,
        contextual_note=note,
        meta=static[3],
        untrusted_output=static[4],
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
