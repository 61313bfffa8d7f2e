"""The option sets of the decorators (_core/contracts/options.py) against their contracts: each
option is a field its contract takes, with the same type; the decorators hand every option to
the contract as given, show each in their signature with the contract's default, and refuse a
misspelt one by name. And ``Checked``, the field type that lets a contract take a schema source
and store a Schema with no constructor stub."""

from __future__ import annotations

import dataclasses
import inspect
import pydoc
from typing import Any, get_args, get_origin, get_type_hints

import pytest

from agentsurface import AgentComponent, ProcedureContract, action, observation
from agentsurface._core.contracts.fields import DEFAULT_CONCURRENCY, Checked
from agentsurface._core.schemas.schema import EMPTY_INPUT
from agentsurface.lowlevel import (
    ActionContract,
    ActionOptions,
    Concurrency,
    ObservationContract,
    ObservationOptions,
    RouteProcedureOptions,
    Schema,
)

# A route procedure's input is the route's own (FastAPI) or its ``input=`` model (Django); a
# timeout is not part of the committed contract, so the page would never see one set there.
ROUTE_OWN = {"id", "description", "effect", "input", "timeout"}
CASES = [
    pytest.param(ObservationOptions, ObservationContract, {"description"}, id="observation"),
    pytest.param(ActionOptions, ActionContract, {"description"}, id="action"),
    pytest.param(RouteProcedureOptions, ProcedureContract, ROUTE_OWN, id="route procedure"),
]

# A value other than the default for every option of every set (a new option needs one here).
SAMPLES: dict[str, Any] = {
    "effect": "navigation",
    "input": {"type": "object", "properties": {"ids": {"type": "array", "items": {"type": "string"}}}},
    "output": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    "idempotent": True,
    "reversible": False,
    "confirmation": "required",
    "audit": "full",
    "meta": {"team": "ops"},
    "timeout": 2.5,
    "concurrency": Concurrency("capability"),
    "untrusted_output": True,
    "policies": ["business-hours"],
}


def taken_types(contract: type) -> dict[str, Any]:
    """What the contract's constructor takes for each field (``Checked[Given, Stored]``: Given)."""
    hints = get_type_hints(contract)
    return {
        f.name: get_args(hints[f.name])[0] if get_origin(hints[f.name]) is Checked else hints[f.name]
        for f in dataclasses.fields(contract)
        if f.init
    }


def plain(contract: Any) -> dict[str, Any]:
    """A contract's fields, schemas by their JSON Schema (a Schema compares by identity)."""
    return {
        f.name: (value.json_schema if isinstance(value, Schema) else value)
        for f in dataclasses.fields(contract)
        for value in [getattr(contract, f.name)]
    }


@pytest.mark.parametrize(("options", "contract", "own"), CASES)
def test_each_option_is_a_field_its_contract_takes_with_the_same_type(
    options: type, contract: type, own: set[str]
) -> None:
    declared = get_type_hints(options)
    taken = taken_types(contract)
    assert set(declared) == set(taken) - own  # no field left out, none made up
    for name, hint in declared.items():
        assert hint == taken[name], f"{options.__name__}.{name} is {hint}, the contract takes {taken[name]}"


@pytest.mark.parametrize(("options", "contract", "own"), CASES)
def test_every_option_has_a_sample_that_is_not_its_default(options: type, contract: type, own: set[str]) -> None:
    defaults = {f.name: f.default for f in dataclasses.fields(contract)}
    for name in get_type_hints(options):
        assert name in SAMPLES and SAMPLES[name] != defaults[name], name


def test_every_observation_option_reaches_the_contract_as_given() -> None:
    given = {name: SAMPLES[name] for name in get_type_hints(ObservationOptions)}

    class Panel(AgentComponent, type="options.panel", description="Options"):
        @observation("Count", **given)
        def count(self) -> int:
            return 0

    assert plain(Panel.contract.observations["count"]) == plain(ObservationContract("Count", **given))


