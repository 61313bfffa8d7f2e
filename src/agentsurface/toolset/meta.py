"""Meta mode (experimental): three fixed verbs with constant schemas, whatever the surface.

``surface_discover`` returns the snapshot the model plans with, ``surface_read`` runs an
observation, ``surface_act`` an action or procedure. Resolution, validation, confirmation and
staleness are the registry's, exactly as for direct tools. The verbs reach the registry through
the ``MetaHost`` protocol (the agent toolset), so this module never imports the toolset back.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from .._catalog import Target
from .._core.consumer import Consumer
from .._core.errors import ErrorPayload, RegistryClosedError, error, surface_shut_down
from .._core.ids import random_id
from .._core.jsonvalue import FrozenDict, JsonValue, freeze, thaw
from .._core.pipeline.invocation import MISSING, InvocationResult
from .._core.pointer import ROOT, json_pointer
from .._core.records import record
from .._core.registry.descriptors import ActionDescriptor, Budget, ObservationDescriptor, Snapshot
from .._core.registry.registry import AgentSurfaceRegistry
from .tools import AgentTool, Executor, ToolState


class MetaHost(Protocol):
    """What the meta verbs need from the toolset that hosts them."""

    @property
    def registry(self) -> AgentSurfaceRegistry: ...
    @property
    def consumer(self) -> Consumer: ...
    @property
    def scope(self) -> tuple[str, ...] | None: ...
    @property
    def budget(self) -> Budget | None: ...
    @property
    def development(self) -> bool: ...

    def snapshot(self) -> Snapshot: ...

    async def call(
        self,
        target: Target,
        input: Any,
        *,
        tool_call_id: str | None = None,
        invocation_id: str | None = None,
        confirmation_id: str | None = None,
    ) -> InvocationResult: ...


log = logging.getLogger("agentsurface")

_STRING = {"type": "string"}

DISCOVER_SCHEMA: FrozenDict = freeze(
    {
        "type": "object",
        "properties": {
            "scope": {
                "type": "array",
                "items": _STRING,
                "description": 'Optional component-type prefixes (e.g. ["devices.table"]) from an earlier '
                "discover result to narrow the answer. Prefixes outside what this host allows come back "
                "in scopeRejected.",
            }
        },
        "additionalProperties": False,
    }
)

READ_SCHEMA: FrozenDict = freeze(
    {
        "type": "object",
        "properties": {
            "capabilityId": {
                **_STRING,
                "description": "An observation's capabilityId, copied from discover.",
            },
            "instanceId": {**_STRING, "description": "Needed only when several components share a type."},
        },
        "required": ["capabilityId"],
        "additionalProperties": False,
    }
)

ACT_SCHEMA: FrozenDict = freeze(
    {
        "type": "object",
        "properties": {
            "capabilityId": {
                **_STRING,
                "description": "An action's capabilityId or a procedureId, copied from discover.",
            },
            "instanceId": {**_STRING, "description": "Needed only when several components share a type."},
            "input": {
                "type": "object",
                "description": "The arguments, as a JSON object matching the capability's inputSchema.",
            },
            "invocationId": {
                **_STRING,
                "description": "Reuse to retry the same call without running it twice; "
                "required when resuming after CONFIRMATION_REQUIRED.",
            },
            "confirmationId": {
                **_STRING,
                "description": "The id from CONFIRMATION_REQUIRED, once the user approved.",
            },
            "surfaceVersion": {
                **_STRING,
                "description": "The surfaceVersion you planned with. Send it for destructive or "
                "external calls so a changed surface refuses instead of executing.",
            },
        },
        "required": ["capabilityId"],
        "additionalProperties": False,
    }
)


@record
class ScopeIntersection:
    scope: tuple[str, ...] | None
    empty: bool
    rejected: tuple[str, ...]


def intersect_scope(floor: Sequence[str] | None, requested: Sequence[str] | None) -> ScopeIntersection:
    """The configured scope is a floor: a requested scope narrows it, never widens it."""
    has_floor = bool(floor)
    if not requested:
        return ScopeIntersection(tuple(floor) if has_floor and floor else None, False, ())
    if not has_floor or floor is None:
        return ScopeIntersection(tuple(requested), False, ())
    admitted: list[str] = []
    rejected: list[str] = []
    for r in requested:
        hit = False
        for f in floor:
            if r == f or r.startswith(f + "."):
                narrowed = r
            elif f.startswith(r + "."):
                narrowed = f
            else:
                continue
            hit = True
            if narrowed not in admitted:
                admitted.append(narrowed)
        if not hit and r not in rejected:
            rejected.append(r)
    if not admitted:
        return ScopeIntersection(None, True, tuple(rejected))
    return ScopeIntersection(tuple(admitted), False, tuple(rejected))


def _envelope_error(
    verb: str,
    schema: Mapping[str, Any],
    value: Any,
    exempt: tuple[str, ...] = (),
    arguments: Misplaced | None = None,
) -> ErrorPayload | None:
    """Strict verb envelope: object, known keys, required keys, string-typed fields. An unknown
    key that ``arguments`` recognises as the target's own argument is said to belong in ``input``."""
    if value is MISSING or value is None:
        value = {}
    if not isinstance(value, Mapping):
        return error(
            "INVALID_INPUT",
            f"{verb} takes a JSON object.",
            issues=[{"path": ROOT, "message": "expected an object"}],
        )
    props = schema.get("properties", {})
    issues = [_unknown(k, arguments) for k in value if k not in props]
    issues += [
        {"path": json_pointer((k,)), "message": f"missing required property {k!r}"}
        for k in schema.get("required", ())
        if k not in value
    ]
    for key, spec in props.items():
        if key in value and key not in exempt:
            item = value[key]
            if spec.get("type") == "string" and not isinstance(item, str):
                issues.append({"path": json_pointer((key,)), "message": "expected a string"})
            if spec.get("type") == "array" and not (
                isinstance(item, list) and all(isinstance(i, str) for i in item)
            ):
                issues.append({"path": json_pointer((key,)), "message": "expected an array of strings"})
    if not issues:
        return None
    return error("INVALID_INPUT", f"{verb}: {issues[0]['message']} at {issues[0]['path']}.", issues=issues)


