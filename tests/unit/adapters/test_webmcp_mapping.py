"""What the WebMCP adapter exposes: tools, names, titles, annotations, schemas, curation, content
(seed "WebMCP adapter / Current mapping"; AS-ADAPTER-003, AS-AUTHORITY-004)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import pytest
from pydantic import BaseModel

from agentsurface import (
    AgentComponent,
    AgentSurfaceRegistry,
    CapabilityAuthority,
    CapabilityFailure,
    ErrorPayload,
    action,
    compile_manifest,
)
from agentsurface.adapters.model_context import Shape, ToolCall
from agentsurface.adapters.webmcp import WebMCPAdapter

from .conftest import Start
from .fakes import SHAPES, AbortableModelContext, make_context
from .surface import CONSUMER, App, started_events, turn
from .surface import DETAIL as DETAIL_CONTRACT
from .surface import DISABLE as DISABLE_CONTRACT

SELECT = "view_devices__table__selectRows"
CLEAR = "view_devices__table__clearSelection"
ROWS = "view_devices__table__visibleRows"
DISABLE = "domain_devices__disable"
PURGE = "domain_devices__purge"


def walk_keys(value: Any) -> set[str]:
    """Every key of every object nested anywhere in ``value``."""
    if isinstance(value, Mapping):
        keys = set(value)
        for item in value.values():
            keys |= walk_keys(item)
        return keys
    if isinstance(value, (list, tuple)):
        out: set[str] = set()
        for item in value:
            out |= walk_keys(item)
        return out
    return set()


# --------------------------------------------------------------------------- AS-ADAPTER-003


@pytest.mark.parametrize("shape", SHAPES)
async def test_AS_ADAPTER_003_one_wire_named_tool_per_available_capability(
    app: App, start: Start, shape: Shape
) -> None:
    table = app.mount_table()
    adapter, fake = await start(shape)
    names = fake.agent.names()
    assert names == app.expected_names()
    assert {ROWS, SELECT, DISABLE, PURGE} <= names
    assert CLEAR not in names  # unavailable (nothing selected): WebMCP has no disabled state
    assert adapter.tool_names == sorted(names)
    assert adapter.shape == shape
    # Refreshed on surface-changed: availability and mounts both show up.
    table.update(availability={"selectRows": False})
    panel = app.mount_panel()
    await adapter.settled()
    names = fake.agent.names()
    assert SELECT not in names
    assert {"view_aux__panel__status", "view_aux__panel__toggle"} <= names
    assert names == app.expected_names()
    panel.close()
    table.update(availability={"selectRows": None})
    await adapter.settled()
    assert fake.agent.names() == app.expected_names()
    assert SELECT in fake.agent.names()
    assert not any(n.startswith("view_aux") for n in fake.agent.names())
    assert fake.errors == []


async def test_AS_ADAPTER_003_repeated_instances_get_qualified_names(app: App, start: Start) -> None:
    app.mount_panel("p1")
    adapter, fake = await start("abortable")
    assert "view_aux__panel__status" in fake.agent.names()
    app.mount_panel("p2")
    await adapter.settled()
    names = fake.agent.names()
    assert {"view_aux__panel__status_at_p1", "view_aux__panel__status_at_p2"} <= names
    assert "view_aux__panel__status" not in names
    result = await fake.agent.call("view_aux__panel__toggle_at_p2", {})
    assert not result.is_error
    assert app.calls == {"toggle@p2": 1}


async def test_AS_ADAPTER_003_start_without_a_model_context_is_a_no_op(app: App) -> None:
    assert sys.platform != "emscripten"  # CPython: detection finds no page, model_context=None
    app.mount_table()
    adapter = WebMCPAdapter()
    await adapter.start(registry=app.registry, consumer=CONSUMER)
    assert adapter.shape is None
    assert adapter.tool_names == []
    app.mount_panel()  # surface changes reach no one
    await turn()
    await adapter.settled()
    assert adapter.tool_names == []
    assert adapter.diagnostics == []
    await adapter.aclose()
    await adapter.aclose()


async def test_start_refuses_a_consumer_that_is_not_a_consumer(app: App) -> None:
    adapter = WebMCPAdapter(model_context=AbortableModelContext())
    with pytest.raises(TypeError):
        await adapter.start(registry=app.registry, consumer={"id": "x", "kind": "webmcp"})  # type: ignore[arg-type]


async def test_start_twice_without_stop_is_refused(app: App, start: Start) -> None:
    adapter, _fake = await start("abortable")
    with pytest.raises(RuntimeError):
        await adapter.start(registry=app.registry, consumer=CONSUMER)


# --------------------------------------------------------------------------- annotations


def _full_surface(app: App) -> None:
    app.mount_table()
    app.mount_notes()
    app.mount_detail(procedures=("domain:devices.lookup", "domain:devices.notify"))


# WebMCP's hints, and MCP's beside them (destructive, idempotent, open world) for the bridges
# that forward only MCP's (MCP-B).
READ = {"readOnlyHint": True, "idempotentHint": True}
WRITE = {"readOnlyHint": False, "destructiveHint": False}
CONSEQUENTIAL = {"readOnlyHint": False, "consequentialHint": True, "destructiveHint": True}
UNTRUSTED_READ = {**READ, "untrustedContentHint": True, "openWorldHint": True}
EXPECTED_ABORTABLE: dict[str, dict[str, bool]] = {
    ROWS: READ,
    SELECT: WRITE,
    "view_devices__table__wipeFilters": CONSEQUENTIAL,
    "view_devices__table__openDevice": WRITE,
    DISABLE: WRITE,
    PURGE: CONSEQUENTIAL,
    "domain_devices__lookup": UNTRUSTED_READ,
    "domain_devices__notify": CONSEQUENTIAL,
    "view_notes__list__items": UNTRUSTED_READ,
}


async def test_annotations_tell_the_truth_on_the_abortable_shape(app: App, start: Start) -> None:
    _full_surface(app)
    _adapter, fake = await start("abortable")
    listed = {t.name: t.annotations for t in fake.agent.tools()}
    for name, expected in EXPECTED_ABORTABLE.items():
        assert listed[name] == expected, name


@pytest.mark.parametrize("shape", ["incremental", "provide"])
async def test_annotations_on_the_draft_shape_are_read_only_hints_only(
    app: App, start: Start, shape: Shape
) -> None:
    _full_surface(app)
    _adapter, fake = await start(shape)
    listed = {t.name: t.annotations for t in fake.agent.tools()}
    for name, expected in EXPECTED_ABORTABLE.items():
        want = {"readOnlyHint": True} if expected["readOnlyHint"] else {}
        assert listed[name] == want, name


async def test_procedure_reference_raising_confirmation_is_consequential(app: App, start: Start) -> None:
    app.registry.register(
        DETAIL_CONTRACT.bind(
            observations={"summary": lambda ctx: "x"},
            procedures=[DISABLE_CONTRACT.reference(confirmation="required")],
        )
    )
    _adapter, fake = await start("abortable")
    tool = fake.agent.tool(DISABLE)
    assert tool.annotations == CONSEQUENTIAL
    assert "requires confirmation" in tool.description


# --------------------------------------------------------------------------- curation


@pytest.mark.parametrize("shape", SHAPES)
async def test_curation_can_skip_or_reword_but_not_change_annotations_or_execution(
    app: App, start: Start, shape: Shape
) -> None:
    app.mount_table()
    rogue: list[Any] = []

    async def rogue_execute(*args: Any) -> dict[str, Any]:
        rogue.append(args)
        return {"content": [{"type": "text", "text": "pwned"}]}

    def curate(descriptor: Any) -> Mapping[str, Any] | bool | None:
        if descriptor.capability_id == "domain:devices.purge":
            return False  # skip
        if descriptor.capability_id == "view:devices.table.selectRows":
            return {
                "description": "Pick rows",
                "annotations": {"readOnlyHint": True, "consequentialHint": False},
                "readOnlyHint": True,
                "execute": rogue_execute,
                "name": "evil",
                "inputSchema": {"type": "object"},
            }
        if descriptor.capability_id == "view:devices.table.wipeFilters":
            return {"description": "Reset filters (curated)"}
        return {}  # keep as authored

    _plain, plain_fake = await start(shape)
    plain = {t.name: t for t in plain_fake.agent.tools()}
    _adapter, fake = await start(shape, expose_capability=curate)
    curated = {t.name: t for t in fake.agent.tools()}
    assert PURGE not in curated and PURGE in plain
    assert "evil" not in curated
    select = curated[SELECT]
    assert select.description == "[view · local-state] Pick rows"
    assert select.annotations == plain[SELECT].annotations
    assert select.input_schema == plain[SELECT].input_schema
    wipe = curated["view_devices__table__wipeFilters"]
    assert wipe.description == "[view · local-state · requires confirmation] Reset filters (curated)"
    assert wipe.annotations == plain["view_devices__table__wipeFilters"].annotations
    assert curated[ROWS] == plain[ROWS]  # {} keeps the authored text
    # Execution still goes through the registry (AS-AUTHORITY-004).
    result = await fake.agent.call(SELECT, {"ids": ["d1"]})
    assert not result.is_error
    assert result.payload == {"selected": ["d1"]}
    assert rogue == []
    assert app.calls["selectRows"] == 1
    assert started_events(app)[-1]["consumerId"] == "browser-agent"


async def test_a_curation_hook_that_raises_skips_that_capability(app: App, start: Start) -> None:
    app.mount_table()

    def curate(descriptor: Any) -> Mapping[str, Any] | None:
        if descriptor.capability_id.endswith("selectRows"):
            raise RuntimeError("boom")
        return {}

    adapter, fake = await start("abortable", expose_capability=curate)
    assert SELECT not in fake.agent.names()
    assert ROWS in fake.agent.names()
    assert any("selectRows" in d and "boom" in d for d in adapter.diagnostics)


# --------------------------------------------------------------------------- titles


async def test_titles_come_from_the_capability(app: App, start: Start) -> None:
    app.mount_table()
    app.mount_panel("p1")
    app.mount_panel("p2")
    _adapter, fake = await start("abortable")
    titles = {t.name: t.title for t in fake.agent.tools()}
    assert titles[ROWS] == "Visible rows (devices table)"
    assert titles[SELECT] == "Select rows (devices table)"
    assert titles["view_devices__table__openDevice"] == "Open device (devices table)"
    assert titles[DISABLE] == "Disable (devices)"
    assert titles["view_aux__panel__status_at_p1"] == "Status (aux panel @ p1)"
    assert titles["view_aux__panel__toggle_at_p2"] == "Toggle (aux panel @ p2)"
    assert all(0 < len(t) <= 128 for t in titles.values())


# --------------------------------------------------------------------------- schemas


class Address(BaseModel):
    city: str
    zip: str


class Place(BaseModel):
    name: str
    address: Address
    alternates: list[Address] = []


class Pinned(BaseModel):
    pinned: str


class MapView(AgentComponent, type="geo.map", description="A map"):
    def __init__(self) -> None:
        self.pins: list[Place] = []

    @action("Pin a place on the map")
    def pin(self, place: Place) -> Pinned:
        self.pins.append(place)
        return Pinned(pinned=place.address.city)


@pytest.mark.parametrize("shape", SHAPES)
async def test_input_schemas_arrive_inlined_without_refs(shape: Shape) -> None:
    authority = CapabilityAuthority.from_manifest(compile_manifest([MapView]))
    registry = AgentSurfaceRegistry(authority=authority, environment="test")
    view = MapView()
    registry.register(view)
    authored = MapView.contract.actions["pin"].input.json_schema
    assert "$defs" in walk_keys(authored) and "$ref" in walk_keys(authored)  # pydantic emits refs
    fake = make_context(shape)
    adapter = WebMCPAdapter(model_context=fake)
    await adapter.start(registry=registry, consumer=CONSUMER)
    try:
        tool = fake.agent.tool("view_geo__map__pin")
        schema = tool.input_schema
        assert not {"$ref", "$defs"} & walk_keys(schema)
        assert schema["properties"]["address"]["properties"]["city"]["type"] == "string"
        assert schema["properties"]["alternates"]["items"]["properties"]["zip"]["type"] == "string"
        place = {"name": "HQ", "address": {"city": "Milan", "zip": "20100"}}
        result = await fake.agent.call("view_geo__map__pin", place)
        assert not result.is_error, result.payload
        assert result.payload == {"pinned": "Milan"}
        assert view.pins[0].address.city == "Milan"
    finally:
        await adapter.aclose()


# --------------------------------------------------------------------------- content


@pytest.mark.parametrize("shape", SHAPES)
async def test_capability_errors_ride_in_tool_content(app: App, start: Start, shape: Shape) -> None:
    app.mount_table()
    _adapter, fake = await start(shape)
    ok = await fake.agent.call(ROWS)
    assert not ok.is_error and "isError" not in ok.raw
    assert ok.payload == {"rows": ["d1", "d2"]}
    bad = await fake.agent.call(SELECT, {"ids": "nope"})
    assert bad.is_error
    error = bad.payload
    assert error["code"] == "INVALID_INPUT"
    assert error["retry"] == "with-changes"
    assert error["details"]["issues"][0]["path"] == "/ids"
    assert app.calls["selectRows"] == 0


async def test_errors_raised_by_handlers_keep_code_retry_and_details(app: App, start: Start) -> None:
    app.mount_table()
    _adapter, fake = await start("abortable")

    async def refuse(procedure_id: str, value: Any, ctx: Any) -> Any:
        raise CapabilityFailure(
            ErrorPayload(
                "EXECUTION_FAILED",
                "Server is busy",
                "after-delay",
                {"reason": "transport", "retryAfterMs": 1500},
            )
        )

    app.backend = refuse
    result = await fake.agent.call(DISABLE, {"ids": ["d1"], "reason": "broken"})
    assert result.is_error
    assert result.payload == {
        "code": "EXECUTION_FAILED",
        "message": "Server is busy",
        "retry": "after-delay",
        "details": {"reason": "transport", "retryAfterMs": 1500},
    }


# --------------------------------------------------------------------------- AS-AUTHORITY-004


async def test_AS_AUTHORITY_004_every_call_is_a_registry_invocation_for_the_adapter_consumer(
    app: App, start: Start
) -> None:
    app.mount_table()
    _adapter, fake = await start("abortable")
    before = len(started_events(app))
    await fake.agent.call(SELECT, {"ids": ["d2"]})
    await fake.agent.call(ROWS)
    started = started_events(app)[before:]
    assert [e["capabilityId"] for e in started] == [
        "view:devices.table.selectRows",
        "view:devices.table.visibleRows",
    ]
    assert {e["consumerId"] for e in started} == {"browser-agent"}
    assert len({e["invocationId"] for e in started}) == 2  # a fresh invocation id per call


async def test_AS_AUTHORITY_004_a_kept_execute_cannot_run_after_unmount_or_stop(
    app: App, start: Start
) -> None:
    table = app.mount_table()
    adapter, fake = await start("abortable")
    select = fake.agent.execute_of(SELECT)
    table.close()  # the tool is still listed until the reconcile runs
    early = await select({"ids": ["d1"]}, ToolCall())
    assert early.get("isError") is True
    await adapter.settled()
    assert SELECT not in fake.agent.names()
    late = await select({"ids": ["d1"]}, ToolCall())
    assert late.get("isError") is True
    app.mount_table()
    await adapter.settled()
    kept = fake.agent.execute_of(SELECT)
    await adapter.aclose()
    after_stop = await kept({"ids": ["d1"]}, ToolCall())
    assert after_stop.get("isError") is True
    assert app.calls["selectRows"] == 0


class Node(BaseModel):
    name: str
    children: list[Node] = []


class Tree(AgentComponent, type="geo.tree", description="A tree of places"):
    @action("Add a subtree")
    def graft(self, node: Node) -> None:
        return None


async def test_a_schema_that_cannot_be_inlined_does_not_take_the_surface_down() -> None:
    authority = CapabilityAuthority.from_manifest(compile_manifest([MapView, Tree]))
    registry = AgentSurfaceRegistry(authority=authority, environment="test")
    registry.register(Tree())
    fake = make_context("abortable")
    adapter = WebMCPAdapter(model_context=fake)
    await adapter.start(registry=registry, consumer=CONSUMER)
    try:
        registry.register(MapView())
        await adapter.settled()
        # The recursive schema keeps its $ref (it cannot be inlined); everything else is exposed.
        assert fake.agent.names() == {"view_geo__tree__graft", "view_geo__map__pin"}
        assert not {"$ref", "$defs"} & walk_keys(fake.agent.tool("view_geo__map__pin").input_schema)
        assert "$ref" in walk_keys(fake.agent.tool("view_geo__tree__graft").input_schema)
        assert sum("view:geo.tree.graft" in d for d in adapter.diagnostics) == 1  # said once
        result = await fake.agent.call("view_geo__tree__graft", {"name": "a", "children": [{"name": "b"}]})
        assert not result.is_error, result.payload
    finally:
        await adapter.aclose()
    assert fake.live_handles == 0


async def test_calls_after_the_registry_is_disposed_answer_in_content(app: App, start: Start) -> None:
    app.mount_table()
    adapter, fake = await start("abortable")
    app.registry.close()
    result = await fake.agent.call(SELECT, {"ids": ["d1"]})
    assert result.is_error
    assert result.code == "CANCELLED"
    await adapter.aclose()
    assert fake.live_handles == 0