def test_every_action_option_reaches_the_contract_as_given() -> None:
    given = {name: SAMPLES[name] for name in get_type_hints(ActionOptions)}

    class Panel(AgentComponent, type="options.actions", description="Options"):
        @action("Go", **given)
        def go(self, ids: list[str]) -> dict[str, int]:
            return {"n": len(ids)}

    built = plain(Panel.contract.actions["go"])
    assert built == plain(ActionContract("Go", **given))
    assert built["concurrency"] == Concurrency("capability") and built["timeout"] == 2.5


def test_an_option_left_out_takes_the_contracts_default() -> None:
    class Panel(AgentComponent, type="options.defaults", description="Defaults"):
        @observation("Count")
        def count(self) -> int:
            return 0

        @action("Go")
        def go(self) -> None: ...

        @action("Stop", concurrency=None)  # None meant the default before the options were shared
        def stop(self) -> None: ...

    go = Panel.contract.actions["go"]
    assert plain(go) == plain(ActionContract("Go", input=go.input))  # the input: from the method
    assert Panel.contract.actions["stop"].concurrency is DEFAULT_CONCURRENCY
    assert plain(Panel.contract.observations["count"]) == plain(ObservationContract("Count", output=int))


@pytest.mark.parametrize(
    ("decorator", "options", "contract", "overrides"),
    [
        pytest.param(observation, ObservationOptions, ObservationContract, {"output": None}, id="observation"),
        pytest.param(action, ActionOptions, ActionContract, {"input": None, "output": None}, id="action"),
    ],
)
def test_the_signature_names_each_option_with_its_default(
    decorator: Any, options: type, contract: type, overrides: dict[str, Any]
) -> None:
    """``**options`` would hide them from help() and inspect; the signature spells them out."""
    parameters = inspect.signature(decorator).parameters
    defaults = {f.name: f.default for f in dataclasses.fields(contract)}
    for name in get_type_hints(options):
        parameter = parameters[name]
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY, name
        assert parameter.default == overrides.get(name, defaults[name]), name
    assert list(parameters)[:4] == ["description", "name", "unavailable_reason", "policies"]
    assert not any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    text = pydoc.render_doc(decorator)
    assert all(f"{name}:" in text for name in get_type_hints(options))


def test_the_action_signature_shows_what_the_decorator_reads_from_the_method() -> None:
    parameters = inspect.signature(action).parameters
    # None: the parameters and the return annotation (not the contract's EMPTY_INPUT).
    assert parameters["input"].default is None and parameters["output"].default is None
    assert ActionContract("Go").input is EMPTY_INPUT
    assert parameters["concurrency"].default == Concurrency()


@pytest.mark.parametrize("decorator", [observation, action], ids=["observation", "action"])
def test_a_misspelt_option_is_named_with_the_one_meant(decorator: Any) -> None:
    with pytest.raises(TypeError) as caught:
        decorator("Go", untrusted_ouput=True)
    message = str(caught.value)
    assert "got unknown keyword 'untrusted_ouput' (did you mean 'untrusted_output'?)" in message
    assert "timeout=" in message and "name=" in message  # the accepted ones, options included


def test_checked_gives_the_default_and_leaves_the_value_to_the_instance() -> None:
    """Slotted (as the contracts are) or not, the stored value is read back as stored."""
    for slots in (True, False):

        @dataclasses.dataclass(frozen=True, slots=slots)
        class Declared:
            name: str
            size: Checked[str | int, int] = Checked(0)

            def __post_init__(self) -> None:
                object.__setattr__(self, "size", int(self.size))

        assert Declared("a").size == 0
        assert Declared("a", size="3").size == 3
        assert dataclasses.fields(Declared)[1].default == 0


def test_checked_with_no_default_is_a_required_field() -> None:
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'output'"):
        ObservationContract("Rows")
    assert dataclasses.fields(ObservationContract)[1].default is dataclasses.MISSING

