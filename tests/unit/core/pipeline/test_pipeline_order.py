"""The fixed phase order and procedure binding semantics.

AS-INVOKE-001..005 (two-stage policy pipeline, bindings before confirmation),
AS-BIND-001/002 (schema surgery, locked-by-default binding), and the procedure executor path.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentsurface import (
    ActionContext,
    AgentComponent,
    CapabilityFailure,
    Policy,
    PolicyContext,
    PreconditionFailure,
    action,
)
from agentsurface._core.errors import error

from .helpers import (
    A,
    DevicesState,
    bind_table,
    bind_toolbar,
    details_of,
    devices_table,
    disable_procedure,
    make_registry,
    toolbar,
)


class Probe(Policy):
    """Records what each phase saw."""

    def __init__(self, name: str, log: list[str]) -> None:
        self.name = name
        self.log = log
        self.authorize_ctx: list[PolicyContext] = []
        self.invoke_inputs: list[Any] = []

    def on_authorize(self, ctx: PolicyContext) -> None:
        self.log.append(f"{self.name}:authorize")
        self.authorize_ctx.append(ctx)

    async def on_invoke(self, ctx: PolicyContext) -> None:  # async hooks are awaited
        self.log.append(f"{self.name}:invoke")
        self.invoke_inputs.append(ctx.effective_input)


def procedure_setup(
    *,
    effect: str = "server-mutation",
    policies: tuple[Policy, ...] = (),
    registry_policies: tuple[Policy, ...] = (),
    log: list[str] | None = None,
    executor: Any = None,
    **bind_options: Any,
) -> tuple[Any, DevicesState, list[Any]]:
    state = DevicesState()
    state.selected = ["d1"]
    proc = disable_procedure(effect=effect)
    tb = toolbar()
    calls: list[Any] = []
    trail = log if log is not None else []

    async def recording(capability_id: str, value: Any, ctx: ActionContext) -> Any:
        trail.append("execute")
        calls.append((capability_id, value, ctx))
        return {"disabled": len(value["deviceIds"])}

    registry = make_registry([tb, proc], policies=registry_policies, procedure_executor=executor or recording)
    registry.register(bind_toolbar(tb, state, proc, policies=policies, **bind_options))
    return registry, state, calls


# --------------------------------------------------------------------------- AS-INVOKE-001


async def test_AS_INVOKE_001_authorize_runs_before_binding_and_never_sees_input() -> None:
    log: list[str] = []
    probe = Probe("probe", log)
    state_box: dict[str, Any] = {}

    def bind() -> dict[str, Any]:
        log.append("bind")
        return {"deviceIds": list(state_box["state"].selected)}

    registry, state, _calls = procedure_setup(registry_policies=(probe,), log=log, bind=bind)
    state_box["state"] = state
    result = await registry.invoke(
        {"capabilityId": "domain:devices.disable", "input": {"reason": "SENTINEL-agent-text"}},
        consumer=A,
    )
    assert result.ok, result
    assert log == ["probe:authorize", "bind", "probe:invoke", "execute"]
    (ctx,) = probe.authorize_ctx
    assert ctx.effective_input is None
    assert "SENTINEL" not in repr(ctx)
    assert ctx.invocation_id == result.invocation_id
    assert ctx.consumer == A and ctx.kind == "procedure" and ctx.effect == "server-mutation"


async def test_AS_INVOKE_001_authorize_refusal_stops_before_input_is_parsed() -> None:
    class Deny(Policy):
        name = "deny"

        def on_authorize(self, ctx: PolicyContext) -> None:
            raise CapabilityFailure(error("NOT_AUTHORIZED", "Not permitted.", origin="client"))

    registry, _state, calls = procedure_setup(registry_policies=(Deny(),))
    # Even malformed input is not looked at: authorization wins (phase 4 before phase 5).
    result = await registry.invoke(
        {"capabilityId": "domain:devices.disable", "input": {"deviceIds": "not-a-list", "x": 1}}
    )
    assert result.code == "NOT_AUTHORIZED"
    assert details_of(result) == {"origin": "client"}
    assert calls == []


# --------------------------------------------------------------------------- AS-INVOKE-002


async def test_AS_INVOKE_002_procedure_policies_see_merged_bound_values() -> None:
    probe = Probe("probe", [])
    registry, state, calls = procedure_setup(policies=(probe,))
    state.selected = ["d1", "d3"]
    result = await registry.invoke(
        {"capabilityId": "domain:devices.disable", "input": {"reason": "maintenance"}}, consumer=A
    )
    assert result.ok
    assert probe.invoke_inputs == [{"reason": "maintenance", "deviceIds": ["d1", "d3"]}]
    # The executor receives exactly the value the policy saw.
    assert calls[0][1] == {"reason": "maintenance", "deviceIds": ["d1", "d3"]}


async def test_AS_INVOKE_002_invalid_input_never_reaches_phase_six() -> None:
    probe = Probe("probe", [])
    contract = devices_table()
    registry = make_registry([contract])
    state = DevicesState()
    registry.register(bind_table(contract, state, select_options={"policies": [probe]}))
    invalid = await registry.invoke({"capabilityId": "view:devices.table.selectRows", "input": {"ids": []}})
    assert invalid.code == "INVALID_INPUT"
    assert probe.invoke_inputs == []
    assert probe.authorize_ctx  # phase 4 did run
    ok = await registry.invoke({"capabilityId": "view:devices.table.selectRows", "input": {"ids": ["d1"]}})
    assert ok.ok
    assert probe.invoke_inputs == [{"ids": ["d1"]}]
    assert state.selected == ["d1"]


async def test_AS_INVOKE_002_policy_chain_runs_registry_component_capability() -> None:
    log: list[str] = []
    contract = devices_table()
    registry = make_registry([contract], policies=[Probe("registry", log)])
    registry.register(
        bind_table(
            contract,
            DevicesState(),
            select_options={"policies": [Probe("capability", log)]},
            policies=[Probe("component", log)],
        )
    )
    result = await registry.invoke(
        {"capabilityId": "view:devices.table.selectRows", "input": {"ids": ["d2"]}}
    )
    assert result.ok
    assert log == [
        "registry:authorize",
        "component:authorize",
        "capability:authorize",
        "registry:invoke",
        "component:invoke",
        "capability:invoke",
    ]


async def test_AS_INVOKE_002_a_policy_that_crashes_fails_closed_without_leaking() -> None:
    class Broken(Policy):
        name = "broken"

        def on_invoke(self, ctx: PolicyContext) -> None:
            raise RuntimeError("secret internal state 0xdeadbeef")

    contract = devices_table()
    registry = make_registry([contract])
    state = DevicesState()
    registry.register(bind_table(contract, state, select_options={"policies": [Broken()]}))
    result = await registry.invoke(
        {"capabilityId": "view:devices.table.selectRows", "input": {"ids": ["d1"]}}
    )
    assert result.code == "NOT_AUTHORIZED"
    assert "secret" not in str(result.to_json())
    assert state.select_calls == []


# --------------------------------------------------------------------------- AS-INVOKE-003


@pytest.mark.parametrize(
    "bind",
    [
        pytest.param(lambda: (_ for _ in ()).throw(RuntimeError("ui state exploded")), id="raises"),
        pytest.param(lambda: {"wrong": ["d1"]}, id="wrong-keys"),
        pytest.param(lambda: {"deviceIds": ["d1"], "extra": 1}, id="extra-keys"),
        pytest.param(lambda: ["d1"], id="not-a-mapping"),
        pytest.param(lambda: {"deviceIds": {1, 2}}, id="not-json"),
    ],
)
async def test_AS_INVOKE_003_malformed_binding_fails_before_any_confirmation_record(bind: Any) -> None:
    events: list[str] = []
    registry, _state, calls = procedure_setup(effect="destructive", bind=bind)
    registry.subscribe(lambda e: events.append(e.type))
    result = await registry.invoke({"capabilityId": "domain:devices.disable", "input": {}})
    assert result.code == "PRECONDITION_FAILED"
    assert result.error.retry == "after-refresh"
    assert details_of(result) == {"reason": "binding-failed"}
    assert "exploded" not in result.error.message
    assert registry.confirmations.pending() == []
    assert "confirmation-requested" not in events
    assert calls == []


# --------------------------------------------------------------------------- AS-INVOKE-004


async def test_AS_INVOKE_004_supplied_locked_field_fails_before_any_confirmation_record() -> None:
    registry, _state, calls = procedure_setup(effect="destructive")
    result = await registry.invoke(
        {"capabilityId": "domain:devices.disable", "input": {"deviceIds": ["victim"], "reason": "x"}}
    )
    assert result.code == "INVALID_INPUT"
    assert details_of(result)["lockedFields"] == ["deviceIds"]
    assert details_of(result)["issues"][0]["path"] == "/deviceIds"
    assert "victim" not in str(result.to_json())
    assert registry.confirmations.pending() == []
    assert calls == []


# --------------------------------------------------------------------------- AS-INVOKE-005


async def test_AS_INVOKE_005_confirmation_shows_live_bound_values_changed_after_discovery() -> None:
    registry, state, calls = procedure_setup(effect="destructive")
    state.selected = ["d1"]
    snap = registry.snapshot(consumer=A)
    assert [p.procedure_id for p in snap.procedures] == ["domain:devices.disable"]
    state.selected = ["d1", "d3"]  # the UI moved after discovery, before the call
    result = await registry.invoke(
        {
            "capabilityId": "domain:devices.disable",
            "input": {"reason": "cleanup"},
            "registrationId": snap.procedures[0].registration_id,
            "surfaceVersion": snap.surface_version,
        },
        consumer=A,
    )
    assert result.code == "CONFIRMATION_REQUIRED"
    (pending,) = registry.confirmations.pending()
    assert pending.input == {"deviceIds": ["d1", "d3"], "reason": "cleanup"}
    assert pending.effect == "destructive"
    assert pending.consumer_key == "embedded:adapter-a"
    assert pending.registration_id == snap.procedures[0].registration_id
    assert '"d3"' in pending.summary and pending.summary.startswith("Disable the given devices")
    assert details_of(result)["summary"] == pending.summary
    assert details_of(result)["effect"] == "destructive"
    assert details_of(result)["origin"] == "client"
    assert calls == []

    # Approve what the user saw; the retry executes with exactly that effective input.
    assert registry.confirmations.resolve(pending.confirmation_id, approved=True)
    done = await registry.invoke(
        {
            "invocationId": result.invocation_id,
            "capabilityId": "domain:devices.disable",
            "input": {"reason": "cleanup"},
            "registrationId": snap.procedures[0].registration_id,
            "surfaceVersion": snap.surface_version,
            "confirmationId": pending.confirmation_id,
        },
        consumer=A,
    )
    assert done.ok and done.output == {"disabled": 2}
    ((_cid, value, ctx),) = calls
    assert value == {"deviceIds": ["d1", "d3"], "reason": "cleanup"}
    assert ctx.confirmation is not None and ctx.confirmation["id"] == pending.confirmation_id


# --------------------------------------------------------------------------- AS-BIND-001


def test_AS_BIND_001_agent_schema_is_the_contract_schema_minus_locked_fields() -> None:
    proc = disable_procedure()
    locked = proc.reference(bind=lambda: {"deviceIds": []}, bound_fields=["deviceIds"])
    assert set(locked.agent_schema["properties"]) == {"reason"}
    assert "required" not in locked.agent_schema  # the only required key was bound
    assert locked.locked_fields == ("deviceIds",)

    both = proc.reference(bind=lambda: {"deviceIds": [], "reason": "r"}, bound_fields=["deviceIds", "reason"])
    assert dict(both.agent_schema["properties"]) == {}
    assert both.agent_schema["additionalProperties"] is False

    none = proc.reference()
    assert set(none.agent_schema["properties"]) == {"deviceIds", "reason"}
    assert list(none.agent_schema["required"]) == ["deviceIds"]

    open_ = proc.reference(
        bind=lambda: {"deviceIds": []}, bound_fields=["deviceIds"], overridable=["deviceIds"]
    )
    # Overridable: visible but optional (the binding supplies a default).
    assert set(open_.agent_schema["properties"]) == {"deviceIds", "reason"}
    assert "required" not in open_.agent_schema
    assert open_.locked_fields == ()
    # The contract itself is untouched.
    assert list(proc.input.json_schema["required"]) == ["deviceIds"]


async def test_AS_BIND_001_snapshot_publishes_the_reduced_schema_and_bound_fields() -> None:
    registry, _state, _calls = procedure_setup()
    (proc,) = registry.snapshot().procedures
    assert set(proc.input_schema["properties"]) == {"reason"}
    assert [b.to_json() for b in proc.bound_fields] == [
        {"path": "deviceIds", "locked": True, "source": "ui-state"}
    ]


# --------------------------------------------------------------------------- AS-BIND-002


async def test_AS_BIND_002_overridable_field_is_a_default_the_agent_may_override() -> None:
    registry, state, calls = procedure_setup(overridable=("deviceIds",))
    state.selected = ["d1"]
    defaulted = await registry.invoke({"capabilityId": "domain:devices.disable", "input": {}})
    assert defaulted.ok
    overridden = await registry.invoke(
        {"capabilityId": "domain:devices.disable", "input": {"deviceIds": ["d9"]}}
    )
    assert overridden.ok
    assert [c[1] for c in calls] == [{"deviceIds": ["d1"]}, {"deviceIds": ["d9"]}]


async def test_AS_BIND_002_merged_input_is_revalidated_against_the_full_schema() -> None:
    registry, state, calls = procedure_setup()
    state.selected = []  # the bound value violates minItems: 1
    result = await registry.invoke({"capabilityId": "domain:devices.disable", "input": {}})
    assert result.code == "INVALID_INPUT"
    assert details_of(result)["issues"][0]["path"] == "/deviceIds"
    # An unknown agent key is refused by the full schema (additionalProperties: false).
    state.selected = ["d1"]
    extra = await registry.invoke({"capabilityId": "domain:devices.disable", "input": {"bogus": 1}})
    assert extra.code == "INVALID_INPUT"
    assert calls == []


async def test_AS_BIND_002_binding_is_read_live_at_every_invocation() -> None:
    registry, state, calls = procedure_setup()
    for selection in (["d1"], ["d2", "d3"], ["d4"]):
        state.selected = selection
        assert (await registry.invoke({"capabilityId": "domain:devices.disable", "input": {}})).ok
    assert [c[1]["deviceIds"] for c in calls] == [["d1"], ["d2", "d3"], ["d4"]]


# --------------------------------------------------------------------------- executor


async def test_executor_typed_server_error_is_relayed() -> None:
    async def executor(cid: str, value: Any, ctx: ActionContext) -> Any:
        raise CapabilityFailure(error("NOT_AUTHORIZED", "The server refused this call.", origin="server"))

    registry, _state, _calls = procedure_setup(executor=executor)
    result = await registry.invoke({"capabilityId": "domain:devices.disable", "input": {}})
    assert result.code == "NOT_AUTHORIZED"
    assert result.error.retry == "no"
    assert details_of(result) == {"origin": "server"}
    assert result.error.message == "The server refused this call."


async def test_executor_crash_is_a_sanitized_transport_failure() -> None:
    def executor(cid: str, value: Any, ctx: ActionContext) -> Any:
        raise ConnectionError("POST https://internal.example/rpc?token=secret failed")

    registry, _state, _calls = procedure_setup(executor=executor)
    result = await registry.invoke({"capabilityId": "domain:devices.disable", "input": {}})
    assert result.code == "EXECUTION_FAILED"
    assert details_of(result) == {"reason": "transport"}
    assert "internal.example" not in result.error.message


async def test_executor_receives_capability_id_effective_input_and_context() -> None:
    registry, state, calls = procedure_setup()
    state.selected = ["d7"]
    result = await registry.invoke(
        {"capabilityId": "domain:devices.disable", "input": {"reason": "r"}, "invocationId": "inv-ctx"},
        consumer=A,
    )
    assert result.ok and result.output == {"disabled": 1}
    ((cid, value, ctx),) = calls
    assert cid == "domain:devices.disable"
    assert value == {"deviceIds": ["d7"], "reason": "r"}
    assert ctx.invocation_id == "inv-ctx" and ctx.consumer == A
    assert ctx.confirmation is None and not ctx.signal.aborted


# --------------------------------------------------------------------------- phase 7


class Editor(AgentComponent, type="conf.editor", description="An editor with a precondition"):
    def __init__(self) -> None:
        self.dirty = False
        self.saved: list[str] = []
        self.checked: list[str] = []

    @action("Save the draft under a title")
    def save(self, title: str) -> None:
        self.saved.append(title)

    @save.precondition
    def _can_save(self, title: str) -> PreconditionFailure | None:
        self.checked.append(title)
        if not self.dirty:
            return PreconditionFailure("Nothing to save yet; edit the draft first.", {"hint": "edit-first"})
        if title == "boom":
            raise RuntimeError("precondition bug with secret path /srv/x")
        if title == "typed":
            raise CapabilityFailure(error("PRECONDITION_FAILED", "Title is taken.", reason="duplicate-title"))
        return None


@pytest.mark.author_details
async def test_precondition_runs_after_input_validation_and_fails_with_changes() -> None:
    registry = make_registry([Editor])
    editor = Editor()
    registry.register(editor)
    invalid = await registry.invoke({"capabilityId": "view:conf.editor.save", "input": {"title": 5}})
    assert invalid.code == "INVALID_INPUT"
    assert editor.checked == []  # phase 5 failed: phase 7 never ran
    refused = await registry.invoke({"capabilityId": "view:conf.editor.save", "input": {"title": "a"}})
    assert refused.code == "PRECONDITION_FAILED"
    assert refused.error is not None and refused.error.retry == "with-changes"
    assert refused.error.message == "Nothing to save yet; edit the draft first."
    assert details_of(refused) == {"hint": "edit-first", "reason": "precondition"}
    editor.dirty = True
    broken = await registry.invoke({"capabilityId": "view:conf.editor.save", "input": {"title": "boom"}})
    assert broken.code == "PRECONDITION_FAILED" and details_of(broken) == {"reason": "precondition-error"}
    assert "/srv" not in str(broken.to_json())
    typed = await registry.invoke({"capabilityId": "view:conf.editor.save", "input": {"title": "typed"}})
    assert details_of(typed) == {"reason": "duplicate-title"}
    assert (await registry.invoke({"capabilityId": "view:conf.editor.save", "input": {"title": "ok"}})).ok
    assert editor.saved == ["ok"]
    assert editor.checked == ["a", "boom", "typed", "ok"]
