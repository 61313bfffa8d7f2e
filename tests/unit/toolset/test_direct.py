"""Direct mode: one provider tool per capability, stable definitions, live state apart.

Requirements: AS-CACHE-001 (no live state in descriptions), AS-CACHE-002 (definitions
byte-identical across availability and note changes), AS-CACHE-003 (state.note from describe()),
and the rendering of capability state for a trailing context block.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentsurface import Decision, Policy, PolicyContext
from agentsurface._core.pipeline.invocation import InvocationResult
from agentsurface.lowlevel import ActionBinding, ActionContract, ComponentContract, ObservationBinding
from agentsurface.toolset import AgentTool, ToolState, capability_state, describe_prefix

from .helpers import (
    DISABLE_DESCRIPTION,
    IDS_INPUT,
    DevicesState,
    bind_devices,
    definitions,
    devices_contract,
    devices_surface,
    make_registry,
    plain,
    tool,
    toolset_for,
)

EMPTY_OBJECT = {"type": "object", "properties": {}, "additionalProperties": False}


def by_name(tools: list[AgentTool]) -> dict[str, AgentTool]:
    return {t.name: t for t in tools}


# --------------------------------------------------------------------------- projection


def test_one_tool_per_capability_with_wire_names_and_stable_prefixes() -> None:
    toolset = toolset_for(devices_surface().registry)
    tools = by_name(toolset.tools())
    assert sorted(tools) == [
        "domain_devices__disable",
        "view_devices__table__clearSelection",
        "view_devices__table__readState",
        "view_devices__table__selectRows",
    ]
    assert tools["view_devices__table__readState"].description == "[view · read] The current selection"
    assert (
        tools["view_devices__table__selectRows"].description
        == "[view · local-state] Select rows by device id"
    )
    assert (
        tools["view_devices__table__clearSelection"].description == "[view · local-state] Clear the selection"
    )
    assert tools["domain_devices__disable"].description == DISABLE_DESCRIPTION
    assert [tools[n].kind for n in sorted(tools)] == ["procedure", "action", "observation", "action"]


def test_input_schemas_are_the_agent_facing_ones() -> None:
    tools = by_name(toolset_for(devices_surface().registry).tools())
    # An observation takes no input; an action its declared schema.
    assert tools["view_devices__table__readState"].definition()["inputSchema"] == EMPTY_OBJECT
    assert plain(tools["view_devices__table__selectRows"].input_schema) == IDS_INPUT
    # A procedure reference: the bound (locked) field is not the model's to supply.
    disable = tools["domain_devices__disable"].input_schema
    assert list(disable["properties"]) == ["reason"]
    assert list(disable["required"]) == ["reason"]


@pytest.mark.parametrize(
    ("plane", "effect", "confirmation", "expected"),
    [
        ("view", "read", "never", "[view · read]"),
        ("view", "navigation", "optional", "[view · navigation]"),
        ("view", "local-state", "required", "[view · local-state · requires confirmation]"),
        ("domain", "server-mutation", "optional", "[domain · server-mutation]"),
        (
            "domain",
            "external-side-effect",
            "required",
            "[domain · external-side-effect · requires confirmation]",
        ),
    ],
)
def test_the_prefix_names_plane_effect_and_required_confirmation_only(
    plane: str, effect: str, confirmation: str, expected: str
) -> None:
    assert describe_prefix(plane, effect, confirmation) == expected


def test_an_action_with_required_confirmation_says_so_in_its_description() -> None:
    contract = ComponentContract(
        type="drafts.editor",
        description="Draft editor",
        actions={
            "discardDraft": ActionContract("Discard the draft", effect="navigation", confirmation="required")
        },
    )
    registry = make_registry([contract])
    registry.register(contract.bind(actions={"discardDraft": lambda value, ctx: None}))
    (only,) = toolset_for(registry).tools()
    assert only.name == "view_drafts__editor__discardDraft"
    assert only.description == "[view · navigation · requires confirmation] Discard the draft"


class _HideFrom(Policy):
    name = "hide-from-copilot"

    def on_discovery(self, ctx: PolicyContext) -> Decision:
        return Decision("hide") if ctx.consumer.id == "copilot-panel" else Decision("expose")


class _Disable(Policy):
    name = "maintenance"

    def on_discovery(self, ctx: PolicyContext) -> Decision:
        return Decision("disable", "read-only during maintenance")


def test_hidden_capabilities_have_no_tool_and_disabled_ones_keep_theirs() -> None:
    contract = devices_contract()
    registry = make_registry([contract])
    state = DevicesState()
    registry.register(
        contract.bind(
            observations={
                "readState": ObservationBinding(lambda ctx: {"selectedIds": []}, policies=[_HideFrom()])
            },
            actions={
                "selectRows": ActionBinding(lambda value, ctx: None, policies=[_Disable()]),
                "clearSelection": lambda value, ctx: state.calls.append(("clear", value)),
            },
        )
    )
    tools = by_name(toolset_for(registry).tools())
    assert "view_devices__table__readState" not in tools
    assert "view:devices.table.readState" not in toolset_for(registry).wire_name_map().values()
    select = tools["view_devices__table__selectRows"]
    assert select.state == ToolState(False, "read-only during maintenance")
    assert "maintenance" not in select.description


def test_a_direct_catalog_is_bounded_by_scope() -> None:
    surface = devices_surface()
    aux = DevicesState()
    surface.registry.register(bind_devices(devices_contract("aux.panel"), aux))
    scoped = toolset_for(surface.registry, scope=["aux"])
    names = [t.name for t in scoped.tools()]
    assert names and all(n.startswith("view_aux__panel__") for n in names)
    assert toolset_for(surface.registry, scope=["billing"]).tools() == []


# --------------------------------------------------------------------------- AS-CACHE-001


def test_AS_CACHE_001_descriptions_carry_no_live_state() -> None:
    surface = devices_surface(describe=lambda: "Currently bound to 0 selected device(s).")
    tools = by_name(toolset_for(surface.registry).tools())

    disable = tools["domain_devices__disable"]
    assert disable.description == DISABLE_DESCRIPTION
    assert disable.state == ToolState(
        False, "Select at least one device first", "Currently bound to 0 selected device(s)."
    )
    clear = tools["view_devices__table__clearSelection"]
    assert clear.state == ToolState(False, "No rows are selected")
    for t in tools.values():
        for live in ("unavailable", "Select at least", "No rows", "Currently bound", "not right now"):
            assert live not in t.description, (t.name, live)
    # definition() is exactly name, description and input schema: state never rides along.
    assert set(disable.definition()) == {"name", "description", "inputSchema"}


# --------------------------------------------------------------------------- AS-CACHE-002


def test_AS_CACHE_002_definitions_survive_an_availability_flip_byte_identically() -> None:
    surface = devices_surface()
    toolset = toolset_for(surface.registry)
    before_tools = toolset.tools()
    before = definitions(before_tools)

    surface.state.selected = ["d1", "d2"]  # two capabilities become available
    after_tools = toolset.tools()

    assert [t.state.available for t in after_tools] != [t.state.available for t in before_tools]
    assert definitions(after_tools) == before


def test_AS_CACHE_002_definitions_survive_pushed_overrides_and_disabling() -> None:
    surface = devices_surface(selected=["d1"])
    toolset = toolset_for(surface.registry)
    before = definitions(toolset.tools())
    registry, handle = surface.registry, surface.handle
    version = registry.version
    handle.update(availability={"selectRows": {"available": False, "reason": "Table is loading"}})
    flipped = by_name(toolset.tools())
    assert flipped["view_devices__table__selectRows"].state == ToolState(False, "Table is loading")
    assert definitions(list(flipped.values())) == before
    handle.update(enabled=False)
    assert all(not t.state.available for t in toolset.tools())
    assert definitions(toolset.tools()) == before
    assert registry.version != version


def test_AS_CACHE_002_definitions_survive_a_changing_contextual_note() -> None:
    notes = iter(f"note #{i}" for i in range(100))
    surface = devices_surface(selected=["d1"], describe=lambda: next(notes))
    toolset = toolset_for(surface.registry)
    first, second = toolset.tools(), toolset.tools()
    assert (
        tool_state(first, "domain_devices__disable").note
        != tool_state(second, "domain_devices__disable").note
    )
    assert definitions(first) == definitions(second)


def test_AS_CACHE_002_a_new_component_leaves_existing_definitions_untouched() -> None:
    surface = devices_surface()
    toolset = toolset_for(surface.registry)
    before = [t.definition() for t in toolset.tools()]
    surface.state.selected = ["d1"]
    surface.registry.register(bind_devices(devices_contract("aux.panel"), DevicesState()))
    after = [t.definition() for t in toolset.tools() if not t.name.startswith("view_aux__panel")]
    assert definitions_of(after) == definitions_of(before)


def tool_state(tools: list[AgentTool], name: str) -> ToolState:
    return by_name(tools)[name].state


def definitions_of(items: list[dict[str, Any]]) -> str:
    import json

    return json.dumps(items, sort_keys=True, separators=(",", ":"))


# --------------------------------------------------------------------------- AS-CACHE-003


def test_AS_CACHE_003_state_note_is_the_describe_contribution() -> None:
    surface = devices_surface(describe=lambda: f"Currently bound to {len(surface_state.selected)} device(s).")
    surface_state = surface.state
    toolset = toolset_for(surface.registry)
    assert tool(toolset, "domain_devices__disable").state.note == "Currently bound to 0 device(s)."
    surface_state.selected = ["a", "b"]
    disable = tool(toolset, "domain_devices__disable")
    assert disable.state.note == "Currently bound to 2 device(s)."
    assert disable.state.available
    assert disable.description == DISABLE_DESCRIPTION


def test_AS_CACHE_003_no_describe_means_no_note_and_a_failing_describe_is_omitted() -> None:
    assert tool(toolset_for(devices_surface().registry), "domain_devices__disable").state.note is None

    def broken() -> str:
        raise RuntimeError("describe failed")

    toolset = toolset_for(devices_surface(describe=broken).registry)
    disable = tool(toolset, "domain_devices__disable")
    assert disable.state.note is None
    assert disable.description == DISABLE_DESCRIPTION


def test_AS_CACHE_003_observations_and_actions_never_carry_a_note() -> None:
    toolset = toolset_for(devices_surface(describe=lambda: "bound").registry)
    notes = {t.name: t.state.note for t in toolset.tools()}
    assert notes.pop("domain_devices__disable") == "bound"
    assert set(notes.values()) == {None}


# --------------------------------------------------------------------------- capability_state


def _fake(name: str, state: ToolState) -> AgentTool:
    async def never(*args: Any, **kwargs: Any) -> InvocationResult:
        raise AssertionError("not called")

    return AgentTool(name, "d", EMPTY_OBJECT, state, "action", "view:a.b.c", never)  # type: ignore[arg-type]


def test_capability_state_lists_unavailable_tools_and_notes_only() -> None:
    surface = devices_surface(describe=lambda: "Bound to the selection.")
    text = capability_state(toolset_for(surface.registry).tools())
    assert text == (
        "Current capability state:\n"
        "- view_devices__table__clearSelection: unavailable: No rows are selected\n"
        "- domain_devices__disable: unavailable: Select at least one device first · Bound to the selection."
    )


def test_capability_state_is_empty_when_everything_is_available_without_notes() -> None:
    surface = devices_surface(selected=["d1"])
    assert capability_state(toolset_for(surface.registry).tools()) == ""
    assert capability_state([]) == ""


def test_capability_state_falls_back_when_no_reason_is_given() -> None:
    tools = [
        _fake("a", ToolState(False)),
        _fake("b", ToolState(True, note="Bound to 2 rows")),
        _fake("c", ToolState(True)),
    ]
    assert capability_state(tools) == (
        "Current capability state:\n- a: unavailable: not right now\n- b: Bound to 2 rows"
    )


def test_tool_state_serializes_only_what_is_set() -> None:
    assert ToolState(True).to_json() == {"available": True}
    assert ToolState(False, "why", "note").to_json() == {
        "available": False,
        "unavailableReason": "why",
        "note": "note",
    }
