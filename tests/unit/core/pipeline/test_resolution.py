"""Resolution, staleness and availability (phases 2 and 3).

AS-STALE-001/002, AS-BOUND-001, AS-AVAIL-001.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentsurface import Decision, Limits, Policy, PolicyContext

from .helpers import (
    A,
    DevicesState,
    advance,
    bind_table,
    bind_toolbar,
    details_of,
    devices_table,
    disable_procedure,
    make_registry,
    toolbar,
)

SELECT = "view:devices.table.selectRows"


def table_registry(**options: Any) -> tuple[Any, Any, DevicesState]:
    contract = devices_table()
    registry = make_registry([contract], **options)
    return registry, contract, DevicesState()


# --------------------------------------------------------------------------- AS-STALE-001


async def test_AS_STALE_001_replaced_registration_is_stale_with_the_live_id() -> None:
    registry, contract, state = table_registry()
    first = registry.register(bind_table(contract, state))
    first.close()
    second = registry.register(bind_table(contract, state))
    result = await registry.invoke(
        {"capabilityId": SELECT, "input": {"ids": ["d1"]}, "registrationId": first.registration_id}
    )
    assert result.code == "STALE_CAPABILITY"
    assert result.error.retry == "after-refresh"
    assert details_of(result) == {
        "reason": "registration-replaced",
        "liveRegistrationId": second.registration_id,
    }
    assert state.select_calls == []
    live = await registry.invoke(
        {"capabilityId": SELECT, "input": {"ids": ["d1"]}, "registrationId": second.registration_id}
    )
    assert live.ok


async def test_AS_STALE_001_replace_on_duplicate_is_reported_as_replaced() -> None:
    registry, contract, state = table_registry(on_duplicate_instance="replace")
    first = registry.register(bind_table(contract, state))
    second = registry.register(bind_table(contract, state))
    assert first.status == "unregistered" and second.status == "active"
    result = await registry.invoke(
        {"capabilityId": SELECT, "input": {"ids": ["d1"]}, "registrationId": first.registration_id}
    )
    assert details_of(result)["reason"] == "registration-replaced"


async def test_AS_STALE_001_unknown_registration_or_other_surface_is_a_reload() -> None:
    registry, contract, state = table_registry()
    live = registry.register(bind_table(contract, state))
    unknown = await registry.invoke(
        {"capabilityId": SELECT, "input": {"ids": ["d1"]}, "registrationId": "reg_from_another_page"}
    )
    assert unknown.code == "STALE_CAPABILITY"
    assert details_of(unknown) == {"reason": "surface-reloaded", "liveRegistrationId": live.registration_id}
    other_surface = await registry.invoke(
        {"capabilityId": SELECT, "input": {"ids": ["d1"]}, "surfaceId": "srf_previous_page_load"}
    )
    assert other_surface.code == "STALE_CAPABILITY"
    assert details_of(other_surface)["reason"] == "surface-reloaded"
    same_surface = await registry.invoke(
        {"capabilityId": SELECT, "input": {"ids": ["d1"]}, "surfaceId": registry.surface_id}
    )
    assert same_surface.ok
    assert state.select_calls == [{"ids": ["d1"]}]


async def test_AS_STALE_001_tombstone_without_replacement_is_component_unmounted() -> None:
    registry, contract, state = table_registry()
    handle = registry.register(bind_table(contract, state))
    handle.close()
    by_id = await registry.invoke(
        {"capabilityId": SELECT, "input": {"ids": ["d1"]}, "registrationId": handle.registration_id}
    )
    assert by_id.code == "COMPONENT_UNMOUNTED"
    assert details_of(by_id) == {"phase": "resolve"}
    # Without a registrationId, a recent tombstone holding the capability is just as precise.
    by_capability = await registry.invoke({"capabilityId": SELECT, "input": {"ids": ["d1"]}})
    assert by_capability.code == "COMPONENT_UNMOUNTED"
    by_instance = await registry.invoke(
        {"capabilityId": SELECT, "input": {"ids": ["d1"]}, "instanceId": "default"}
    )
    assert by_instance.code == "COMPONENT_UNMOUNTED"
    other_instance = await registry.invoke(
        {"capabilityId": SELECT, "input": {"ids": ["d1"]}, "instanceId": "zz"}
    )
    assert other_instance.code == "CAPABILITY_NOT_FOUND"
    assert state.select_calls == []


async def test_AS_STALE_001_unknown_capability_is_not_found_without_details() -> None:
    registry, contract, state = table_registry()
    registry.register(bind_table(contract, state))
    for cid in ("view:devices.table.nope", "view:other.thing.go", "domain:devices.disable", "", "garbage"):
        result = await registry.invoke({"capabilityId": cid, "input": {}})
        assert result.code == "CAPABILITY_NOT_FOUND", cid
        assert result.error.details is None
        assert result.error.retry == "after-refresh"


async def test_AS_STALE_001_several_instances_are_ambiguous_until_targeted() -> None:
    registry, contract, state = table_registry()
    left = registry.register(bind_table(contract, state, instance_id="left"))
    right = registry.register(bind_table(contract, state, instance_id="right"))
    result = await registry.invoke({"capabilityId": SELECT, "input": {"ids": ["d1"]}})
    assert result.code == "AMBIGUOUS_INSTANCE"
    assert result.error.retry == "with-changes"
    assert details_of(result)["instances"] == [
        {"instanceId": "left", "registrationId": left.registration_id, "description": "The devices table"},
        {"instanceId": "right", "registrationId": right.registration_id, "description": "The devices table"},
    ]
    assert state.select_calls == []
    assert (
        await registry.invoke({"capabilityId": SELECT, "input": {"ids": ["d1"]}, "instanceId": "right"})
    ).ok
    by_reg = await registry.invoke(
        {"capabilityId": SELECT, "input": {"ids": ["d2"]}, "registrationId": left.registration_id}
    )
    assert by_reg.ok
    mismatched = await registry.invoke(
        {
            "capabilityId": SELECT,
            "input": {"ids": ["d2"]},
            "registrationId": left.registration_id,
            "instanceId": "right",
        }
    )
    assert mismatched.code == "CAPABILITY_NOT_FOUND"
    assert len(state.select_calls) == 2


async def test_AS_STALE_001_ambiguous_procedure_references_name_their_context() -> None:
    proc = disable_procedure(effect="server-query")
    tb = toolbar()
    registry = make_registry([tb, proc], procedure_executor=lambda cid, value, ctx: None)
    state = DevicesState()
    state.selected = ["d1"]
    one = registry.register(bind_toolbar(tb, state, proc, instance_id="one"))
    two = registry.register(bind_toolbar(tb, state, proc, instance_id="two"))
    result = await registry.invoke({"capabilityId": "domain:devices.disable", "input": {}})
    assert result.code == "AMBIGUOUS_INSTANCE"
    assert details_of(result)["instances"] == [
        {
            "instanceId": "one",
            "registrationId": one.registration_id,
            "context": {"type": "devices.toolbar", "instanceId": "one"},
        },
        {
            "instanceId": "two",
            "registrationId": two.registration_id,
            "context": {"type": "devices.toolbar", "instanceId": "two"},
        },
    ]
    ok = await registry.invoke(
        {"capabilityId": "domain:devices.disable", "input": {}, "registrationId": two.registration_id}
    )
    assert ok.ok


# --------------------------------------------------------------------------- AS-STALE-002


@pytest.mark.parametrize(
    ("effect", "enforced"),
    [
        ("destructive", True),
        ("external-side-effect", True),
        ("server-mutation", False),
        ("server-query", False),
    ],
)
async def test_AS_STALE_002_version_hint_is_enforced_only_for_dangerous_effects(
    effect: str, enforced: bool
) -> None:
    proc = disable_procedure(effect=effect, confirmation="required")
    tb = toolbar()
    table = devices_table()
    calls: list[Any] = []
    registry = make_registry([tb, proc, table], procedure_executor=lambda cid, value, ctx: calls.append(value))
    state = DevicesState()
    state.selected = ["d1"]
    registry.register(bind_toolbar(tb, state, proc))
    stale_version = registry.version
    registry.register(bind_table(table, state))  # the surface moves for an unrelated reason
    assert registry.version != stale_version
    result = await registry.invoke(
        {"capabilityId": "domain:devices.disable", "input": {}, "surfaceVersion": stale_version}
    )
    if enforced:
        assert result.code == "STALE_CAPABILITY"
        assert details_of(result)["reason"] == "surface-version-mismatch"
        assert registry.confirmations.pending() == []  # staleness is checked before confirmation
    else:
        assert result.code == "CONFIRMATION_REQUIRED"
    current = await registry.invoke(
        {"capabilityId": "domain:devices.disable", "input": {}, "surfaceVersion": registry.version}
    )
    assert current.code == "CONFIRMATION_REQUIRED"
    assert calls == []


async def test_AS_STALE_002_view_actions_ignore_the_version_hint() -> None:
    registry, contract, state = table_registry()
    registry.register(bind_table(contract, state))
    result = await registry.invoke({"capabilityId": SELECT, "input": {"ids": ["d1"]}, "surfaceVersion": "0"})
    assert registry.version != "0"
    assert result.ok
    assert result.surface_version == registry.version


# --------------------------------------------------------------------------- AS-BOUND-001


async def test_AS_BOUND_001_tombstone_ttl_decays_unmounted_to_not_found() -> None:
    registry, contract, state = table_registry(limits=Limits(tombstone_ttl=1.0))
    handle = registry.register(bind_table(contract, state))
    handle.close()
    request = {"capabilityId": SELECT, "input": {"ids": ["d1"]}, "registrationId": handle.registration_id}
    assert (await registry.invoke({**request, "invocationId": "t1"})).code == "COMPONENT_UNMOUNTED"
    await advance(registry, 1.0)
    assert (await registry.invoke({**request, "invocationId": "t2"})).code == "COMPONENT_UNMOUNTED"
    await advance(registry, 0.001)
    assert (await registry.invoke({**request, "invocationId": "t3"})).code == "CAPABILITY_NOT_FOUND"
    unscoped = await registry.invoke({"capabilityId": SELECT, "input": {"ids": ["d1"]}})
    assert unscoped.code == "CAPABILITY_NOT_FOUND"


async def test_AS_BOUND_001_tombstones_evict_oldest_first_at_the_size_cap() -> None:
    registry, contract, state = table_registry(limits=Limits(tombstone_size=1))
    a = registry.register(bind_table(contract, state, instance_id="a"))
    b = registry.register(bind_table(contract, state, instance_id="b"))
    a.close()
    b.close()  # evicts a's tombstone
    evicted = await registry.invoke(
        {
            "capabilityId": SELECT,
            "input": {"ids": ["d1"]},
            "instanceId": "a",
            "registrationId": a.registration_id,
        }
    )
    assert evicted.code == "CAPABILITY_NOT_FOUND"
    kept = await registry.invoke(
        {
            "capabilityId": SELECT,
            "input": {"ids": ["d1"]},
            "instanceId": "b",
            "registrationId": b.registration_id,
        }
    )
    assert kept.code == "COMPONENT_UNMOUNTED"
    assert len(registry._tombstones) == 1


# --------------------------------------------------------------------------- AS-AVAIL-001


async def test_AS_AVAIL_001_when_is_re_evaluated_at_invocation_with_the_descriptor_reason() -> None:
    registry, contract, state = table_registry()
    has_rows = {"value": True}
    registry.register(
        bind_table(
            contract,
            state,
            select_options={"when": lambda: has_rows["value"], "unavailable_reason": "Load the table first"},
        )
    )
    snap = registry.snapshot()
    assert snap.find(SELECT)[0].available is True
    has_rows["value"] = False  # the state changed after discovery; no version bump
    result = await registry.invoke({"capabilityId": SELECT, "input": {"ids": ["d1"]}})
    assert result.code == "CAPABILITY_NOT_AVAILABLE"
    assert result.error.retry == "after-refresh"
    descriptor = registry.snapshot().find(SELECT)[0]
    assert descriptor.available is False
    assert (
        details_of(result) == {"reason": descriptor.unavailable_reason} == {"reason": "Load the table first"}
    )
    assert state.select_calls == []
    has_rows["value"] = True
    assert (await registry.invoke({"capabilityId": SELECT, "input": {"ids": ["d1"]}})).ok


async def test_AS_AVAIL_001_enabled_overrides_and_throwing_when() -> None:
    registry, contract, state = table_registry()

    def explode() -> bool:
        raise RuntimeError("when blew up")

    handle = registry.register(
        bind_table(contract, state, read_options={"when": explode, "unavailable_reason": "never"})
    )
    read = await registry.invoke({"capabilityId": "view:devices.table.visibleRows"})
    assert read.code == "CAPABILITY_NOT_AVAILABLE"
    assert details_of(read) == {"reason": "when-error"}

    handle.update(availability={"selectRows": {"available": False, "reason": "Rows are locked"}})
    locked = await registry.invoke({"capabilityId": SELECT, "input": {"ids": ["d1"]}})
    assert details_of(locked) == {"reason": "Rows are locked"}
    handle.update(availability={"selectRows": None})
    assert (await registry.invoke({"capabilityId": SELECT, "input": {"ids": ["d1"]}})).ok

    handle.update(enabled=False)
    disabled = await registry.invoke({"capabilityId": SELECT, "input": {"ids": ["d2"]}})
    assert disabled.code == "CAPABILITY_NOT_AVAILABLE"
    assert details_of(disabled) == {"reason": registry.snapshot().find(SELECT)[0].unavailable_reason}
    assert state.select_calls == [{"ids": ["d1"]}]


async def test_AS_AVAIL_001_availability_is_checked_before_authorization_and_input() -> None:
    seen: list[str] = []

    class Spy(Policy):
        name = "spy"

        def on_authorize(self, ctx: PolicyContext) -> None:
            seen.append("authorize")

    registry, contract, state = table_registry(policies=[Spy()])
    registry.register(bind_table(contract, state, select_options={"when": lambda: False}))
    result = await registry.invoke({"capabilityId": SELECT, "input": {"ids": "garbage"}})
    assert result.code == "CAPABILITY_NOT_AVAILABLE"
    assert seen == []


async def test_AS_AVAIL_001_policy_disable_at_invocation_carries_the_policy_reason() -> None:
    class Maintenance(Policy):
        name = "maintenance"

        def __init__(self) -> None:
            self.active = False

        def on_discovery(self, ctx: PolicyContext) -> Decision | None:
            return Decision("disable", "maintenance window") if self.active else None

    policy = Maintenance()
    registry, contract, state = table_registry(policies=[policy])
    registry.register(bind_table(contract, state))
    policy.active = True
    result = await registry.invoke({"capabilityId": SELECT, "input": {"ids": ["d1"]}}, consumer=A)
    assert result.code == "CAPABILITY_NOT_AVAILABLE"
    assert details_of(result) == {"reason": "maintenance window"}


# --------------------------------------------------------------------------- the instance index


def _sidebar() -> Any:
    """A second component type that hosts the same procedure reference as the toolbar."""
    from agentsurface.lowlevel import ComponentContract, ObservationContract

    return ComponentContract(
        type="devices.sidebar",
        description="The devices sidebar",
        observations={"mode": ObservationContract("Sidebar mode", output={"type": "string"})},
    )


async def test_a_named_instance_held_by_two_components_is_still_ambiguous() -> None:
    """Two component types on one instance id can hold one procedure: naming that instance
    picks neither, as a search of every holder would; after one unmounts, the other is picked."""
    proc = disable_procedure(effect="server-query")
    tb, side = toolbar(), _sidebar()
    ran: list[str] = []
    registry = make_registry([tb, side, proc], procedure_executor=lambda cid, value, ctx: ran.append(cid))
    state = DevicesState()
    state.selected = ["d1"]
    bar = registry.register(bind_toolbar(tb, state, proc, instance_id="main"))
    registry.register(bind_toolbar(side, state, proc, instance_id="main"))
    call = {"capabilityId": "domain:devices.disable", "input": {}, "instanceId": "main"}
    ambiguous = await registry.invoke(call)
    assert ambiguous.code == "AMBIGUOUS_INSTANCE"
    assert [i["context"]["type"] for i in details_of(ambiguous)["instances"]] == [
        "devices.sidebar", "devices.toolbar",
    ]
    bar.close()
    assert (await registry.invoke(call)).ok
    assert ran == ["domain:devices.disable"]


async def test_a_named_instance_follows_mounts_and_unmounts() -> None:
    """A call naming an instance reaches the registration live now, after each change."""
    registry, contract, state = table_registry()
    reads: list[str] = []

    def reader(name: str) -> Any:
        return lambda ctx: reads.append(name) or {"rows": []}

    call = {"capabilityId": "view:devices.table.visibleRows", "instanceId": "left"}
    first = registry.register(bind_table(contract, state, instance_id="left", read=reader("first")))
    registry.register(bind_table(contract, state, instance_id="right", read=reader("right")))
    assert (await registry.invoke(call)).ok
    first.close()
    gone = await registry.invoke(call)
    assert gone.code == "COMPONENT_UNMOUNTED"
    second = registry.register(bind_table(contract, state, instance_id="left", read=reader("second")))
    assert (await registry.invoke(call)).ok
    stale = await registry.invoke({**call, "registrationId": first.registration_id})
    assert details_of(stale) == {"reason": "registration-replaced", "liveRegistrationId": second.registration_id}
    assert reads == ["first", "second"]