@record
class Misplaced:
    """The argument names of the capability a ``surface_act`` call targets."""

    capability_id: str
    names: frozenset[str]


def _unknown(key: Any, arguments: Misplaced | None) -> dict[str, JsonValue]:
    path = json_pointer((str(key),))
    if arguments is not None and key in arguments.names:
        # The commonest provider slip: the capability's arguments flattened beside ``input``.
        message = f"{key!r} is an argument of {arguments.capability_id}; put it inside input"
        return {"path": path, "message": message}
    return {"path": path, "message": f"unknown property {key!r}"}


def _arguments_of(snapshot: Snapshot, request: Mapping[str, Any]) -> Misplaced | None:
    """The target's argument names, when the request names exactly one live target."""
    capability_id, instance_id = request.get("capabilityId"), request.get("instanceId")
    if not isinstance(capability_id, str) or not isinstance(instance_id, (str, type(None))):
        return None
    _registration, schema = _find(snapshot, capability_id, instance_id)
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping):
        return None
    return Misplaced(capability_id, frozenset(properties))


def _failure(
    meta_id: str, capability_id: Any, err: ErrorPayload, toolset: MetaHost, tool_call_id: str | None
) -> InvocationResult:
    return InvocationResult(
        status="error",
        invocation_id=tool_call_id or random_id("inv_", 16),
        capability_id=capability_id if isinstance(capability_id, str) and capability_id else meta_id,
        surface_version=toolset.registry.version,
        error=err,
    )


def _never_raising(meta_id: str, toolset: MetaHost, verb: Executor) -> Executor:
    """A verb that returns a result even when the registry is gone or something unexpected fails."""

    async def run(
        input: Any = MISSING, *, tool_call_id: str | None = None, confirmation_id: str | None = None
    ) -> InvocationResult:
        try:
            return await verb(input, tool_call_id=tool_call_id, confirmation_id=confirmation_id)
        except RegistryClosedError:
            err = surface_shut_down()
        except Exception:
            log.exception("%s failed", meta_id)
            err = error("EXECUTION_FAILED", "The call failed unexpectedly.")
        target = input.get("capabilityId") if isinstance(input, Mapping) else None
        return _failure(meta_id, target, err, toolset, tool_call_id)

    return run


def _find(snapshot: Snapshot, capability_id: str, instance_id: str | None) -> tuple[str | None, Any]:
    """(registration id, input schema) when exactly one live target matches; the registry
    classifies anything else (ambiguous, missing, unmounted)."""
    matches: list[tuple[str, Any]] = []
    for component in snapshot.components:
        if instance_id is not None and component.instance_id != instance_id:
            continue
        caps: list[ObservationDescriptor | ActionDescriptor] = [*component.observations, *component.actions]
        for cap in caps:
            if cap.capability_id == capability_id:
                matches.append((component.registration_id, getattr(cap, "input_schema", None)))
    for proc in snapshot.procedures:
        if proc.procedure_id == capability_id and (instance_id is None or proc.context[1] == instance_id):
            matches.append((proc.registration_id, proc.input_schema))
    return matches[0] if len(matches) == 1 else (None, None)


def _may_read(snapshot: Snapshot, capability_id: str) -> bool:
    """False for a procedure, or for an id the snapshot shows only as an action."""
    if capability_id.startswith("domain:"):
        return False
    kinds = {cap.kind for cap in snapshot.capabilities() if cap.capability_id == capability_id}
    return not kinds or "observation" in kinds


