"""Core defects found by outside review (issue 9, part A), each pinned by what it checks."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_surface import (
    ActionContract,
    AgentComponent,
    ComponentContract,
    Consumer,
    DefinitionError,
    ProcedureContract,
    ProcedureReference,
    compile_manifest,
    create_capability_authority,
    create_registry,
    environment,
    tenant_boundary,
)
from agent_surface._core.audit import MemoryAuditSink
from agent_surface._core.ids import parse_capability_id, parse_procedure_id
from agent_surface._core.jsonvalue import canonical_json, digest, json_size
from agent_surface.toolset import create_agent_toolset
from agent_surface.wire_names import (
    WireNameEntry,
    assign_wire_names,
    decode_wire_name,
    encode_capability_id,
    is_wire_name,
)

CONSUMER = Consumer("copilot-panel", "embedded")
PING = ProcedureContract(id="domain:app.ping", description="Check the backend is up", effect="server-query")


async def _echo_executor(procedure_id: str, value: Any, ctx: Any) -> Any:
    return {"procedure": procedure_id}


def _toolbar_contract() -> ComponentContract:
    return ComponentContract(type="app.toolbar", description="The toolbar")


# --------------------------------------------------------------------------- item 1


def test_a_component_contract_may_declare_no_capability_of_its_own() -> None:
    contract = _toolbar_contract()
    assert dict(contract.observations) == {} and dict(contract.actions) == {}
    assert dict(contract.capability_ids) == {}
    assert contract.hash.startswith("sha256:")


async def test_a_toolbar_hosting_only_procedure_references_is_listed_and_callable() -> None:
    contract = _toolbar_contract()
    registry = create_registry(authority=create_capability_authority(compile_manifest([contract, PING])))
    registry.set_procedure_executor(_echo_executor)
    handle = registry.register(contract.bind(procedures=[PING.reference()]))
    assert handle.status == "active"

    snapshot = registry.snapshot(consumer=CONSUMER)
    assert [p.procedure_id for p in snapshot.procedures] == ["domain:app.ping"]
    assert [c.capability_id for c in snapshot.capabilities()] == ["domain:app.ping"]
    snapshot.to_json()  # serializable with an empty component

    toolset = create_agent_toolset(registry, consumer=CONSUMER, topology="embedded")
    assert [tool.name for tool in toolset.tools()] == ["domain_app__ping"]
    result = await registry.invoke({"capabilityId": "domain:app.ping"}, consumer=CONSUMER)
    assert result.ok and result.output == {"procedure": "domain:app.ping"}


def test_a_component_that_declares_nothing_yet_registers_with_an_empty_surface() -> None:
    contract = _toolbar_contract()
    registry = create_registry(authority=create_capability_authority(compile_manifest([contract])))
    assert registry.register(contract.bind()).status == "active"
    snapshot = registry.snapshot(consumer=CONSUMER)
    assert list(snapshot.capabilities()) == []
    toolset = create_agent_toolset(registry, consumer=CONSUMER, topology="embedded")
    assert toolset.tools() == []
    meta = create_agent_toolset(registry, consumer=CONSUMER, topology="embedded", mode="meta")
    assert len(meta.tools()) == 3  # the three fixed meta tools, over an empty surface


class Toolbar(AgentComponent, type="app.toolbar", description="The toolbar"):
    def agent_procedures(self) -> Sequence[ProcedureReference]:
        return (PING.reference(),)


def test_a_class_based_component_may_host_only_procedure_references() -> None:
    assert dict(Toolbar.contract.observations) == {} and dict(Toolbar.contract.actions) == {}
    registry = create_registry(authority=create_capability_authority(compile_manifest([Toolbar, PING])))
    registry.set_procedure_executor(_echo_executor)
    assert registry.register(Toolbar()).status == "active"
    assert [c.capability_id for c in registry.snapshot().capabilities()] == ["domain:app.ping"]


def test_a_class_based_component_with_no_members_at_all_is_expressible() -> None:
    class Placeholder(AgentComponent, type="app.placeholder", description="Mounted before it has tools"):
        pass

    assert Placeholder.contract.type == "app.placeholder"
    assert not Placeholder.contract.capability_ids


# --------------------------------------------------------------------------- item 2


@pytest.mark.parametrize(
    "procedure_id",
    ["domain:ping", "domain:devices.disable_all", "domain:a.0.b", "domain:Devices.Disable", "domain:v2/users.get"],
)
def test_domain_paths_are_opaque_procedure_ids(procedure_id: str) -> None:
    assert parse_procedure_id(procedure_id) == procedure_id
    parsed = parse_capability_id(procedure_id)
    assert parsed.plane == "domain" and parsed.path == procedure_id[len("domain:") :]
    assert str(parsed) == procedure_id
    contract = ProcedureContract(id=procedure_id, description="A backend call", effect="server-query")
    assert contract.id == procedure_id


@pytest.mark.parametrize(
    ("procedure_id", "says"),
    [
        ("domain:", "non-empty"),
        ("domain:devices.disable all", "whitespace and control characters"),
        ("domain:devices.\x00disable", "whitespace and control characters"),
        ("domain:devices.\u200bdisable", "whitespace and control characters"),
        ("domain:" + "a" * 122, "the limit is 128"),
    ],
)
def test_domain_paths_keep_their_limits(procedure_id: str, says: str) -> None:
    with pytest.raises(DefinitionError, match=says) as info:
        parse_procedure_id(procedure_id)
    assert info.value.code == "INVALID_ID"


def test_the_view_grammar_is_unchanged_by_opaque_domain_paths() -> None:
    for bad in ("view:devices.table.select_rows", "view:Devices.table.x", "view:ping"):
        with pytest.raises(DefinitionError):
            parse_capability_id(bad)


def test_a_plain_domain_path_keeps_its_faithful_wire_name() -> None:
    assert encode_capability_id("domain:ping") == "domain_ping"
    assert decode_wire_name("domain_ping") == "domain:ping"
    assert encode_capability_id("domain:a.0.b") == "domain_a__0__b"
    assert decode_wire_name("domain_a__0__b") == "domain:a.0.b"


@pytest.mark.parametrize("procedure_id", ["domain:devices.disable_all", "domain:v2/users.get", "domain:café.x"])
def test_a_path_the_wire_rule_cannot_carry_gets_the_hashed_name(procedure_id: str) -> None:
    name = encode_capability_id(procedure_id)
    assert is_wire_name(name)
    assert "_0_" in name
    assert decode_wire_name(name) is None
    catalog = assign_wire_names([WireNameEntry(procedure_id)])
    assert catalog.resolve(catalog.names[0]) == WireNameEntry(procedure_id)


def test_underscored_paths_that_would_meet_on_the_wire_get_distinct_names() -> None:
    assert encode_capability_id("domain:a_.b") != encode_capability_id("domain:a._b")
    assert encode_capability_id("domain:readState__0") != encode_capability_id("domain:readState.0")


async def test_a_snake_case_backend_procedure_is_callable_through_its_hashed_tool() -> None:
    procedure = ProcedureContract(
        id="domain:devices.disable_all", description="Disable every device", effect="server-mutation"
    )
    contract = _toolbar_contract()
    registry = create_registry(authority=create_capability_authority(compile_manifest([contract, procedure])))
    registry.set_procedure_executor(_echo_executor)
    registry.register(contract.bind(procedures=[procedure.reference()]))
    toolset = create_agent_toolset(registry, consumer=CONSUMER, topology="embedded")
    (tool,) = toolset.tools()
    assert is_wire_name(tool.name) and toolset.wire_name_map()[tool.name] == "domain:devices.disable_all"
    result = await registry.invoke({"capabilityId": "domain:devices.disable_all"}, consumer=CONSUMER)
    assert result.ok and result.output == {"procedure": "domain:devices.disable_all"}


_paths = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=40)


@settings(max_examples=300, deadline=None)
@given(_paths)
def test_every_accepted_domain_path_gets_a_valid_wire_name_that_never_decodes_wrongly(path: str) -> None:
    """The class of mistake: an id the registry accepts but the wire cannot name (or names
    ambiguously). Whatever parses is named within the provider alphabet, and decoding the name
    gives that id back or nothing."""
    procedure_id = f"domain:{path}"
    try:
        parse_procedure_id(procedure_id)
    except DefinitionError as exc:
        assert exc.code == "INVALID_ID"
        assert any(c.isspace() or not c.isprintable() for c in path)
        return
    name = encode_capability_id(procedure_id)
    assert is_wire_name(name)
    assert decode_wire_name(name) in (None, procedure_id)


# --------------------------------------------------------------------------- item 3


def test_every_registration_writes_a_registration_audit_record() -> None:
    contract = _toolbar_contract()
    audit = MemoryAuditSink()
    registry = create_registry(
        authority=create_capability_authority(compile_manifest([contract])), audit=audit
    )
    first = registry.register(contract.bind(instance_id="top"))
    second = registry.register(contract.bind(instance_id="bottom"))
    records = [(e.type, e.registration_id, e.detail) for e in audit.events()]
    assert records == [
        ("registration", first.registration_id, "app.toolbar@top"),
        ("registration", second.registration_id, "app.toolbar@bottom"),
    ]
    first.unregister()
    assert [e.type for e in audit.events()][-1] == "unregistration"


def test_a_refused_registration_writes_no_registration_record() -> None:
    contract = _toolbar_contract()
    audit = MemoryAuditSink()
    registry = create_registry(
        authority=create_capability_authority(compile_manifest([contract])), audit=audit
    )
    registry.register(contract.bind())
    assert registry.register(contract.bind()).status == "rejected"  # duplicate instance
    assert [e.type for e in audit.events()] == ["registration", "registration-rejected"]


# --------------------------------------------------------------------------- item 8


def test_a_procedure_reference_without_an_executor_is_refused_at_registration() -> None:
    contract = _toolbar_contract()
    registry = create_registry(authority=create_capability_authority(compile_manifest([contract, PING])))
    with pytest.raises(DefinitionError, match="no procedure executor") as info:
        registry.register(contract.bind(procedures=[PING.reference()]))
    assert info.value.code == "PLANE_VIOLATION"
    assert "domain:app.ping" in str(info.value) and "set_procedure_executor" in str(info.value)
    assert registry.registrations() == [] and registry.version == "0"  # nothing registered


def test_a_class_based_component_with_references_and_no_executor_is_refused_too() -> None:
    registry = create_registry(authority=create_capability_authority(compile_manifest([Toolbar, PING])))
    with pytest.raises(DefinitionError, match="no procedure executor"):
        registry.register(Toolbar())
    registry.set_procedure_executor(_echo_executor)
    assert registry.register(Toolbar()).status == "active"


def test_a_component_without_references_needs_no_executor() -> None:
    contract = _toolbar_contract()
    registry = create_registry(authority=create_capability_authority(compile_manifest([contract, PING])))
    assert registry.register(contract.bind()).status == "active"


# --------------------------------------------------------------------------- items 4 and 5


def _tenant_registry(host: dict[str, Any], policy: Any) -> Any:
    acme = ComponentContract(
        type="devices.table",
        description="The devices table",
        actions={"refresh": ActionContract("Reload the rows")},
    )
    navigation = ComponentContract(
        type="app.navigation", description="Navigation", actions={"goHome": ActionContract("Go home")}
    )
    registry = create_registry(
        authority=create_capability_authority(compile_manifest([acme, navigation])),
        context=lambda: host,
        policies=[policy],
    )
    registry.register(acme.bind(actions={"refresh": lambda value, ctx: None}, internal={"tenant": "acme"}))
    registry.register(navigation.bind(actions={"goHome": lambda value, ctx: None}))  # no tenant
    return registry


async def test_tenant_boundary_keeps_a_component_with_no_expected_tenant_visible() -> None:
    boundary = tenant_boundary(current=lambda host: host.get("tenant"), expected=lambda ctx: ctx.internal.get("tenant"))
    registry = _tenant_registry({"tenant": "globex"}, boundary)
    visible = [c.capability_id for c in registry.snapshot().capabilities()]
    assert visible == ["view:app.navigation.goHome"]  # acme's table is hidden, navigation stays
    assert (await registry.invoke({"capabilityId": "view:app.navigation.goHome"})).ok
    refused = await registry.invoke({"capabilityId": "view:devices.table.refresh"})
    assert refused.code == "NOT_AUTHORIZED"


def test_tenant_boundary_still_hides_a_tenanted_component_when_the_host_has_no_tenant() -> None:
    boundary = tenant_boundary(current=lambda host: host.get("tenant"), expected=lambda ctx: ctx.internal.get("tenant"))
    registry = _tenant_registry({}, boundary)
    assert [c.capability_id for c in registry.snapshot().capabilities()] == ["view:app.navigation.goHome"]


def _environment_registry(env: Any, host: dict[str, Any]) -> Any:
    contract = ComponentContract(
        type="debug.panel", description="Debug tools", actions={"dumpState": ActionContract("Dump state")}
    )
    registry = create_registry(
        authority=create_capability_authority(compile_manifest([contract])),
        environment=env,
        context=lambda: host,
        policies=[environment(["development"])],
    )
    registry.register(contract.bind(actions={"dumpState": lambda value, ctx: None}))
    return registry


async def test_environment_policy_reads_the_registry_environment_not_the_host() -> None:
    production = _environment_registry("production", {"environment": "development"})
    assert list(production.snapshot().capabilities()) == []
    refused = await production.invoke({"capabilityId": "view:debug.panel.dumpState"})
    assert refused.code == "CAPABILITY_NOT_FOUND"
    development = _environment_registry("development", {})  # no host entry needed
    assert [c.capability_id for c in development.snapshot().capabilities()] == ["view:debug.panel.dumpState"]
    assert (await development.invoke({"capabilityId": "view:debug.panel.dumpState"})).ok


def test_environment_policy_refuses_a_bare_string() -> None:
    with pytest.raises(TypeError, match="list of environment names"):
        environment("development")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- item 7

# What JavaScript's JSON.stringify writes for these numbers (ES Number::toString).
JS_NUMBER_TEXT = [
    (1e20, "100000000000000000000"),
    (10**20, "100000000000000000000"),
    (2.0**53, "9007199254740992"),
    (2**53, "9007199254740992"),
    (2**53 + 1, "9007199254740992"),  # read as JavaScript reads it: the nearest double
    (2**64, "18446744073709552000"),
    (1e21, "1e+21"),
    (10**21, "1e+21"),
    (1.5e16, "15000000000000000"),
    (100.0, "100"),
    (-0.0, "0"),
    (0.1, "0.1"),
    (123.456, "123.456"),
    (1e-6, "0.000001"),
    (1e-7, "1e-7"),
    (-1.25e-7, "-1.25e-7"),
    (0.00012, "0.00012"),
    (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (2.5e21, "2.5e+21"),
]


@pytest.mark.parametrize(("number", "text"), JS_NUMBER_TEXT)
def test_canonical_json_writes_numbers_as_javascript_does(number: float, text: str) -> None:
    assert canonical_json(number) == text
    assert canonical_json({"n": number}) == f'{{"n":{text}}}'


def test_one_number_has_one_canonical_form_and_digest() -> None:
    assert canonical_json({"x": 1e20}) == canonical_json({"x": 10**20})
    assert digest({"x": 1e20}) == digest({"x": 10**20})
    assert digest([2.0**53]) == digest([2**53])


def test_a_lone_surrogate_gets_an_escaped_canonical_form_and_a_digest() -> None:
    assert canonical_json("a\ud800b") == '"a\\ud800b"'
    assert canonical_json({"k\udfff": "\udbff"}) == '{"k\\udfff":"\\udbff"}'
    assert digest("\ud800") != digest("\ud801")
    assert digest("\ud800").startswith("sha256:")
    # A surrogate pair is one character to JavaScript: written as the character itself.
    assert canonical_json("\ud83d\ude00") == canonical_json("\U0001f600") == '"\U0001f600"'
    assert json_size("\ud800") == len('"\\ud800"')


def test_canonical_keys_sort_by_utf16_code_unit_like_javascript() -> None:
    # U+1F600 is D83D DE00 in UTF-16, which sorts before U+FF01 (code points say otherwise).
    assert canonical_json({"\uff01": 1, "\U0001f600": 2}) == '{"\U0001f600":2,"\uff01":1}'


def test_canonical_json_still_refuses_what_is_not_json() -> None:
    with pytest.raises(ValueError):
        canonical_json(float("nan"))
    with pytest.raises(ValueError):
        canonical_json(10**400)
    with pytest.raises(TypeError):
        canonical_json({1: "a"})
    with pytest.raises(TypeError):
        canonical_json({"a"})


async def test_an_input_with_a_lone_surrogate_is_answered_not_crashed() -> None:
    notes = ComponentContract(
        type="app.notes",
        description="Notes",
        actions={
            "write": ActionContract(
                "Write a note",
                input={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            )
        },
    )
    written: list[str] = []
    registry = create_registry(authority=create_capability_authority(compile_manifest([notes])))
    registry.register(notes.bind(actions={"write": lambda value, ctx: written.append(value["text"])}))
    result = await registry.invoke({"capabilityId": "view:app.notes.write", "input": {"text": "x\ud800"}})
    assert result.ok, result.to_json()
    assert written == ["x\ud800"]


@settings(max_examples=500, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_float_has_one_canonical_text_that_reads_back_as_itself(number: float) -> None:
    text = canonical_json(number)
    assert float(json.loads(text)) == number
    if number.is_integer() and abs(number) < 1e21:
        assert text.lstrip("-").isdigit()  # integral values below 1e21: no point, no exponent
        assert canonical_json(int(number)) == text
    if number.is_integer() and abs(number) <= 2**53:
        assert text == str(int(number))  # exact within the safe range


@settings(max_examples=500, deadline=None)
@given(st.integers(min_value=-(2**1023), max_value=2**1023))
def test_an_int_and_the_double_javascript_reads_it_as_share_one_canonical_text(number: int) -> None:
    assert canonical_json(number) == canonical_json(float(number))
    assert digest([number]) == digest([float(number)])


# --------------------------------------------------------------------------- item 6


def _panel_registry() -> tuple[Any, ComponentContract, list[tuple[str, Any]]]:
    contract = ComponentContract(
        type="app.panel", description="A panel", actions={"close": ActionContract("Close the panel")}
    )
    registry = create_registry(authority=create_capability_authority(compile_manifest([contract])))
    seen: list[tuple[str, Any]] = []
    registry.subscribe(lambda e: seen.append((e.type, e.data.get("surfaceVersion", e.data.get("instanceId")))))
    return registry, contract, seen


def _mount(registry: Any, contract: ComponentContract, instance_id: str) -> Any:
    return registry.register(contract.bind(instance_id=instance_id, actions={"close": lambda value, ctx: None}))


async def test_surface_changed_is_coalesced_to_one_event_per_loop_turn_with_the_latest_version() -> None:
    registry, contract, seen = _panel_registry()
    for name in ("a", "b", "c"):
        _mount(registry, contract, name)
    # The registrations themselves are reported at once; the surface change waits for the turn.
    assert seen == [("component-registered", "a"), ("component-registered", "b"), ("component-registered", "c")]
    await asyncio.sleep(0)
    assert [s for s in seen if s[0] == "surface-changed"] == [("surface-changed", "3")]
    _mount(registry, contract, "d")
    await asyncio.sleep(0)
    assert [s for s in seen if s[0] == "surface-changed"] == [("surface-changed", "3"), ("surface-changed", "4")]


async def test_a_coalesced_surface_changed_is_not_dispatched_after_dispose() -> None:
    registry, contract, seen = _panel_registry()
    _mount(registry, contract, "a")
    registry.dispose()
    await asyncio.sleep(0)
    assert [s for s in seen if s[0] == "surface-changed"] == []


def test_without_a_running_loop_each_change_dispatches_its_own_surface_changed_at_once() -> None:
    registry, contract, seen = _panel_registry()
    _mount(registry, contract, "a")
    _mount(registry, contract, "b")
    assert seen == [
        ("component-registered", "a"),
        ("surface-changed", "1"),
        ("component-registered", "b"),
        ("surface-changed", "2"),
    ]


async def test_a_direct_toolset_hears_one_change_for_a_burst_of_registrations() -> None:
    registry, contract, _seen = _panel_registry()
    toolset = create_agent_toolset(registry, consumer=CONSUMER, topology="embedded")
    toolset.tools()
    heard: list[int] = []
    toolset.subscribe(lambda tools: heard.append(len(tools)))
    for name in ("a", "b", "c"):
        _mount(registry, contract, name)
    await asyncio.sleep(0)
    assert heard == [3]
