"""The catalog's value types: descriptors per capability and component, and the snapshot.

Immutable projections for one consumer (never state, never handlers), with their wire form.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..jsonvalue import FrozenDict, JsonValue
from ..records import record


@record
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


@record
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


@record
class BoundField:
    path: str
    locked: bool
    source: str = "ui-state"

    def to_json(self) -> dict[str, JsonValue]:
        return {"path": self.path, "locked": self.locked, "source": self.source}


@record
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


@record
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


@record
class Budget:
    max_components: int | None = None
    max_bytes: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_components", "max_bytes"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise ValueError(f"budget {name} must be a non-negative integer, got {value!r}")


@record
class Snapshot:
    surface_id: str
    surface_version: str
    captured_at: str
    components: tuple[ComponentDescriptor, ...]
    procedures: tuple[ProcedureDescriptor, ...]
    route: FrozenDict | None = None
    truncated: FrozenDict | None = None

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
        _optional(out, route=self.route, truncated=self.truncated)
        return out


def _optional(out: dict[str, JsonValue], **values: Any) -> None:
    for key, value in values.items():
        if value is not None:
            out[key] = value
