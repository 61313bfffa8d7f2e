"""Domain procedure ids are opaque paths: what they may contain, their limits, and the wire names
they get (faithful where the wire rule allows, hashed and collision-free otherwise)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentsurface import (
    AgentSurfaceRegistry,
    CapabilityAuthority,
    DefinitionError,
    ProcedureContract,
    compile_manifest,
)
from agentsurface._core.ids import parse_capability_id, parse_procedure_id
from agentsurface.toolset import AgentToolset
from agentsurface.wire_names import (
    WireNameEntry,
    assign_wire_names,
    decode_wire_name,
    encode_capability_id,
    is_wire_name,
)
from tests.support import CONSUMER, echo_executor, toolbar_contract


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
    contract = toolbar_contract()
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([contract, procedure])), procedure_executor=echo_executor)
    registry.register(contract.bind(procedures=[procedure.reference()]))
    toolset = AgentToolset(registry, consumer=CONSUMER, topology="embedded")
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
