"""Contracts: the defaults table of reference doc 01, the plane rule, limits, duplicates, and
the one-to-one binding of handlers (reference doc 03, "Definitions")."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from agentsurface import DefinitionError, Policy
from agentsurface._core.contracts.bindings import is_minted
from agentsurface._core.contracts.fields import (
    MAX_CAPABILITY_DESCRIPTION,
    MAX_COMPONENT_DESCRIPTION,
    MAX_META_BYTES,
)
from agentsurface._core.jsonvalue import thaw
from agentsurface.lowlevel import (
    ActionBinding,
    ActionContract,
    ComponentContract,
    Concurrency,
    ObservationBinding,
    ObservationContract,
)
from tests.support import IDS_INPUT, ROWS_OUTPUT, bind_devices, devices_contract, disable_procedure

# (kind/effect, idempotent, reversible, confirmation, audit) — reference doc 01, defaults table.
DEFAULTS_TABLE = [
    ("local-state", False, True, "never", "metadata"),
    ("navigation", False, True, "never", "metadata"),
    ("server-query", True, None, "never", "metadata"),
    ("server-mutation", False, False, "optional", "metadata"),
    ("external-side-effect", False, False, "required", "full"),
    ("destructive", False, False, "required", "full"),
]


def _definition_error(code: str, fn: Any, *args: Any, **kwargs: Any) -> DefinitionError:
    with pytest.raises(DefinitionError) as info:
        fn(*args, **kwargs)
    assert info.value.code == code, str(info.value)
    return info.value


# ----------------------------------------------------------------------------- defaults


def test_defaults_observation_row() -> None:
    obs = ObservationContract("Read rows", output=ROWS_OUTPUT)
    assert (obs.kind, obs.effect) == ("observation", "read")
    assert obs.idempotent is True
    assert obs.confirmation == "never"
    assert obs.audit == "none"


@pytest.mark.parametrize(("effect", "idempotent", "reversible", "confirmation", "audit"), DEFAULTS_TABLE[:2])
def test_defaults_action_rows(
    effect: str, idempotent: bool, reversible: bool, confirmation: str, audit: str
) -> None:
    act = ActionContract("Do it", effect=effect)  # type: ignore[arg-type]
    assert (act.idempotent, act.reversible, act.confirmation, act.audit) == (
        idempotent,
        reversible,
        confirmation,
        audit,
    )
    assert act.to_json()["effect"] == effect


@pytest.mark.parametrize(("effect", "idempotent", "reversible", "confirmation", "audit"), DEFAULTS_TABLE[2:])
def test_defaults_procedure_rows(
    effect: str, idempotent: bool, reversible: bool | None, confirmation: str, audit: str
) -> None:
    proc = disable_procedure(effect=effect)
    assert (proc.idempotent, proc.reversible, proc.confirmation, proc.audit) == (
        idempotent,
        reversible,
        confirmation,
        audit,
    )


def test_defaults_can_be_overridden_by_the_author() -> None:
    act = ActionContract(
        "Clear the draft",
        idempotent=True,
        reversible=False,
        confirmation="required",
        audit="full",
    )
    assert (act.idempotent, act.reversible, act.confirmation, act.audit) == (True, False, "required", "full")
    proc = disable_procedure(effect="server-query", confirmation="required", audit="none")
    assert (proc.confirmation, proc.audit) == ("required", "none")


def test_destructive_cannot_go_below_optional() -> None:
    assert disable_procedure(effect="destructive", confirmation="optional").confirmation == "optional"
    error = _definition_error(
        "INVALID_DEFINITION", disable_procedure, effect="destructive", confirmation="never"
    )
    assert "below 'optional'" in str(error)


@pytest.mark.parametrize(
    ("field", "value"),
    [("confirmation", "sometimes"), ("audit", "verbose"), ("idempotent", "no"), ("reversible", 1)],
)
def test_governance_values_are_checked(field: str, value: Any) -> None:
    error = _definition_error("INVALID_DEFINITION", ActionContract, "Do it", **{field: value})
    assert field in str(error)


# ----------------------------------------------------------------------------- planes


@pytest.mark.parametrize("effect", ["server-query", "server-mutation", "external-side-effect", "destructive"])
def test_plane_violation_for_a_view_action_with_a_server_effect(effect: str) -> None:
    error = _definition_error("PLANE_VIOLATION", ActionContract, "Disable", effect=effect)
    assert repr(effect) in str(error)
    assert "procedure" in str(error)


@pytest.mark.parametrize("effect", ["local-state", "navigation", "read"])
def test_plane_violation_for_a_procedure_with_a_view_effect(effect: str) -> None:
    error = _definition_error("PLANE_VIOLATION", disable_procedure, effect=effect)
    assert "domain:devices.disable" in str(error)
    assert repr(effect) in str(error)


@pytest.mark.parametrize("effect", ["delete", 5, None, ["local-state"]])
def test_unknown_effects_are_invalid_definitions(effect: Any) -> None:
    _definition_error("INVALID_DEFINITION", ActionContract, "Do it", effect=effect)
    _definition_error("INVALID_DEFINITION", disable_procedure, effect=effect)


def test_procedure_ids_must_be_domain_ids() -> None:
    _definition_error("PLANE_VIOLATION", disable_procedure, id="view:devices.table.disable")
    _definition_error("INVALID_ID", disable_procedure, id="domain:devices disable")
    _definition_error("INVALID_ID", disable_procedure, id="devices.disable")


def test_procedure_input_must_be_an_object_schema() -> None:
    error = _definition_error("UNSUPPORTED_SCHEMA", disable_procedure, input={"type": "string"})
    assert "object schema" in str(error)


# ----------------------------------------------------------------------------- limits


def test_description_limits() -> None:
    ActionContract("x" * MAX_CAPABILITY_DESCRIPTION)
    error = _definition_error("LIMIT_EXCEEDED", ActionContract, "x" * (MAX_CAPABILITY_DESCRIPTION + 1))
    assert "301 chars; the limit is 300" in str(error)
    _definition_error(
        "LIMIT_EXCEEDED", ObservationContract, "x" * (MAX_CAPABILITY_DESCRIPTION + 1), output=ROWS_OUTPUT
    )
    _definition_error("LIMIT_EXCEEDED", disable_procedure, description="x" * (MAX_CAPABILITY_DESCRIPTION + 1))
    devices_contract(description="x" * MAX_COMPONENT_DESCRIPTION)
    error = _definition_error("LIMIT_EXCEEDED", devices_contract, description="x" * (MAX_COMPONENT_DESCRIPTION + 1))
    assert "component 'devices.table' description is 501 chars; the limit is 500" in str(error)


@pytest.mark.parametrize("description", ["", "   ", None, 5])
def test_descriptions_are_required(description: Any) -> None:
    error = _definition_error("INVALID_DEFINITION", ActionContract, description)
    assert "action description must be a non-empty string" in str(error)
    error = _definition_error("INVALID_DEFINITION", devices_contract, description=description)
    assert "component 'devices.table' description" in str(error)


def test_meta_limits() -> None:
    overhead = len('{"k":""}')
    devices_contract(meta={"k": "x" * (MAX_META_BYTES - overhead)})
    error = _definition_error("LIMIT_EXCEEDED", devices_contract, meta={"k": "x" * (MAX_META_BYTES - overhead + 1)})
    assert "2048 bytes" in str(error)
    _definition_error("LIMIT_EXCEEDED", ObservationContract, "Read", output=ROWS_OUTPUT, meta={"k": "x" * 3000})


@pytest.mark.parametrize(
    ("meta", "fragment"),
    [
        ({"when": object()}, "meta is not JSON: $.when"),
        ({"n": float("nan")}, "meta is not JSON"),
        (["a"], "meta must be an object"),
        ("text", "meta must be an object"),
    ],
)
def test_meta_must_be_a_json_object(meta: Any, fragment: str) -> None:
    error = _definition_error("INVALID_DEFINITION", ActionContract, "Do it", meta=meta)
    assert fragment in str(error)


def test_meta_is_frozen_and_in_the_contract_json() -> None:
    contract = devices_contract(meta={"area": ["north"]})
    assert contract.to_json()["meta"] == {"area": ("north",)}
    with pytest.raises(TypeError):
        contract.meta["area"] = []  # type: ignore[index]


def test_timeouts_must_be_positive() -> None:
    assert ActionContract("Do it", timeout=2).timeout == 2.0
    for bad in (0, -1, "5", True and "x"):
        _definition_error("INVALID_DEFINITION", ActionContract, "Do it", timeout=bad)


def test_observation_needs_an_output_schema() -> None:
    error = _definition_error("INVALID_DEFINITION", ObservationContract, "Read", output=None)
    assert "output schema" in str(error)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"mode": "burst"}, "unknown concurrency mode"),
        ({"mode": "key"}, "needs a key"),
        ({"mode": "parallel"}, "integer max >= 1"),
        ({"mode": "parallel", "max": 0}, "integer max >= 1"),
        ({"mode": "parallel", "max": True}, "integer max >= 1"),
        ({"queue_depth": -1}, "queue_depth"),
        ({"queue_depth": True}, "queue_depth"),
    ],
)
def test_concurrency_groups_are_checked(kwargs: dict[str, Any], fragment: str) -> None:
    error = _definition_error("INVALID_DEFINITION", Concurrency, **kwargs)
    assert fragment in str(error)


def test_concurrency_json() -> None:
    assert Concurrency().to_json() == {"mode": "instance"}
    assert Concurrency("parallel", max=3, queue_depth=0).to_json() == {"mode": "parallel", "max": 3, "queueDepth": 0}


# ----------------------------------------------------------------------------- components


def test_component_contract_shape_and_hash() -> None:
    contract = devices_contract(priority=3)
    assert contract.id == contract.type == "devices.table"
    assert contract.capability_id("selectRows") == "view:devices.table.selectRows"
    assert contract.capability("visibleRows") is contract.observations["visibleRows"]
    assert contract.capability("nope") is None
    assert contract.hash.startswith("sha256:")
    assert devices_contract(priority=3).hash == contract.hash
    assert devices_contract(priority=4).hash != contract.hash
    assert devices_contract(select_description="Pick rows").hash != contract.hash
    body = contract.to_json()
    assert list(body["actions"]) == ["clearSelection", "selectRows"]  # canonical (sorted) order


def test_duplicate_capability_across_observations_and_actions() -> None:
    error = _definition_error(
        "DUPLICATE_CAPABILITY",
        ComponentContract,
        type="devices.table",
        description="Devices",
        observations={"rows": ObservationContract("Rows", output=ROWS_OUTPUT)},
        actions={"rows": ActionContract("Rows")},
    )
    assert "'rows' is declared twice" in str(error)
    assert error.path == "devices.table"


def test_capability_names_in_a_component_follow_the_grammar() -> None:
    error = _definition_error(
        "INVALID_ID",
        ComponentContract,
        type="devices.table",
        description="Devices",
        actions={"select_rows": ActionContract("Select")},
    )
    assert error.path == "devices.table.actions"
    assert "'select_rows'" in str(error)


def test_whole_capability_id_is_capped_at_128_chars_at_declaration() -> None:
    component_type = "a" * 100
    ok_name = "b" * (128 - len("view:") - 101)
    ComponentContract(type=component_type, description="d", actions={ok_name: ActionContract("x")})
    error = _definition_error(
        "INVALID_ID",
        ComponentContract,
        type=component_type,
        description="d",
        actions={ok_name + "c": ActionContract("x")},
    )
    assert "129 chars" in str(error)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"actions": [ActionContract("x")]}, "actions must be a mapping"),
        ({"actions": {"go": ObservationContract("x", output=ROWS_OUTPUT)}}, "action 'go' must be a ActionContract"),
        ({"actions": {"go": lambda: None}}, "action 'go' must be a ActionContract"),
        ({"tags": "admin"}, "tags must be a list of strings"),
        ({"tags": ["ok", 3]}, "tags must contain non-empty strings"),
        ({"policies": "auth"}, "policies must be a list of strings"),
        ({"priority": "high"}, "priority must be an integer"),
        ({"priority": True}, "priority must be an integer"),
        ({"origin": ""}, "origin must be a non-empty string"),
    ],
)
def test_component_contract_bad_inputs_name_the_offending_part(kwargs: dict[str, Any], fragment: str) -> None:
    options: dict[str, Any] = {"type": "devices.table", "description": "Devices", "actions": {"go": ActionContract("Go")}}
    options.update(kwargs)
    error = _definition_error("INVALID_DEFINITION", ComponentContract, **options)
    assert fragment in str(error)


def test_component_type_is_validated() -> None:
    error = _definition_error("INVALID_ID", devices_contract, type="Devices.Table")
    assert "'Devices.Table'" in str(error)
    _definition_error("INVALID_ID", devices_contract, type=None)


def test_tags_and_policies_are_sorted_and_deduplicated() -> None:
    contract = ComponentContract(
        type="devices.table",
        description="Devices",
        actions={"go": ActionContract("Go")},
        tags=["b", "a", "b"],
        policies=("z", "y"),
    )
    assert contract.tags == ("a", "b")
    assert contract.policies == ("y", "z")


def test_contracts_are_immutable() -> None:
    contract = devices_contract()
    with pytest.raises(dataclasses.FrozenInstanceError):
        contract.description = "changed"  # type: ignore[misc]
    with pytest.raises(TypeError):
        contract.actions["extra"] = ActionContract("x")  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        contract.actions["selectRows"].effect = "navigation"  # type: ignore[misc]


# ----------------------------------------------------------------------------- binding


def test_bind_produces_a_minted_binding_with_every_handler() -> None:
    contract = devices_contract()
    binding = bind_devices(contract, "main")
    assert is_minted(binding)
    assert binding.type == "devices.table"
    assert binding.instance_id == "main"
    assert set(binding.observations) == {"visibleRows"}
    assert set(binding.actions) == {"selectRows", "clearSelection"}
    assert isinstance(binding.actions["selectRows"], ActionBinding)
    assert isinstance(binding.observations["visibleRows"], ObservationBinding)
    assert binding.enabled is True


def test_bind_refuses_missing_handlers() -> None:
    error = _definition_error(
        "INVALID_DEFINITION",
        devices_contract().bind,
        observations={"visibleRows": lambda ctx: {}},
        actions={"selectRows": lambda v, ctx: None},
    )
    assert "actions ['clearSelection'] have no execute handler" in str(error)
    assert error.path == "devices.table@default"
    error = _definition_error("INVALID_DEFINITION", devices_contract().bind, actions={})
    assert "observations ['visibleRows'] have no read handler" in str(error)


def test_bind_refuses_extra_handlers() -> None:
    error = _definition_error(
        "INVALID_DEFINITION",
        devices_contract().bind,
        observations={"visibleRows": lambda ctx: {}, "hidden": lambda ctx: {}},
        actions={"selectRows": lambda v, ctx: None, "clearSelection": lambda v, ctx: None},
    )
    assert "observations ['hidden'] are not declared in the contract" in str(error)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"observations": [lambda ctx: {}]}, "observations must be a mapping"),
        ({"observations": {"visibleRows": "not callable"}}, "read of 'visibleRows' is not callable"),
        ({"observations": {"visibleRows": ObservationBinding(lambda c: {}, when=True)}},  # type: ignore[arg-type]
         "when must be callable"),
        ({"observations": {"visibleRows": ObservationBinding(lambda c: {}, unavailable_reason=3)}},  # type: ignore[arg-type]
         "unavailable_reason must be a string or a callable"),
        ({"observations": {"visibleRows": ObservationBinding(lambda c: {}, policies=["auth"])}},  # type: ignore[list-item]
         "'auth' is not a Policy"),
        ({"policies": [object()]}, "is not a Policy"),
        ({"parent": "devices.page"}, "parent must be a (component type, instance id) tuple"),
        ({"parent": ("devices.page",)}, "parent must be a (component type, instance id) tuple"),
        ({"procedures": [object()]}, "procedures must come from ProcedureContract.reference()"),
    ],
)
def test_bind_bad_inputs_name_the_offending_part(kwargs: dict[str, Any], fragment: str) -> None:
    options: dict[str, Any] = {
        "observations": {"visibleRows": lambda ctx: {}},
        "actions": {"selectRows": lambda v, ctx: None, "clearSelection": lambda v, ctx: None},
    }
    options.update(kwargs)
    error = _definition_error("INVALID_DEFINITION", devices_contract().bind, **options)
    assert fragment in str(error)


def test_bind_validates_instance_and_parent_ids() -> None:
    contract = devices_contract()
    error = _definition_error("INVALID_ID", bind_devices, contract, "a.b")
    assert "instance id 'a.b'" in str(error)
    error = _definition_error("INVALID_ID", bind_devices, contract, parent=("Devices", "main"))
    assert error.path == "devices.table@default.parent"
    assert bind_devices(contract, parent=("devices.page", "main")).parent == ("devices.page", "main")


def test_binding_cannot_reference_a_procedure_twice() -> None:
    proc = disable_procedure()
    error = _definition_error(
        "DUPLICATE_CAPABILITY", bind_devices, devices_contract(), procedures=[proc.reference(), proc.reference()]
    )
    assert "'domain:devices.disable' is referenced twice" in str(error)


class _Named(Policy):
    name = "auth"


def test_live_policies_are_accepted_on_bindings() -> None:
    binding = bind_devices(devices_contract(), policies=[_Named()])
    assert [p.name for p in binding.policies] == ["auth"]


# ----------------------------------------------------------------------------- procedure references


def test_reference_removes_locked_bound_fields_from_the_agent_schema() -> None:
    proc = disable_procedure()
    ref = proc.reference(bind=lambda: {"ids": ["d1"]}, bound_fields=["ids"])
    assert is_minted(ref)
    assert ref.procedure_id == "domain:devices.disable"
    assert ref.locked_fields == ("ids",)
    assert set(ref.agent_schema["properties"]) == {"reason"}
    assert thaw(ref.agent_schema["required"]) == ["reason"]
    # The contract's own schema is untouched.
    assert set(proc.input.json_schema["properties"]) == {"ids", "reason"}


def test_reference_overridable_fields_stay_visible_but_optional() -> None:
    ref = disable_procedure().reference(
        bind=lambda: {"ids": [], "reason": "x"}, bound_fields=["ids", "reason"], overridable=["reason"]
    )
    assert ref.locked_fields == ("ids",)
    assert set(ref.agent_schema["properties"]) == {"reason"}
    assert "required" not in ref.agent_schema


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"bound_fields": ["ids"]}, "bound_fields need a bind() function"),
        ({"bind": lambda: {}}, "bind() needs bound_fields"),
        ({"bind": lambda: {}, "bound_fields": ["nope"]}, "bound field 'nope' is not an input property"),
        ({"bind": lambda: {}, "bound_fields": "ids"}, "bound_fields must be a list of field names"),
        ({"bind": lambda: {}, "bound_fields": ["ids"], "overridable": ["reason"]},
         "overridable fields must also be bound fields"),
        ({"confirmation": "never"}, "cannot lower confirmation below the contract's 'optional'"),
        ({"confirmation": "always"}, "confirmation must be one of"),
        ({"when": "yes"}, "when must be callable"),
        ({"policies": ["auth"]}, "'auth' is not a Policy"),
        ({"concurrency": "parallel"}, "concurrency must be a Concurrency"),
    ],
)
def test_reference_bad_inputs(kwargs: dict[str, Any], fragment: str) -> None:
    error = _definition_error("INVALID_DEFINITION", disable_procedure().reference, **kwargs)
    assert fragment in str(error)


def test_reference_may_raise_confirmation() -> None:
    assert disable_procedure().reference(confirmation="required").confirmation == "required"
    assert disable_procedure().reference().confirmation == "optional"


def test_hand_made_bindings_are_not_minted() -> None:
    binding = bind_devices(devices_contract())
    assert not is_minted(dataclasses.replace(binding))
    ref = disable_procedure().reference()
    assert not is_minted(dataclasses.replace(ref))
    assert not is_minted(object())
    assert not is_minted({"type": "devices.table"})  # unhashable values are simply not minted


def test_action_input_defaults_to_the_empty_object() -> None:
    act = ActionContract("Clear")
    assert thaw(act.input.json_schema) == {"type": "object", "properties": {}, "additionalProperties": False}
    act2 = ActionContract("Select", input=IDS_INPUT)
    assert thaw(act2.input.json_schema) == IDS_INPUT
