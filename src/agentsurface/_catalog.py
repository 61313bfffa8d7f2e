"""One snapshot, projected as a catalog of tool entries: the part the embedded toolset and the
WebMCP adapter share (wire-name entries, call targets, stable description prefixes, schemas).

Internal: ``Target`` and ``describe_prefix`` are public through ``agentsurface.toolset``.
"""

from __future__ import annotations

from collections import Counter, OrderedDict

from ._core.ids import MAX_ID_LENGTH
from ._core.jsonvalue import FrozenDict, freeze
from ._core.records import record
from ._core.registry.descriptors import (
    ActionDescriptor,
    ComponentDescriptor,
    ObservationDescriptor,
    ProcedureDescriptor,
    Snapshot,
)
from ._core.schemas.schema import EMPTY_OBJECT_SCHEMA
from .wire_names import WireNameEntry

Descriptor = ObservationDescriptor | ActionDescriptor | ProcedureDescriptor
# Observations take no input; providers still want an object schema for every tool.
EMPTY_INPUT: FrozenDict = freeze(dict(EMPTY_OBJECT_SCHEMA))


@record
class Target:
    """Where a tool call goes: the capability and the live target it was discovered on."""

    capability_id: str
    registration_id: str | None = None
    instance_id: str | None = None
    surface_version: str | None = None


def describe_prefix(plane: str, effect: str, confirmation: str) -> str:
    """Stable properties only (plane, effect, confirmation), never availability."""
    parts = [plane, effect]
    if confirmation == "required":
        parts.append("requires confirmation")
    return "[" + " · ".join(parts) + "]"


@record
class CatalogEntry:
    """One capability of a snapshot as a tool: its naming entry, target and descriptor."""

    wire: WireNameEntry
    target: Target
    descriptor: Descriptor
    component_type: str | None  # None for procedures (their context is in the descriptor)
    input_schema: FrozenDict
    prefix: str  # describe_prefix of the descriptor: stable, so computed with the entry
    # Computed with the entry too (cached with it, every toolset of the catalog reads them):
    description: str  # the prefix, then the descriptor's description
    state_key: tuple[bool, str | None, str | None]  # availability, reason, live note


# Recent projections, by what they were projected from: the surface and its version (targets
# carry it) and the identities of the snapshot's descriptors. Snapshots reuse a registration's
# frozen descriptors while nothing it shows changes, so an unchanged catalog is found here
# whatever consumer or toolset asks. The value holds the descriptors, so the ids in its key
# cannot be reused by other objects while it is cached.
_Key = tuple[str, str, tuple[int, ...], tuple[int, ...]]
_Held = tuple[tuple[ComponentDescriptor, ...], tuple[ProcedureDescriptor, ...]]
_RECENT: OrderedDict[_Key, tuple[_Held, tuple[CatalogEntry, ...]]] = OrderedDict()
_RECENT_LIMIT = 16


def catalog_entries(snapshot: Snapshot) -> list[CatalogEntry]:
    """Every capability of ``snapshot``, in snapshot order. A component type mounted more than
    once, or a procedure referenced more than once, is instance-qualified in its wire name."""
    held = (tuple(snapshot.components), tuple(snapshot.procedures))
    key = (snapshot.surface_id, snapshot.surface_version, tuple(map(id, held[0])), tuple(map(id, held[1])))
    hit = _RECENT.get(key)
    if hit is not None:
        _RECENT.move_to_end(key)
        return list(hit[1])
    entries = _project(snapshot)
    _RECENT[key] = (held, tuple(entries))
    if len(_RECENT) > _RECENT_LIMIT:
        _RECENT.popitem(last=False)
    return entries


def _entry(wire: WireNameEntry, target: Target, d: Descriptor, component_type: str | None, schema: FrozenDict) -> CatalogEntry:
    prefix = describe_prefix(d.capability_id.split(":", 1)[0], d.effect, d.confirmation)
    note = d.contextual_note if isinstance(d, ProcedureDescriptor) else None
    return CatalogEntry(
        wire,
        target,
        d,
        component_type,
        schema,
        prefix,
        f"{prefix} {d.description}",
        (d.available, d.unavailable_reason, note),
    )


def _project(snapshot: Snapshot) -> list[CatalogEntry]:
    version = snapshot.surface_version
    type_counts = Counter(c.type for c in snapshot.components)
    entries: list[CatalogEntry] = []
    for comp in snapshot.components:
        repeated = type_counts[comp.type] > 1
        instance = comp.instance_id if repeated else None
        for cap in comp.capabilities:
            schema = EMPTY_INPUT if isinstance(cap, ObservationDescriptor) else cap.input_schema
            entries.append(
                _entry(
                    WireNameEntry(cap.capability_id, instance, comp.registration_id, repeated),
                    Target(cap.capability_id, comp.registration_id, instance, version),
                    cap,
                    comp.type,
                    schema,
                )
            )
    proc_counts = Counter(p.procedure_id for p in snapshot.procedures)
    shared_instances = Counter((p.procedure_id, p.context[1]) for p in snapshot.procedures)
    for proc in snapshot.procedures:
        repeated = proc_counts[proc.procedure_id] > 1
        instance = None
        if repeated:
            component_type, instance = proc.context
            if shared_instances[(proc.procedure_id, instance)] > 1:
                # Components of different types with the same instance id reference it: name
                # both by type and instance, or only the registration order would tell them apart.
                instance = f"{component_type.replace('.', '_')}_{instance}"[:MAX_ID_LENGTH]
        entries.append(
            _entry(
                WireNameEntry(proc.procedure_id, instance, proc.registration_id, repeated),
                Target(proc.procedure_id, proc.registration_id, None, version),
                proc,
                None,
                proc.input_schema,
            )
        )
    return entries
