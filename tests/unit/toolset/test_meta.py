"""Meta mode: three fixed verbs over the same registry pipeline as direct tools.

Requirements: AS-META-001/002/006 and AS-ADAPTER-005 (scope floor), AS-META-003 (budget marker),
AS-META-004 and AS-ADAPTER-004 (same resolution, confirmation and staleness as direct mode),
AS-META-005 (constant tool block), AS-META-007 (strict verb envelopes), AS-META-008 (string input
repaired only for object schemas).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from agentsurface import Invocation
from agentsurface._core.pipeline.invocation import InvocationResult
from agentsurface.lowlevel import ActionContract, Budget, ComponentContract
from agentsurface.toolset import AgentToolset
from agentsurface.toolset.meta import intersect_scope

from .helpers import (
    DevicesState,
    EventLog,
    InvokeSpy,
    bind_devices,
    details,
    devices_contract,
    devices_surface,
    disable_contract,
    error_code,
    make_registry,
    output_of,
    settle,
    tool,
    toolset_for,
    until_pending,
)

VERBS = ["surface_discover", "surface_read", "surface_act"]
SELECT_ID = "view:devices.table.selectRows"
READ_ID = "view:devices.table.readState"


def meta(registry: Any, **options: Any) -> AgentToolset:
    return toolset_for(registry, mode="meta", **options)


async def call(toolset: AgentToolset, verb: str, args: Any, call_id: str | None = None) -> InvocationResult:
    """Run one verb; a call that never settles (say, an unexpected confirmation wait) fails."""
    result: InvocationResult = await settle(
        asyncio.ensure_future(tool(toolset, verb).execute(args, tool_call_id=call_id))
    )
    return result


def types_of(result: InvocationResult) -> list[str]:
    return [c["type"] for c in output_of(result)["components"]]


def rejected_of(result: InvocationResult) -> list[str] | None:
    marker = output_of(result).get("scopeRejected")
    return None if marker is None else list(marker["prefixes"])


def block(toolset: AgentToolset) -> str:
    return json.dumps([t.definition() for t in toolset.tools()], sort_keys=True, separators=(",", ":"))


def disabled_count(capability_id: str, value: Any, ctx: Any) -> dict[str, Any]:
    return {"disabled": len(value["deviceIds"])}


def two_instances(*extra: Any) -> tuple[Any, DevicesState, DevicesState]:
    registry = make_registry([devices_contract(), disable_contract(), *extra], procedure_executor=disabled_count)
    a, b = DevicesState(["a1"]), DevicesState(["b1"])
    registry.register(bind_devices(devices_contract(), a, "a", procedure=disable_contract()))
    registry.register(bind_devices(devices_contract(), b, "b", procedure=disable_contract()))
    return registry, a, b


# --------------------------------------------------------------------------- the verbs


def test_meta_mode_exposes_exactly_three_verbs() -> None:
    toolset = meta(devices_surface().registry)
    tools = toolset.tools()
    assert [t.name for t in tools] == VERBS
    assert all(t.state.available and t.state.note is None for t in tools)
    assert all(t.description.startswith("[meta] ") for t in tools)
    assert toolset.wire_name_map() == {}


async def test_the_verbs_discover_read_and_act() -> None:
    surface = devices_surface()
    toolset = meta(surface.registry)
    discovered = await call(toolset, "surface_discover", {}, "d")
    assert types_of(discovered) == ["devices.table"]
    assert output_of(discovered)["surfaceVersion"] == surface.registry.version
    assert discovered.capability_id == "meta:surface.discover"

    act = await call(toolset, "surface_act", {"capabilityId": SELECT_ID, "input": {"ids": ["d1"]}}, "act")
    assert act.ok and act.invocation_id == "act" and act.capability_id == SELECT_ID
    read = await call(toolset, "surface_read", {"capabilityId": READ_ID}, "read")
    assert read.ok and read.output == {"selectedIds": ["d1"]}


# --------------------------------------------------------------------------- AS-META-005


def test_AS_META_005_the_tool_block_does_not_grow_with_the_catalog() -> None:
    one = make_registry([devices_contract()])
    one.register(bind_devices(devices_contract(), DevicesState(), "w0"))
    many = make_registry([devices_contract()])
    for i in range(200):
        many.register(bind_devices(devices_contract(), DevicesState(), f"w{i}"))
    assert len(many.snapshot().components) == 200
    small, large = block(meta(one)), block(meta(many))
    assert len(small.encode()) == len(large.encode())
    assert small == large
    # Direct mode over the same catalogs grows linearly: the comparison above can fail.
    assert len(block(toolset_for(many))) > 100 * len(block(toolset_for(one)))


def test_AS_META_005_the_tool_block_is_byte_stable_across_mounts_and_toolsets() -> None:
    surface = devices_surface()
    toolset = meta(surface.registry)
    before = block(toolset)
    handle = surface.registry.register(bind_devices(devices_contract("aux.panel"), DevicesState()))
    surface.handle.update(enabled=False)
    assert block(toolset) == before
    handle.close()
    assert block(toolset) == before
    assert block(meta(make_registry([devices_contract()]), topology="remote")) == before


def test_AS_META_005_meta_subscribers_are_never_notified() -> None:
    surface = devices_surface()
    toolset = meta(surface.registry)
    seen: list[Any] = []
    toolset.subscribe(seen.append)
    surface.registry.register(bind_devices(devices_contract("aux.panel"), DevicesState())).close()
    surface.handle.update(enabled=False)
    assert seen == []


# --------------------------------------------------------------------------- AS-META-007


class _Guarded:
    """A devices surface whose handlers, registry invocations and pipeline events are watched."""

    def __init__(self) -> None:
        self.surface = devices_surface(selected=["d1"])
        self.spy = InvokeSpy(self.surface.registry)
        self.events = EventLog(self.surface.registry)
        self.toolset = meta(self.surface.registry)

    def untouched(self) -> None:
        assert self.spy.requests == []
        assert self.events.of("invocation-started") == []
        assert self.surface.state.calls == []
        assert self.surface.server.calls == []


def issue_paths(result: InvocationResult) -> list[str]:
    assert error_code(result) == "INVALID_INPUT", result
    assert result.error is not None and result.error.retry == "with-changes"
    return [i["path"] for i in details(result)["issues"]]


@pytest.mark.parametrize(
    ("verb", "args", "paths", "identity"),
    [
        ("surface_discover", {"limit": 5}, ["/limit"], "meta:surface.discover"),
        ("surface_discover", {"scope": "devices"}, ["/scope"], "meta:surface.discover"),
        ("surface_discover", {"scope": ["devices", 3]}, ["/scope"], "meta:surface.discover"),
        ("surface_discover", ["devices"], ["/"], "meta:surface.discover"),
        ("surface_read", {}, ["/capabilityId"], "meta:surface.read"),
        ("surface_read", {"capabilityId": 42}, ["/capabilityId"], "meta:surface.read"),
        ("surface_read", {"capabilityId": READ_ID, "input": {}}, ["/input"], READ_ID),
        ("surface_read", {"capabilityId": READ_ID, "instanceId": 7}, ["/instanceId"], READ_ID),
        ("surface_act", None, ["/capabilityId"], "meta:surface.act"),
        ("surface_act", {}, ["/capabilityId"], "meta:surface.act"),
        ("surface_act", [], ["/"], "meta:surface.act"),
        ("surface_act", '{"capabilityId": "x"}', ["/"], "meta:surface.act"),
        (
            "surface_act",
            {"capabilityId": SELECT_ID, "input": {"ids": ["d1"]}, "mode": "add"},
            ["/mode"],
            SELECT_ID,
        ),
        ("surface_act", {"capabilityId": SELECT_ID, "ids": ["d1"]}, ["/ids"], SELECT_ID),
        ("surface_act", {"capabilityId": SELECT_ID, "invocationId": 1}, ["/invocationId"], SELECT_ID),
        ("surface_act", {"capabilityId": SELECT_ID, "confirmationId": ["c"]}, ["/confirmationId"], SELECT_ID),
        ("surface_act", {"capabilityId": SELECT_ID, "surfaceVersion": 3}, ["/surfaceVersion"], SELECT_ID),
        ("surface_act", {"input": {"ids": ["d1"]}}, ["/capabilityId"], "meta:surface.act"),
    ],
)
async def test_AS_META_007_verb_envelopes_are_checked_before_the_registry(
    verb: str, args: Any, paths: list[str], identity: str
) -> None:
    guarded = _Guarded()
    result = await call(guarded.toolset, verb, args, "call_env")
    assert issue_paths(result) == paths
    assert result.capability_id == identity
    assert result.invocation_id == "call_env"
    assert result.surface_version == guarded.surface.registry.version
    guarded.untouched()


async def test_AS_META_007_every_envelope_issue_is_reported() -> None:
    guarded = _Guarded()
    result = await call(guarded.toolset, "surface_act", {"extra": 1, "instanceId": 2}, "c")
    assert sorted(issue_paths(result)) == ["/capabilityId", "/extra", "/instanceId"]
    guarded.untouched()


async def test_AS_META_007_null_is_an_empty_discover_and_missing_arguments_too() -> None:
    toolset = meta(devices_surface().registry)
    assert types_of(await call(toolset, "surface_discover", None)) == ["devices.table"]
    assert types_of(await tool(toolset, "surface_discover").execute()) == ["devices.table"]


async def test_AS_META_007_the_act_input_is_left_to_the_capability_validator() -> None:
    guarded = _Guarded()
    result = await call(guarded.toolset, "surface_act", {"capabilityId": SELECT_ID, "input": 5}, "c")
    assert error_code(result) == "INVALID_INPUT"
    # The registry classified it: the pipeline started, and the handler never ran.
    assert len(guarded.spy.requests) == 1
    assert guarded.surface.state.calls == []


# --------------------------------------------------------------------------- AS-META-008


async def test_AS_META_008_a_json_string_is_repaired_for_an_object_schema(
    caplog: pytest.LogCaptureFixture,
) -> None:
    surface = devices_surface(environment="development")
    toolset = meta(surface.registry)
    with caplog.at_level(logging.WARNING, logger="agentsurface"):
        result = await call(
            toolset, "surface_act", {"capabilityId": SELECT_ID, "input": '{"ids": ["d1", "d2"]}'}, "c"
        )
    assert result.ok
    assert surface.state.selected == ["d1", "d2"]
    warnings = [r.getMessage() for r in caplog.records if "JSON-encoded" in r.getMessage()]
    assert len(warnings) == 1 and SELECT_ID in warnings[0]


async def test_AS_META_008_the_repair_is_silent_outside_development(caplog: pytest.LogCaptureFixture) -> None:
    surface = devices_surface(environment="production")
    with caplog.at_level(logging.WARNING, logger="agentsurface"):
        result = await call(
            meta(surface.registry), "surface_act", {"capabilityId": SELECT_ID, "input": '{"ids": ["d1"]}'}
        )
    assert result.ok and surface.state.selected == ["d1"]
    assert not [r for r in caplog.records if "JSON-encoded" in r.getMessage()]


async def test_AS_META_008_a_string_schema_receives_the_string_unparsed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    notes = ComponentContract(
        type="notes.editor",
        description="A note being edited",
        actions={"setBody": ActionContract("Replace the note body", input={"type": "string"})},
    )
    registry = make_registry([notes], environment="development")
    received: list[Any] = []
    registry.register(notes.bind(actions={"setBody": lambda value, ctx: received.append(value)}))
    body = '{"ids": ["d1"]}'  # a JSON object is a perfectly good note body
    with caplog.at_level(logging.WARNING, logger="agentsurface"):
        result = await call(
            meta(registry), "surface_act", {"capabilityId": "view:notes.editor.setBody", "input": body}
        )
    assert result.ok, result
    assert received == [body]
    assert not [r for r in caplog.records if "JSON-encoded" in r.getMessage()]


@pytest.mark.parametrize("text", ["not json at all", '["d1"]', "42", '"quoted"', "{broken"])
async def test_AS_META_008_strings_that_are_not_objects_reach_the_validator_untouched(text: str) -> None:
    surface = devices_surface()
    spy = InvokeSpy(surface.registry)
    result = await call(meta(surface.registry), "surface_act", {"capabilityId": SELECT_ID, "input": text})
    assert error_code(result) == "INVALID_INPUT"
    assert [r.input for r in spy.requests] == [text]
    assert surface.state.calls == []


async def test_AS_META_008_no_repair_when_the_target_is_not_resolvable() -> None:
    registry, _a, _b = two_instances()
    spy = InvokeSpy(registry)
    result = await call(meta(registry), "surface_act", {"capabilityId": SELECT_ID, "input": '{"ids": ["x"]}'})
    assert error_code(result) == "AMBIGUOUS_INSTANCE"
    assert [r.input for r in spy.requests] == ['{"ids": ["x"]}']


# --------------------------------------------------------------------------- scope floor


def test_intersect_scope_narrows_and_never_widens() -> None:
    both = intersect_scope(["devices"], ["devices.table", "billing", "billing"])
    assert (both.scope, both.empty, both.rejected) == (("devices.table",), False, ("billing",))
    broad = intersect_scope(["devices.table"], ["devices"])
    assert (broad.scope, broad.empty, broad.rejected) == (("devices.table",), False, ())
    disjoint = intersect_scope(["devices"], ["billing", "devicesx"])
    assert (disjoint.scope, disjoint.empty, disjoint.rejected) == (None, True, ("billing", "devicesx"))
    assert intersect_scope(["devices"], []).scope == ("devices",)
    assert intersect_scope(["devices"], None).scope == ("devices",)
    assert intersect_scope(None, ["billing"]).scope == ("billing",)
    assert intersect_scope(None, None).scope is None
    assert intersect_scope([], ["billing"]).rejected == ()


def scoped_surface() -> Any:
    surface = devices_surface()
    surface.registry.register(bind_devices(devices_contract("aux.panel"), DevicesState()))
    return surface


async def test_AS_META_001_a_model_scope_narrows_within_the_floor() -> None:
    toolset = meta(scoped_surface().registry, scope=["devices"])
    assert types_of(await call(toolset, "surface_discover", {})) == ["devices.table"]
    assert types_of(await call(toolset, "surface_discover", {"scope": []})) == ["devices.table"]
    assert types_of(await call(toolset, "surface_discover", {"scope": ["devices.table"]})) == [
        "devices.table"
    ]
    assert types_of(await call(toolset, "surface_discover", {"scope": ["devices.map"]})) == []


@pytest.mark.parametrize(
    "request_scope", [[], ["aux"], ["aux", "billing"], ["aux.panel"], ["devices", "aux"]]
)
async def test_AS_META_001_AS_ADAPTER_005_a_model_scope_never_widens_the_floor(
    request_scope: list[str],
) -> None:
    toolset = meta(scoped_surface().registry, scope=["billing"])
    result = await call(toolset, "surface_discover", {"scope": request_scope})
    assert types_of(result) == []
    assert output_of(result)["procedures"] == []


async def test_AS_ADAPTER_005_a_floor_narrower_than_the_request_wins() -> None:
    toolset = meta(scoped_surface().registry, scope=["devices.table"])
    result = await call(toolset, "surface_discover", {"scope": ["devices", "aux"]})
    assert types_of(result) == ["devices.table"]
    assert rejected_of(result) == ["aux"]


async def test_AS_META_002_a_disjoint_request_is_empty_not_the_floor() -> None:
    toolset = meta(scoped_surface().registry, scope=["devices"])
    result = await call(toolset, "surface_discover", {"scope": ["aux"]})
    assert types_of(result) == []
    assert output_of(result)["procedures"] == []
    assert types_of(await call(toolset, "surface_discover", {"scope": ["nothing.here"]})) == []
    # The floor still serves the next request.
    assert types_of(await call(toolset, "surface_discover", {"scope": ["devices"]})) == ["devices.table"]


async def test_AS_META_006_refused_prefixes_are_marked() -> None:
    toolset = meta(scoped_surface().registry, scope=["devices"])
    refused = await call(toolset, "surface_discover", {"scope": ["aux"]})
    assert rejected_of(refused) == ["aux"]
    partial = await call(toolset, "surface_discover", {"scope": ["devices.table", "aux", "aux"]})
    assert types_of(partial) == ["devices.table"]
    assert rejected_of(partial) == ["aux"]


async def test_AS_META_006_honoured_requests_and_empty_surfaces_carry_no_marker() -> None:
    empty = meta(make_registry([devices_contract()]), scope=["devices"])
    nothing = await call(empty, "surface_discover", {"scope": ["devices.table"]})
    assert types_of(nothing) == [] and rejected_of(nothing) is None

    floored = meta(scoped_surface().registry, scope=["devices"])
    assert rejected_of(await call(floored, "surface_discover", {})) is None
    assert rejected_of(await call(floored, "surface_discover", {"scope": ["devices.table"]})) is None
    unfloored = meta(scoped_surface().registry)
    free = await call(unfloored, "surface_discover", {"scope": ["billing"]})
    assert types_of(free) == [] and rejected_of(free) is None
    assert types_of(await call(unfloored, "surface_discover", {"scope": ["aux"]})) == ["aux.panel"]


async def test_AS_META_006_a_refused_scope_does_not_report_budget_truncation() -> None:
    registry, _a, _b = two_instances()
    toolset = meta(registry, scope=["devices"], budget=Budget(max_components=1))
    result = await call(toolset, "surface_discover", {"scope": ["billing"]})
    payload = output_of(result)
    assert payload["components"] == [] and "truncated" not in payload
    assert rejected_of(result) == ["billing"]


async def test_AS_ADAPTER_005_scope_limits_discovery_not_execution() -> None:
    surface = scoped_surface()
    toolset = meta(surface.registry, scope=["aux"])
    act = await call(toolset, "surface_act", {"capabilityId": SELECT_ID, "input": {"ids": ["d1"]}})
    assert act.ok and surface.state.selected == ["d1"]
    # Direct mode is the stronger boundary: nothing outside the floor has a tool.
    assert all(t.name.startswith("view_aux__") for t in toolset_for(surface.registry, scope=["aux"]).tools())


# --------------------------------------------------------------------------- AS-META-003


async def test_AS_META_003_budget_truncation_is_marked_and_leaves_a_valid_snapshot() -> None:
    registry, _a, _b = two_instances(devices_contract("aux.panel", priority=5))
    registry.register(bind_devices(devices_contract("aux.panel", priority=5), DevicesState()))
    toolset = meta(registry, budget=Budget(max_components=1))
    result = await call(toolset, "surface_discover", {})
    payload = output_of(result)
    assert payload["truncated"] == {"droppedComponents": 2}
    assert sorted(payload) == sorted(
        ["surfaceId", "surfaceVersion", "capturedAt", "components", "procedures", "truncated"]
    )
    # The highest-priority component is the one kept; procedures of dropped ones go with them.
    assert [c["type"] for c in payload["components"]] == ["aux.panel"]
    assert payload["procedures"] == []
    json.dumps(payload)  # plain JSON, as the model reads it


async def test_AS_META_003_a_byte_budget_is_marked_too_and_no_marker_when_everything_fits() -> None:
    registry, _a, _b = two_instances()
    one_component = len(json.dumps(registry.snapshot().components[0].to_json()))
    tight = await call(meta(registry, budget=Budget(max_bytes=one_component + 10)), "surface_discover", {})
    assert output_of(tight)["truncated"] == {"droppedComponents": 1}
    roomy = await call(meta(registry, budget=Budget(max_components=10)), "surface_discover", {})
    assert "truncated" not in output_of(roomy)
    assert len(output_of(roomy)["components"]) == 2


# --------------------------------------------------------------------------- AS-ADAPTER-004 / AS-META-004


async def test_AS_ADAPTER_004_an_ambiguous_target_is_left_to_the_registry() -> None:
    registry, a, b = two_instances()
    spy = InvokeSpy(registry)
    toolset = meta(registry)
    read = await call(toolset, "surface_read", {"capabilityId": READ_ID})
    act = await call(toolset, "surface_act", {"capabilityId": SELECT_ID, "input": {"ids": ["x"]}})
    proc = await call(
        toolset, "surface_act", {"capabilityId": "domain:devices.disable", "input": {"reason": "r"}}
    )
    for result in (read, act, proc):
        assert error_code(result) == "AMBIGUOUS_INSTANCE"
        assert result.error is not None and result.error.retry == "with-changes"
        assert sorted(i["instanceId"] for i in details(result)["instances"]) == ["a", "b"]
    # No placeholder registration id was invented for the registry to trip over.
    assert [r.registration_id for r in spy.requests] == [None, None, None]
    direct = await registry.invoke(Invocation(READ_ID, invocation_id="direct"))
    assert direct.error is not None and read.error is not None
    assert direct.error.to_json() == read.error.to_json()
    assert a.calls == [] and b.calls == []


async def test_AS_ADAPTER_004_an_instance_id_disambiguates_both_verbs() -> None:
    registry, a, b = two_instances()
    toolset = meta(registry)
    read = await call(toolset, "surface_read", {"capabilityId": READ_ID, "instanceId": "b"})
    assert read.ok and read.output == {"selectedIds": ["b1"]}
    act = await call(
        toolset, "surface_act", {"capabilityId": SELECT_ID, "instanceId": "b", "input": {"ids": ["z"]}}
    )
    assert act.ok
    assert b.selected == ["z"] and a.selected == ["a1"]


async def test_AS_ADAPTER_004_unknown_capabilities_and_instances_are_not_found() -> None:
    toolset = meta(devices_surface().registry)
    unknown = await call(toolset, "surface_read", {"capabilityId": "view:devices.table.doesNotExist"})
    assert error_code(unknown) == "CAPABILITY_NOT_FOUND"
    wrong_instance = await call(toolset, "surface_read", {"capabilityId": READ_ID, "instanceId": "nope"})
    assert error_code(wrong_instance) == "CAPABILITY_NOT_FOUND"
    malformed = await call(toolset, "surface_act", {"capabilityId": "not an id", "input": {}})
    assert error_code(malformed) == "CAPABILITY_NOT_FOUND"


async def test_AS_ADAPTER_004_an_unmounted_target_keeps_its_direct_mode_code() -> None:
    surface = devices_surface()
    toolset = meta(surface.registry)
    surface.handle.close()
    gone = await call(toolset, "surface_act", {"capabilityId": SELECT_ID, "input": {"ids": ["d1"]}})
    assert error_code(gone) == "COMPONENT_UNMOUNTED"
    assert surface.state.calls == []


async def test_AS_ADAPTER_004_input_validation_is_the_registry_s() -> None:
    surface = devices_surface()
    toolset = meta(surface.registry)
    bad = await call(toolset, "surface_act", {"capabilityId": SELECT_ID, "input": {"ids": []}}, "m")
    reference = await registry_invoke(surface.registry, SELECT_ID, {"ids": []})
    assert error_code(bad) == "INVALID_INPUT"
    assert bad.error is not None and reference.error is not None
    assert bad.error.to_json() == reference.error.to_json()
    missing = await call(toolset, "surface_act", {"capabilityId": SELECT_ID}, "n")
    assert error_code(missing) == "INVALID_INPUT"
    assert surface.state.calls == []


async def registry_invoke(registry: Any, capability_id: str, value: Any) -> InvocationResult:
    result: InvocationResult = await registry.invoke(
        Invocation(capability_id, value, invocation_id="reference")
    )
    return result


async def test_AS_ADAPTER_004_wait_mode_confirmation_completes_in_one_act() -> None:
    surface = devices_surface(selected=["d1", "d2"])
    spy = InvokeSpy(surface.registry)
    toolset = meta(surface.registry, topology="embedded")
    task = asyncio.ensure_future(
        call(
            toolset,
            "surface_act",
            {"capabilityId": "domain:devices.disable", "input": {"reason": "m"}},
            "act_1",
        )
    )
    (pending,) = await until_pending(surface.registry)
    surface.registry.confirmations.resolve(pending.confirmation_id, approved=True)
    result = await settle(task)
    assert result.ok and result.output == {"disabled": 2}
    assert [(r.invocation_id, r.confirmation_id) for r in spy.requests] == [
        ("act_1", None),
        ("act_1", pending.confirmation_id),
    ]


async def test_AS_META_004_two_phase_confirmation_accepts_the_evidence_back() -> None:
    surface = devices_surface(selected=["d1"])
    toolset = meta(surface.registry, topology="remote")
    args = {"capabilityId": "domain:devices.disable", "input": {"reason": "m"}}
    first = await call(toolset, "surface_act", args, "turn_1")
    assert error_code(first) == "CONFIRMATION_REQUIRED"
    confirmation_id = details(first)["confirmationId"]

    early = await call(toolset, "surface_act", {**args, "confirmationId": confirmation_id}, "turn_2")
    assert error_code(early) == "CONFIRMATION_REQUIRED"  # not approved yet: still pending
    surface.registry.confirmations.resolve(confirmation_id, approved=True)
    second = await call(toolset, "surface_act", {**args, "confirmationId": confirmation_id}, "turn_3")
    assert second.ok
    assert len(surface.server.calls) == 1

    # Evidence covers one exact request: a different input does not inherit it.
    other = await call(
        toolset, "surface_act", {**args, "input": {"reason": "other"}, "confirmationId": confirmation_id}
    )
    assert error_code(other) == "CONFIRMATION_INVALID"
    assert len(surface.server.calls) == 1


async def test_AS_META_004_denial_in_meta_wait_mode_never_executes() -> None:
    surface = devices_surface(selected=["d1"])
    toolset = meta(surface.registry, topology="embedded")
    task = asyncio.ensure_future(
        call(toolset, "surface_act", {"capabilityId": "domain:devices.disable", "input": {"reason": "m"}})
    )
    (pending,) = await until_pending(surface.registry)
    surface.registry.confirmations.resolve(pending.confirmation_id, approved=False)
    result = await settle(task)
    assert error_code(result) == "CONFIRMATION_INVALID" and details(result) == {"reason": "denied"}
    assert surface.server.calls == []


async def test_AS_META_004_a_destructive_act_on_a_moved_surface_is_stale_as_in_direct_mode() -> None:
    surface = devices_surface(selected=["d1"])
    toolset = meta(surface.registry, topology="remote")
    discovered = await call(toolset, "surface_discover", {})
    planned = output_of(discovered)["surfaceVersion"]
    direct_tool = tool(toolset_for(surface.registry, topology="remote"), "domain_devices__disable")

    surface.registry.register(bind_devices(devices_contract("aux.panel"), DevicesState()))
    assert surface.registry.version != planned

    args = {"capabilityId": "domain:devices.disable", "input": {"reason": "m"}, "surfaceVersion": planned}
    stale = await call(toolset, "surface_act", args, "meta_stale")
    direct = await direct_tool.execute({"reason": "m"}, tool_call_id="direct_stale")
    for result in (stale, direct):
        assert error_code(result) == "STALE_CAPABILITY"
        assert details(result)["reason"] == "surface-version-mismatch"
    assert stale.error is not None and direct.error is not None
    assert stale.error.to_json() == direct.error.to_json()
    assert surface.registry.confirmations.pending() == []
    assert surface.server.calls == []


async def test_AS_META_004_without_surface_version_an_act_binds_to_the_live_surface() -> None:
    surface = devices_surface(on_duplicate_instance="replace")
    toolset = meta(surface.registry)
    fresh = DevicesState()
    surface.registry.register(bind_devices(devices_contract(), fresh))  # replaces the first
    assert surface.handle.status == "unregistered"
    result = await call(toolset, "surface_act", {"capabilityId": SELECT_ID, "input": {"ids": ["d1"]}})
    assert result.ok
    assert fresh.selected == ["d1"] and surface.state.calls == []


async def test_AS_META_004_retry_identity_is_honoured() -> None:
    surface = devices_surface()
    spy = InvokeSpy(surface.registry)
    toolset = meta(surface.registry)
    args = {"capabilityId": SELECT_ID, "input": {"ids": ["d1"]}, "invocationId": "mine"}
    first = await call(toolset, "surface_act", args, "transport_1")
    again = await call(toolset, "surface_act", args, "transport_2")
    assert first.ok and first == again
    assert first.invocation_id == "mine"
    assert [r.invocation_id for r in spy.requests] == ["mine", "mine"]
    assert len([c for c in surface.state.calls if c[0] == "selectRows"]) == 1


# --------------------------------------------------------------------------- never raises


@pytest.mark.parametrize(
    ("verb", "args"),
    [
        ("surface_discover", {}),
        ("surface_read", {"capabilityId": READ_ID}),
        ("surface_act", {"capabilityId": SELECT_ID, "input": {"ids": ["d1"]}}),
    ],
)
async def test_AS_ADAPTER_001_meta_verbs_never_raise_after_registry_dispose(verb: str, args: Any) -> None:
    surface = devices_surface()
    toolset = meta(surface.registry)
    verbs = {t.name: t for t in toolset.tools()}
    surface.registry.close()
    result = await verbs[verb].execute(args, tool_call_id="after")
    assert not result.ok
    assert result.invocation_id == "after"
    assert error_code(result) == "CANCELLED"
    assert surface.state.calls == []


# --------------------------------------------------------------------------- verb roles


@pytest.mark.parametrize(
    "capability_id",
    ["view:devices.table.clearSelection", "view:devices.table.selectRows", "domain:devices.disable"],
)
async def test_surface_read_refuses_actions_and_procedures(capability_id: str) -> None:
    # clearSelection takes no input: run through the read verb it would silently mutate the page.
    guarded = _Guarded()
    result = await call(guarded.toolset, "surface_read", {"capabilityId": capability_id}, "r")
    assert issue_paths(result) == ["/capabilityId"]
    assert result.capability_id == capability_id
    assert "surface_act" in (result.error.message if result.error else "")
    guarded.untouched()
    assert guarded.surface.state.selected == ["d1"]


async def test_surface_act_still_runs_an_action_that_takes_no_input() -> None:
    surface = devices_surface(selected=["d1"])
    result = await call(
        meta(surface.registry), "surface_act", {"capabilityId": "view:devices.table.clearSelection"}
    )
    assert result.ok and surface.state.selected == []