def _repair(value: Any, schema: Any) -> Any:
    """Parse a JSON-encoded object string, only when the target expects an object."""
    if not isinstance(value, str) or not isinstance(schema, Mapping) or schema.get("type") != "object":
        return MISSING
    try:
        parsed = json.loads(value)
    except ValueError:
        return MISSING
    return parsed if isinstance(parsed, dict) else MISSING


def build_meta_tools(toolset: MetaHost) -> list[AgentTool]:
    """The three verbs over ``toolset``; each answers with a result and never raises."""
    available = ToolState(True)

    async def discover(
        input: Any = MISSING, *, tool_call_id: str | None = None, confirmation_id: str | None = None
    ) -> InvocationResult:
        invalid = _envelope_error("surface_discover", DISCOVER_SCHEMA, input)
        if invalid is not None:
            return _failure("meta:surface.discover", None, invalid, toolset, tool_call_id)
        requested = None if input in (MISSING, None) else input.get("scope")
        scope = intersect_scope(toolset.scope, requested)
        snap = toolset.registry.snapshot(consumer=toolset.consumer, scope=scope.scope, budget=toolset.budget)
        payload = thaw(snap.to_json())
        if scope.empty:
            payload["components"], payload["procedures"] = [], []
            payload.pop("truncated", None)
        if scope.rejected:
            payload["scopeRejected"] = {"prefixes": list(scope.rejected)}
        return InvocationResult(
            "ok",
            tool_call_id or random_id("inv_", 16),
            "meta:surface.discover",
            snap.surface_version,
            output=payload,
        )

    async def read(
        input: Any = MISSING, *, tool_call_id: str | None = None, confirmation_id: str | None = None
    ) -> InvocationResult:
        invalid = _envelope_error("surface_read", READ_SCHEMA, input)
        req = input if isinstance(input, Mapping) else {}
        if invalid is not None:
            return _failure("meta:surface.read", req.get("capabilityId"), invalid, toolset, tool_call_id)
        snap = toolset.snapshot()
        if not _may_read(snap, req["capabilityId"]):
            # A read verb must not run an action or procedure that happens to need no input.
            refused = error(
                "INVALID_INPUT",
                f"surface_read runs observations only; call surface_act for {req['capabilityId']}.",
                issues=[
                    {
                        "path": json_pointer(("capabilityId",)),
                        "message": "not an observation; use surface_act",
                    }
                ],
            )
            return _failure("meta:surface.read", req["capabilityId"], refused, toolset, tool_call_id)
        registration_id, _schema = _find(snap, req["capabilityId"], req.get("instanceId"))
        target = Target(req["capabilityId"], registration_id, req.get("instanceId"), snap.surface_version)
        return await toolset.call(target, MISSING, tool_call_id=tool_call_id)

    async def act(
        input: Any = MISSING, *, tool_call_id: str | None = None, confirmation_id: str | None = None
    ) -> InvocationResult:
        req = input if isinstance(input, Mapping) else {}
        snap = toolset.snapshot()
        arguments = _arguments_of(snap, req)
        invalid = _envelope_error("surface_act", ACT_SCHEMA, input, exempt=("input",), arguments=arguments)
        if invalid is not None:
            return _failure("meta:surface.act", req.get("capabilityId"), invalid, toolset, tool_call_id)
        registration_id, schema = _find(snap, req["capabilityId"], req.get("instanceId"))
        value = req.get("input", MISSING)
        repaired = _repair(value, schema)
        if repaired is not MISSING:
            value = repaired
            if toolset.development:
                log.warning(
                    "surface_act got `input` for %s as a JSON-encoded string and parsed it; "
                    "the provider is not honouring the tool schema",
                    req["capabilityId"],
                )
        target = Target(
            req["capabilityId"],
            registration_id,
            req.get("instanceId"),
            req.get("surfaceVersion") or snap.surface_version,
        )
        return await toolset.call(
            target,
            value,
            tool_call_id=tool_call_id,
            invocation_id=req.get("invocationId"),
            confirmation_id=req.get("confirmationId") or confirmation_id,
        )

    return [
        AgentTool(
            "surface_discover",
            "[meta] Discover the agent surface: components, capabilities, "
            "procedures, availability and schemas.",
            DISCOVER_SCHEMA,
            available,
            "meta",
            None,
            _never_raising("meta:surface.discover", toolset, discover),
        ),
        AgentTool(
            "surface_read",
            "[meta] Run an observation by capabilityId and return its output.",
            READ_SCHEMA,
            available,
            "meta",
            None,
            _never_raising("meta:surface.read", toolset, read),
        ),
        AgentTool(
            "surface_act",
            "[meta] Run an action or procedure by capabilityId. Echo the surfaceVersion "
            "you discovered so a surface that changed under a destructive plan is refused.",
            ACT_SCHEMA,
            available,
            "meta",
            None,
            _never_raising("meta:surface.act", toolset, act),
        ),
    ]
