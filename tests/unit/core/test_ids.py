"""AS-ID-001: the canonical id grammar (reference doc 01, "Canonical ID grammar")."""

from __future__ import annotations

import pytest

from agentsurface import DefinitionError
from agentsurface._core.ids import (
    MAX_ID_LENGTH,
    CapabilityId,
    format_capability_id,
    is_valid_capability_id,
    parse_capability_id,
    parse_procedure_id,
    validate_capability_name,
    validate_component_type,
    validate_instance_id,
    validate_procedure_path,
)

VALID_TYPES = ["devices", "devices.table", "app.navigation", "x-ray.sub-panel", "a1.b2", "a"]
INVALID_TYPES = [
    "Devices",
    "devices.Table",
    "devices..table",
    ".devices",
    "devices.",
    "1devices",
    "-devices",
    "devices.table!",
    "devices table",
    "dévices",
]


@pytest.mark.parametrize("value", VALID_TYPES)
def test_AS_ID_001_accepts_valid_component_types(value: str) -> None:
    assert validate_component_type(value) == value


@pytest.mark.parametrize("value", INVALID_TYPES)
def test_AS_ID_001_rejects_invalid_component_types_naming_the_value(value: str) -> None:
    with pytest.raises(DefinitionError) as info:
        validate_component_type(value)
    assert info.value.code == "INVALID_ID"
    assert "component type" in str(info.value)
    assert repr(value) in str(info.value)


def test_AS_ID_001_rejects_uppercase_segment() -> None:
    with pytest.raises(DefinitionError, match=r"component type 'devices\.Table'") as info:
        parse_capability_id("view:devices.Table.selectRows")
    assert info.value.code == "INVALID_ID"


@pytest.mark.parametrize("value", ["devices_table", "devices.tab_le"])
def test_AS_ID_001_underscores_are_reserved_in_component_types(value: str) -> None:
    with pytest.raises(DefinitionError, match="underscores are reserved") as info:
        validate_component_type(value)
    assert info.value.code == "INVALID_ID"
    assert repr(value) in str(info.value)


@pytest.mark.parametrize("value", ["selectRows", "read", "goTo2", "a", "x9Y"])
def test_AS_ID_001_accepts_camel_case_capability_names(value: str) -> None:
    assert validate_capability_name(value) == value


@pytest.mark.parametrize("value", ["SelectRows", "select.rows", "select-rows", "2go", "sel ect"])
def test_AS_ID_001_rejects_invalid_capability_names(value: str) -> None:
    with pytest.raises(DefinitionError) as info:
        validate_capability_name(value)
    assert info.value.code == "INVALID_ID"
    assert f"capability name {value!r}" in str(info.value)


def test_AS_ID_001_underscores_are_reserved_in_capability_names() -> None:
    with pytest.raises(DefinitionError, match="'select_rows' contains '_'") as info:
        validate_capability_name("select_rows")
    assert info.value.code == "INVALID_ID"
    assert "camelCase" in str(info.value)


@pytest.mark.parametrize("value", ["default", "main", "dev_42", "A-1_b", "0"])
def test_AS_ID_001_accepts_instance_ids(value: str) -> None:
    assert validate_instance_id(value) == value


@pytest.mark.parametrize("value", ["a.b", "a b", "a/b", "é"])
def test_AS_ID_001_rejects_invalid_instance_ids(value: str) -> None:
    with pytest.raises(DefinitionError) as info:
        validate_instance_id(value)
    assert info.value.code == "INVALID_ID"
    assert f"instance id {value!r}" in str(info.value)


@pytest.mark.parametrize(
    "validator",
    [validate_component_type, validate_capability_name, validate_instance_id, validate_procedure_path],
)
@pytest.mark.parametrize("value", ["", None, 42, b"devices", ["devices"]])
def test_AS_ID_001_non_strings_and_empty_strings_are_invalid_ids(validator: object, value: object) -> None:
    with pytest.raises(DefinitionError) as info:
        validator(value)  # type: ignore[operator]
    assert info.value.code == "INVALID_ID"
    assert "non-empty string" in str(info.value)


