"""Calling through direct tools, and the change feed.

Requirements: AS-ADAPTER-001 (tool call id → invocation id, registration id and surface version
attached, per-version refresh, unique names), AS-ADAPTER-002 (code, retry and details relayed
losslessly; execute never raises).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentsurface import CapabilityFailure, ErrorPayload, Invocation, PreconditionFailure
from agentsurface.lowlevel import ActionBinding
from agentsurface.toolset import AgentTool

from .helpers import (
    DevicesState,
    InvokeSpy,
    bind_devices,
    details,
    devices_contract,
    devices_surface,
    disable_contract,
    error_code,
    make_registry,
    tool,
    toolset_for,
)

SELECT = "view_devices__table__selectRows"
READ = "view_devices__table__readState"
DISABLE = "domain_devices__disable"


# --------------------------------------------------------------------------- AS-ADAPTER-001


async def test_AS_ADAPTER_001_tool_call_id_becomes_the_invocation_id() -> None:
    surface = devices_surface()
    spy = InvokeSpy(surface.registry)
    result = await tool(toolset_for(surface.registry), SELECT).execute({"ids": ["d1"]}, tool_call_id="call_1")
    assert result.ok
    assert result.invocation_id == "call_1"
    assert [r.invocation_id for r in spy.requests] == ["call_1"]
    assert surface.state.selected == ["d1"]


async def test_AS_ADAPTER_001_calls_without_a_tool_call_id_get_fresh_invocation_ids() -> None:
    surface = devices_surface()
    spy = InvokeSpy(surface.registry)
    select = tool(toolset_for(surface.registry), SELECT)
    first = await select.execute({"ids": ["d1"]})
    second = await select.execute({"ids": ["d1"]})
    assert first.ok and second.ok
    ids = [r.invocation_id for r in spy.requests]
    assert len(set(ids)) == 2 and all(isinstance(i, str) and i for i in ids)
    assert len([c for c in surface.state.calls if c[0] == "selectRows"]) == 2


async def test_AS_ADAPTER_001_registration_id_and_surface_version_are_attached() -> None:
    surface = devices_surface(selected=["d1"])
    spy = InvokeSpy(surface.registry)
    toolset = toolset_for(surface.registry, topology="remote")
    version = surface.registry.version
    for name in (READ, SELECT, DISABLE):
        await tool(toolset, name).execute({"ids": ["d2"]} if name == SELECT else None, tool_call_id=name)
    assert len(spy.requests) == 3
    for request in spy.requests:
        assert isinstance(request, Invocation)
        assert request.registration_id == surface.handle.registration_id
        assert request.surface_version == version
    assert [r.capability_id for r in spy.requests] == [
        "view:devices.table.readState",
        "view:devices.table.selectRows",
        "domain:devices.disable",
    ]


async def test_AS_ADAPTER_001_a_transport_retry_runs_the_call_once() -> None:
    surface = devices_surface()
    select = tool(toolset_for(surface.registry), SELECT)
    a, b = await asyncio.gather(
        select.execute({"ids": ["d1", "d2"]}, tool_call_id="call_1"),
        select.execute({"ids": ["d1", "d2"]}, tool_call_id="call_1"),
    )
    again = await select.execute({"ids": ["d1", "d2"]}, tool_call_id="call_1")
    assert a.ok and a == b == again
    assert [c for c in surface.state.calls if c[0] == "selectRows"] == [("selectRows", {"ids": ["d1", "d2"]})]


async def test_AS_ADAPTER_001_reusing_a_tool_call_id_for_another_request_conflicts() -> None:
    surface = devices_surface()
    select = tool(toolset_for(surface.registry), SELECT)
    assert (await select.execute({"ids": ["d1"]}, tool_call_id="call_1")).ok
    clash = await select.execute({"ids": ["d9"]}, tool_call_id="call_1")
    assert error_code(clash) == "INVOCATION_CONFLICT"
    assert surface.state.selected == ["d1"]


async def test_AS_ADAPTER_001_the_catalog_refreshes_per_version_with_one_tool_per_instance() -> None:
    registry = make_registry([devices_contract()])
    main, comparison = DevicesState(), DevicesState()
    registry.register(bind_devices(devices_contract(), main, "main"))
    toolset = toolset_for(registry)
    assert SELECT in [t.name for t in toolset.tools()]

    registry.register(bind_devices(devices_contract(), comparison, "comparison"))
    names = [t.name for t in toolset.tools()]
    assert len(names) == len(set(names)) == 6
    assert SELECT not in names
    assert f"{SELECT}_at_main" in names and f"{SELECT}_at_comparison" in names

    result = await tool(toolset, f"{SELECT}_at_comparison").execute({"ids": ["d7"]}, tool_call_id="c")
    assert result.ok
    assert comparison.selected == ["d7"] and main.selected == []
    assert toolset.wire_name_map()[f"{SELECT}_at_main"] == "view:devices.table.selectRows"


async def test_AS_ADAPTER_001_a_tool_from_a_replaced_registration_is_stale() -> None:
    surface = devices_surface(on_duplicate_instance="replace")
    captured = tool(toolset_for(surface.registry), SELECT)
    replacement = DevicesState()
    live = surface.registry.register(bind_devices(devices_contract(), replacement))
    assert surface.handle.status == "unregistered"

    result = await captured.execute({"ids": ["d1"]}, tool_call_id="call_stale")
    assert error_code(result) == "STALE_CAPABILITY"
    assert details(result) == {"reason": "registration-replaced", "liveRegistrationId": live.registration_id}
    assert result.error is not None and result.error.retry == "after-refresh"
    assert surface.state.calls == [] and replacement.calls == []


async def test_AS_ADAPTER_001_a_tool_of_an_unmounted_component_says_so() -> None:
    surface = devices_surface()
    captured = tool(toolset_for(surface.registry), SELECT)
    surface.handle.close()
    result = await captured.execute({"ids": ["d1"]}, tool_call_id="call_gone")
    assert error_code(result) == "COMPONENT_UNMOUNTED"
    assert surface.state.calls == []


async def test_AS_ADAPTER_001_a_destructive_tool_from_an_older_catalog_fails_closed() -> None:
    surface = devices_surface(selected=["d1"])
    toolset = toolset_for(surface.registry, topology="remote")
    captured = tool(toolset, DISABLE)
    old_select = tool(toolset, SELECT)
    surface.registry.register(bind_devices(devices_contract("aux.panel"), DevicesState()))

    result = await captured.execute({"reason": "maintenance"}, tool_call_id="call_old")
    assert error_code(result) == "STALE_CAPABILITY"
    assert details(result)["reason"] == "surface-version-mismatch"
    assert surface.registry.confirmations.pending() == []
    # A local-state tool from the same old catalog still runs: only irreversible effects are guarded.
    assert (await old_select.execute({"ids": ["d2"]}, tool_call_id="call_select")).ok
    assert surface.state.selected == ["d2"]
    # The refreshed catalog carries the live version, so the destructive call proceeds to confirmation.
    fresh = tool(toolset, DISABLE)
    assert error_code(await fresh.execute({"reason": "maintenance"}, tool_call_id="call_new")) == (
        "CONFIRMATION_REQUIRED"
    )
    assert surface.server.calls == []


# --------------------------------------------------------------------------- never raises


async def test_AS_ADAPTER_001_execute_never_raises_after_registry_dispose() -> None:
    surface = devices_surface()
    select = tool(toolset_for(surface.registry), SELECT)
    surface.registry.close()
    result = await select.execute({"ids": ["d1"]}, tool_call_id="call_after")
    assert not result.ok
    assert result.invocation_id == "call_after"
    assert result.capability_id == "view:devices.table.selectRows"
    assert error_code(result) == "CANCELLED"
    assert surface.state.calls == []


async def test_AS_ADAPTER_001_execute_never_raises_when_the_registry_misbehaves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    surface = devices_surface()
    select = tool(toolset_for(surface.registry), SELECT)

    async def explode(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(surface.registry, "invoke", explode)
    result = await select.execute({"ids": ["d1"]}, tool_call_id="call_boom")
    assert error_code(result) == "EXECUTION_FAILED"
    assert result.invocation_id == "call_boom"
    assert "boom" not in (result.error.message if result.error else "")


async def test_AS_ADAPTER_001_a_failing_handler_is_a_result_not_an_exception() -> None:
    contract = devices_contract()
    registry = make_registry([contract])

    def crash(value: Any, ctx: Any) -> None:
        raise ValueError("secret internals")

    registry.register(
        contract.bind(
            observations={"readState": lambda ctx: {"selectedIds": []}},
            actions={"selectRows": crash, "clearSelection": lambda value, ctx: None},
        )
    )
    result = await tool(toolset_for(registry), SELECT).execute({"ids": ["d1"]}, tool_call_id="c")
    assert error_code(result) == "EXECUTION_FAILED"
    assert "secret" not in result.error.message  # type: ignore[union-attr]


# --------------------------------------------------------------------------- AS-ADAPTER-002


def _refusing_registry(err: ErrorPayload) -> tuple[Any, DevicesState]:
    contract = devices_contract()
    registry = make_registry([contract])
    state = DevicesState()

    def refuse(value: Any, ctx: Any) -> None:
        state.calls.append(("selectRows", value))
        raise CapabilityFailure(err)

    registry.register(
        contract.bind(
            observations={"readState": lambda ctx: {"selectedIds": []}},
            actions={"selectRows": refuse, "clearSelection": lambda value, ctx: None},
        )
    )
    return registry, state


@pytest.mark.parametrize(
    "err",
    [
        ErrorPayload(
            "PRECONDITION_FAILED",
            "Row d1 is locked by another user.",
            "after-refresh",
            {"reason": "locked", "lockedBy": "u-42", "rows": ["d1"]},
        ),
        ErrorPayload(
            "RATE_LIMITED", "Slow down.", "after-delay", {"reason": "quota", "retryAfterMs": 1500}
        ),
        ErrorPayload("EXECUTION_FAILED", "Upstream hiccup.", "after-delay", {"transient": True}),
    ],
    ids=lambda e: e.code,
)
async def test_AS_ADAPTER_002_error_envelopes_are_relayed_losslessly(err: ErrorPayload) -> None:
    registry, state = _refusing_registry(err)
    result = await tool(toolset_for(registry), SELECT).execute({"ids": ["d1"]}, tool_call_id="call_err")
    assert result.error is not None
    assert result.error.to_json() == err.to_json()
    direct = await registry.invoke(
        Invocation("view:devices.table.selectRows", {"ids": ["d1"]}, invocation_id="direct")
    )
    assert direct.error is not None and direct.error.to_json() == result.error.to_json()
    assert len(state.calls) == 2


async def test_AS_ADAPTER_002_validation_issues_and_preconditions_survive_the_toolset() -> None:
    contract = devices_contract()
    registry = make_registry([contract])
    registry.register(
        contract.bind(
            observations={"readState": lambda ctx: {"selectedIds": []}},
            actions={
                "selectRows": ActionBinding(
                    lambda value, ctx: None,
                    precondition=lambda value, ctx: PreconditionFailure("Rows are frozen", {"frozen": 2}),
                ),
                "clearSelection": lambda value, ctx: None,
            },
        )
    )
    select = tool(toolset_for(registry), SELECT)
    invalid = await select.execute({"ids": "d1", "extra": 1}, tool_call_id="bad")
    assert error_code(invalid) == "INVALID_INPUT"
    reference = await registry.invoke(
        Invocation("view:devices.table.selectRows", {"ids": "d1", "extra": 1}, invocation_id="ref")
    )
    assert invalid.error is not None and reference.error is not None
    assert invalid.error.to_json() == reference.error.to_json()
    assert details(invalid)["issues"]

    frozen = await select.execute({"ids": ["d1"]}, tool_call_id="frozen")
    assert error_code(frozen) == "PRECONDITION_FAILED"
    assert details(frozen) == {"frozen": 2, "reason": "precondition"}
    assert frozen.error is not None and frozen.error.retry == "with-changes"


async def test_AS_ADAPTER_002_confirmation_required_keeps_every_detail_in_two_phase_mode() -> None:
    surface = devices_surface(selected=["d1", "d2"])
    result = await tool(toolset_for(surface.registry, topology="remote"), DISABLE).execute(
        {"reason": "maintenance"}, tool_call_id="call_two_phase"
    )
    assert error_code(result) == "CONFIRMATION_REQUIRED"
    assert result.error is not None and result.error.retry == "with-confirmation"
    (pending,) = surface.registry.confirmations.pending()
    assert details(result) == {
        "confirmationId": pending.confirmation_id,
        "summary": pending.summary,
        "expiresAt": pending.expires_at,
        "effect": "destructive",
        "origin": "client",
    }
    assert result.to_json()["error"] == result.error.to_json()


async def test_AS_ADAPTER_002_outputs_are_relayed_unchanged() -> None:
    surface = devices_surface(selected=["d3"])
    read = await tool(toolset_for(surface.registry), READ).execute(None, tool_call_id="r")
    assert read.ok and read.output == {"selectedIds": ["d3"]}
    assert read.capability_id == "view:devices.table.readState"
    assert read.surface_version == surface.registry.version


# --------------------------------------------------------------------------- change feed


def _listen(toolset: Any) -> list[list[AgentTool]]:
    seen: list[list[AgentTool]] = []
    toolset.subscribe(seen.append)
    return seen


def test_subscribe_fires_when_state_changes_and_hands_over_the_new_catalog() -> None:
    surface = devices_surface()
    toolset = toolset_for(surface.registry)
    toolset.tools()
    seen = _listen(toolset)
    surface.handle.update(availability={"selectRows": False})
    assert len(seen) == 1
    assert {t.name: t.state.available for t in seen[0]}[SELECT] is False


def test_subscribe_fires_when_a_component_mounts_and_unmounts() -> None:
    surface = devices_surface()
    toolset = toolset_for(surface.registry)
    toolset.tools()
    seen = _listen(toolset)
    handle = surface.registry.register(bind_devices(devices_contract("aux.panel"), DevicesState()))
    handle.close()
    assert [len(tools) for tools in seen] == [7, 4]


def test_subscribe_is_silent_when_nothing_changed() -> None:
    surface = devices_surface()
    toolset = toolset_for(surface.registry)
    toolset.tools()
    seen = _listen(toolset)
    surface.handle.invalidate()  # a version bump with an identical catalog
    surface.handle.update(availability={"selectRows": True})  # already available: no change
    surface.handle.invalidate()
    assert seen == []


def test_subscribe_compares_with_the_catalog_the_host_last_saw() -> None:
    surface = devices_surface()
    toolset = toolset_for(surface.registry)
    toolset.tools()
    surface.handle.update(availability={"selectRows": False})  # nobody is listening yet
    assert tool(toolset, SELECT).state.available is False  # the host has now seen the change
    seen = _listen(toolset)
    surface.handle.update(availability={"selectRows": None})  # back to what it was at first
    assert len(seen) == 1
    assert {t.name: t.state.available for t in seen[0]}[SELECT] is True


def test_a_failing_listener_does_not_stop_the_others() -> None:
    surface = devices_surface()
    toolset = toolset_for(surface.registry)
    toolset.tools()

    def broken(tools: list[AgentTool]) -> None:
        raise RuntimeError("listener bug")

    toolset.subscribe(broken)
    seen = _listen(toolset)
    surface.handle.update(enabled=False)
    assert len(seen) == 1


def test_unsubscribe_and_dispose_stop_notifications() -> None:
    surface = devices_surface()
    toolset = toolset_for(surface.registry)
    toolset.tools()
    kept: list[Any] = []
    dropped: list[Any] = []
    toolset.subscribe(kept.append)
    unsubscribe = toolset.subscribe(dropped.append)
    unsubscribe()
    unsubscribe()  # idempotent
    surface.handle.update(availability={"selectRows": False})
    assert len(kept) == 1 and dropped == []
    toolset.close()
    toolset.close()  # idempotent
    surface.handle.update(availability={"selectRows": None})
    assert len(kept) == 1


def test_dispose_releases_the_registry_subscription() -> None:
    surface = devices_surface()
    bus = surface.registry._events  # no other subscriber on this registry
    assert not bus.has_listeners
    toolset = toolset_for(surface.registry)
    assert bus.has_listeners
    toolset.close()
    assert not bus.has_listeners


def test_wire_name_map_covers_the_catalog_tools_returned() -> None:
    surface = devices_surface()
    toolset = toolset_for(surface.registry)
    tools = toolset.tools()
    mapping = toolset.wire_name_map()
    assert set(mapping) == {t.name for t in tools}
    assert all(mapping[t.name] == t.capability_id for t in tools)
    # A copy: mutating it cannot corrupt the toolset's own map.
    mapping.clear()  # type: ignore[attr-defined]
    assert toolset.wire_name_map()[DISABLE] == "domain:devices.disable"


def test_procedure_references_from_several_components_get_distinct_tools() -> None:
    registry = make_registry([devices_contract(), devices_contract("aux.panel"), disable_contract()], procedure_executor=lambda cid, value, ctx: {"disabled": 0})
    a, b = DevicesState(["d1"]), DevicesState(["d2"])
    registry.register(bind_devices(devices_contract(), a, "main", procedure=disable_contract()))
    registry.register(bind_devices(devices_contract("aux.panel"), b, "side", procedure=disable_contract()))
    toolset = toolset_for(registry)
    procedures = [t for t in toolset.tools() if t.kind == "procedure"]
    assert sorted(t.name for t in procedures) == [f"{DISABLE}_at_main", f"{DISABLE}_at_side"]
    mapping = toolset.wire_name_map()
    assert {mapping[t.name] for t in procedures} == {"domain:devices.disable"}


async def test_AS_ADAPTER_001_non_json_input_is_a_result_not_an_exception() -> None:
    surface = devices_surface()
    select = tool(toolset_for(surface.registry), SELECT)
    result = await select.execute({"ids": {"d1", "d2"}}, tool_call_id="set")
    assert error_code(result) == "INVALID_INPUT"
    assert result.invocation_id == "set"
    assert surface.state.calls == []