def test_AS_ID_001_parse_takes_the_name_after_the_last_dot() -> None:
    assert parse_capability_id("view:devices.table.selectRows") == CapabilityId(
        "view", "devices.table", "selectRows"
    )
    assert parse_capability_id("view:app.navigation.goTo") == CapabilityId("view", "app.navigation", "goTo")
    assert str(parse_capability_id("view:app.navigation.goTo")) == "view:app.navigation.goTo"


def test_AS_ID_001_domain_paths_parse_and_round_trip() -> None:
    parsed = parse_capability_id("domain:devices.disable")
    assert parsed.plane == "domain"
    assert str(parsed) == "domain:devices.disable"
    assert parse_procedure_id("domain:devices.disable") == "domain:devices.disable"


def test_AS_ID_001_procedure_id_must_use_the_domain_plane() -> None:
    with pytest.raises(DefinitionError) as info:
        parse_procedure_id("view:devices.table.selectRows")
    assert info.value.code == "PLANE_VIOLATION"
    assert "'domain:'" in str(info.value)


@pytest.mark.parametrize(
    ("value", "names"),
    [
        ("devices.table.selectRows", "no plane prefix"),
        ("other:devices.x", "plane 'other'"),
        ("view:", "component type and a capability name"),
        ("view:selectRows", "component type and a capability name"),
        ("view:.selectRows", "component type and a capability name"),
        ("view:Devices.table.selectRows", "component type 'Devices.table'"),
        ("view:devices.table.select_rows", "capability name 'select_rows'"),
        ("view:devices.table.", "capability name"),
        ("domain:", "procedure path must be a non-empty string"),
        ("domain:devices.disable all", "procedure path 'devices.disable all'"),
        ("domain:devices.\tdisable", "procedure path 'devices.\\tdisable'"),
    ],
)
def test_AS_ID_001_rejects_garbage_ids_naming_the_bad_part(value: str, names: str) -> None:
    with pytest.raises(DefinitionError) as info:
        parse_capability_id(value)
    assert info.value.code == "INVALID_ID"
    assert names in str(info.value)
    assert not is_valid_capability_id(value)


@pytest.mark.parametrize("value", [None, 42, {}, ["view:devices.table.selectRows"]])
def test_AS_ID_001_non_string_ids_are_rejected_as_invalid_not_crashing(value: object) -> None:
    assert is_valid_capability_id(value) is False
    with pytest.raises(DefinitionError) as info:
        parse_capability_id(value)
    assert info.value.code == "INVALID_ID"


def test_AS_ID_001_ids_are_capped_at_128_chars() -> None:
    component_type = "a" * 100
    name = "b" * (MAX_ID_LENGTH - len("view:") - len(component_type) - 1)
    at_limit = f"view:{component_type}.{name}"
    assert len(at_limit) == MAX_ID_LENGTH == 128
    assert parse_capability_id(at_limit).name == name
    assert format_capability_id("view", component_type, name) == at_limit

    too_long = at_limit + "c"
    with pytest.raises(DefinitionError, match="is 129 chars; the limit is 128") as info:
        parse_capability_id(too_long)
    assert info.value.code == "INVALID_ID"
    with pytest.raises(DefinitionError, match="capability id"):
        format_capability_id("view", component_type, name + "c")


@pytest.mark.parametrize(
    ("validator", "what"),
    [
        (validate_component_type, "component type"),
        (validate_capability_name, "capability name"),
        (validate_instance_id, "instance id"),
    ],
)
def test_AS_ID_001_each_part_is_capped_at_128_chars(validator: object, what: str) -> None:
    validator("a" * 128)  # type: ignore[operator]
    with pytest.raises(DefinitionError, match=f"{what} .* is 129 chars") as info:
        validator("a" * 129)  # type: ignore[operator]
    assert info.value.code == "INVALID_ID"


def test_AS_ID_001_format_validates_every_part() -> None:
    assert format_capability_id("view", "devices.table", "selectRows") == "view:devices.table.selectRows"
    assert format_capability_id("domain", "devices", "disable") == "domain:devices.disable"
    with pytest.raises(DefinitionError, match="component type 'Devices'"):
        format_capability_id("view", "Devices", "selectRows")
    with pytest.raises(DefinitionError, match="capability name 'select_rows'"):
        format_capability_id("view", "devices", "select_rows")
    with pytest.raises(DefinitionError, match="plane must be 'view' or 'domain', got 'other'"):
        format_capability_id("other", "devices", "x")  # type: ignore[arg-type]
